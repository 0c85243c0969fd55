package files

// WriteFile is writeFile for the package's external tests, so that both
// kinds of test write their trees with one helper.
var WriteFile = writeFile

// Terms splits text into the index's terms, the same way for queries and
// documents: runs of letters, digits and underscores are words; a word made
// of several parts (camelCase, snake_case, HTTPServer) yields each part and
// also the whole identifier (lower-cased, underscores dropped), so an exact
// identifier in a query matches more strongly than its parts; parts are
// lower-cased, English stop words dropped and the rest stemmed (Porter).
func Terms(text string) []string {
	var out []string
	tk := newTokenizer()
	tk.each([]byte(text), func(t []byte) { out = append(out, string(t)) })
	return out
}
