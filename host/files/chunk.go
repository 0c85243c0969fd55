package files

import (
	"bytes"
	"math"
	"path"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/ctxkit/ctxkit/frame"
	"github.com/ctxkit/ctxkit/host/files/internal/lex"
)

// Chunk bounds, in budget tokens (frame.BudgetTokens: a quarter of the
// bytes). A chunk is never cut inside a line, so one very long line can
// exceed maxChunkTokens; every other chunk stays within it.
const (
	maxChunkTokens = 192 // a section or declaration longer than this is split
	minChunkTokens = 24  // a unit shorter than this joins a neighbour
	maxHeadingLen  = 160 // bytes of heading/symbol text kept per chunk
)

// Chunk is one retrievable piece of a document: whole lines of it, a
// Markdown or HTML section, a Go declaration with its doc comment, or a
// block of other code or text.
type Chunk struct {
	StartLine int        // first line, 1-based
	EndLine   int        // last line, inclusive
	Start     int        // byte offset of StartLine in the content
	End       int        // byte offset just past EndLine (its newline included)
	Kind      frame.Kind // frame.KindDoc for prose, frame.KindSnippet for code
	// Heading names what the chunk is part of: its section's heading
	// ("Backoff") or the declarations it holds ("Server.Shutdown").
	// It is ranked as a field of its own.
	Heading string
	// Text is what is indexed and served: the lines themselves, or for HTML
	// their text with tags stripped and entities decoded.
	Text string
}

// fileKind returns the frame kind of a file by its name: doc for prose
// (Markdown, reStructuredText, AsciiDoc, plain text, HTML, names without an
// extension such as README), snippet for everything else.
func fileKind(name string) frame.Kind {
	switch strings.ToLower(path.Ext(name)) {
	case ".md", ".markdown", ".txt", ".rst", ".adoc", ".html", ".htm", "":
		return frame.KindDoc
	}
	return frame.KindSnippet
}

// Split cuts a document's content (UTF-8) into chunks that follow its
// structure, chosen by the name's extension: Markdown by heading sections
// (headings count only outside fenced code), long sections split at
// paragraph boundaries; Go by top-level declarations with their doc
// comments; HTML as text by its h1–h6 sections; other code by top-level
// definitions and blank-line blocks; other text by paragraphs. Chunks are
// whole lines, bounded by maxChunkTokens, and none is only whitespace,
// punctuation or a heading line.
func Split(name string, content []byte) []Chunk {
	lines := lex.SplitLines(content)
	if len(lines) == 0 {
		return nil
	}
	kind := fileKind(name)
	var units []unit
	text := content
	switch strings.ToLower(path.Ext(name)) {
	case ".md", ".markdown":
		units = markdownUnits(content, lines)
	case ".go":
		units = goUnits(name, content, lines)
	case ".html", ".htm":
		var heads []heading
		text, heads = htmlText(content)
		lines = lex.SplitLines(text)
		units = sectionUnits(text, lines, heads, nil)
	default:
		units = blockUnits(content, lines, kind == frame.KindSnippet)
	}
	return packUnits(name, content, text, lines, units, kind)
}

// unit is a structural piece before packing: lines [start, end) (0-based),
// the heading it belongs to, and which of its lines may end a split piece.
type unit struct {
	start, end int
	heading    string
	// cut[i] reports that a piece may end after line i (a blank line outside
	// fenced code); nil means any line boundary.
	cut   []bool
	alone bool // a section start: merge only forward into it, never back
}

// lineSpan is one line of a file: its offset and length, its LF included.
type lineSpan = lex.Line

func lineText(data []byte, l lineSpan) []byte { return data[l.Off : l.Off+l.Len] }

// spanBytes is the size of lines [a, b), LFs included.
func spanBytes(lines []lineSpan, a, b int) int { return lines[b-1].Off + lines[b-1].Len - lines[a].Off }

func isBlank(b []byte) bool { return len(bytes.TrimSpace(b)) == 0 }

// hasWords reports whether b holds at least one letter or digit.
func hasWords(b []byte) bool {
	for len(b) > 0 {
		r, n := utf8.DecodeRune(b)
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			return true
		}
		b = b[n:]
	}
	return false
}

// blankCuts marks the blank lines of [start, end) as cut points.
func blankCuts(data []byte, lines []lineSpan, start, end int) []bool {
	cut := make([]bool, end-start)
	for i := start; i < end; i++ {
		cut[i-start] = isBlank(lineText(data, lines[i]))
	}
	return cut
}

// blockUnits splits text at blank lines; for code, a block starts where a
// line at column 0 follows a blank line (a top-level definition), and its
// first line names it.
func blockUnits(data []byte, lines []lineSpan, code bool) []unit {
	var units []unit
	start := 0
	prevBlank := true
	for i, l := range lines {
		t := lineText(data, l)
		blank := isBlank(t)
		top := !blank && prevBlank && i > start && (!code || (t[0] != ' ' && t[0] != '\t' && t[0] != '}' && t[0] != ')' && t[0] != ']'))
		if top {
			units = append(units, unit{start: start, end: i})
			start = i
		}
		prevBlank = blank
	}
	units = append(units, unit{start: start, end: len(lines)})
	for k := range units {
		u := &units[k]
		u.cut = blankCuts(data, lines, u.start, u.end)
		if code {
			u.heading = defName(data, lines, u.start, u.end)
		}
	}
	return units
}

// defName returns the first line of a code block that is not a comment,
// trimmed: the definition's signature, used as the chunk's symbol field.
func defName(data []byte, lines []lineSpan, start, end int) string {
	for i := start; i < end; i++ {
		t := strings.TrimSpace(string(lineText(data, lines[i])))
		if t == "" || strings.HasPrefix(t, "//") || strings.HasPrefix(t, "#") || strings.HasPrefix(t, "/*") || strings.HasPrefix(t, "*") || strings.HasPrefix(t, "--") {
			continue
		}
		if !looksLikeDefinition(t) {
			return ""
		}
		return clip(strings.TrimRight(t, "{:( "))
	}
	return ""
}

// definitionWords start a named definition in common languages.
var definitionWords = map[string]bool{
	"func": true, "function": true, "def": true, "class": true, "fn": true, "struct": true,
	"interface": true, "type": true, "enum": true, "trait": true, "impl": true, "module": true,
	"sub": true, "proc": true, "macro": true, "template": true, "union": true, "namespace": true,
	"object": true, "record": true, "export": true, "pub": true, "static": true, "public": true,
	"private": true, "protected": true, "async": true, "const": true, "let": true, "var": true,
}

// looksLikeDefinition reports a line whose first word starts a definition.
func looksLikeDefinition(line string) bool {
	word, _, _ := strings.Cut(line, " ")
	return definitionWords[word]
}

func clip(s string) string {
	if len(s) <= maxHeadingLen {
		return s
	}
	cut := maxHeadingLen
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut]
}

// heading is a section start: its line (0-based), level and text.
type heading struct {
	line  int
	level int
	text  string
}

// sectionUnits makes one unit per section: from a heading to the next,
// named by its own heading (a parent's words would otherwise weigh in every
// subsection, so that a document's title pulls all of it up). fenced, if non-nil, marks the lines
// inside fenced code (no cut there).
func sectionUnits(data []byte, lines []lineSpan, heads []heading, fenced []bool) []unit {
	var units []unit
	var stack []heading
	path := func() string {
		if len(stack) == 0 {
			return ""
		}
		return clip(stack[len(stack)-1].text)
	}
	add := func(start, end int, head string, alone bool) {
		if end <= start {
			return
		}
		cut := blankCuts(data, lines, start, end)
		for i := range cut {
			// A list item starts a paragraph of its own.
			if !cut[i] && start+i+1 < end && startsListItem(lineText(data, lines[start+i+1])) {
				cut[i] = true
			}
			if fenced != nil && fenced[start+i] {
				cut[i] = false
			}
		}
		units = append(units, unit{start: start, end: end, heading: head, cut: cut, alone: alone})
	}
	prev := 0
	for _, h := range heads {
		add(prev, h.line, path(), false)
		for len(stack) > 0 && stack[len(stack)-1].level >= h.level {
			stack = stack[:len(stack)-1]
		}
		stack = append(stack, h)
		prev = h.line
	}
	add(prev, len(lines), path(), false)
	// Every unit that begins at a heading line is a section start.
	hi := 0
	for k := range units {
		for hi < len(heads) && heads[hi].line < units[k].start {
			hi++
		}
		units[k].alone = hi < len(heads) && heads[hi].line == units[k].start
	}
	return units
}

// startsListItem reports a Markdown list item line: "- ", "* ", "+ " or
// "1. " after at most three spaces.
func startsListItem(b []byte) bool {
	t := bytes.TrimLeft(b, " ")
	if len(b)-len(t) > 3 || len(t) < 2 {
		return false
	}
	if (t[0] == '-' || t[0] == '*' || t[0] == '+') && t[1] == ' ' {
		return true
	}
	i := 0
	for i < len(t) && t[i] >= '0' && t[i] <= '9' {
		i++
	}
	return i > 0 && i+1 < len(t) && (t[i] == '.' || t[i] == ')') && t[i+1] == ' '
}

// markdownUnits finds ATX (#) and setext (=== / ---) headings outside fenced
// code and cuts the document into their sections.
func markdownUnits(data []byte, lines []lineSpan) []unit {
	fenced := make([]bool, len(lines))
	var heads []heading
	fence := ""
	for i, l := range lines {
		t := bytes.TrimRight(lineText(data, l), "\r\n")
		trim := bytes.TrimLeft(t, " ")
		indent := len(t) - len(trim)
		if fence != "" {
			fenced[i] = true
			if indent < 4 && bytes.HasPrefix(trim, []byte(fence)) && isBlank(bytes.TrimLeft(trim, fence[:1])) {
				fence = ""
			}
			continue
		}
		if indent < 4 && (bytes.HasPrefix(trim, []byte("```")) || bytes.HasPrefix(trim, []byte("~~~"))) {
			n := 0
			for n < len(trim) && trim[n] == trim[0] {
				n++
			}
			fence = string(trim[:n])
			fenced[i] = true
			continue
		}
		if indent < 4 && len(trim) > 0 && trim[0] == '#' {
			level := 0
			for level < len(trim) && trim[level] == '#' {
				level++
			}
			if level <= 6 && (level == len(trim) || trim[level] == ' ' || trim[level] == '\t') {
				text := strings.TrimSpace(strings.TrimRight(strings.TrimSpace(string(trim[level:])), "#"))
				heads = append(heads, heading{line: i, level: level, text: text})
				continue
			}
		}
		if i > 0 && indent < 4 && len(trim) > 0 && (trim[0] == '=' || trim[0] == '-') && isBlank(bytes.Trim(trim, string(trim[:1]))) && !fenced[i-1] {
			prev := bytes.TrimSpace(lineText(data, lines[i-1]))
			startsPara := i == 1 || isBlank(lineText(data, lines[i-2]))
			if len(prev) > 0 && startsPara && prev[0] != '#' && prev[0] != '-' && prev[0] != '*' && (len(heads) == 0 || heads[len(heads)-1].line != i-1) {
				level := 1
				if trim[0] == '-' {
					level = 2
				}
				heads = append(heads, heading{line: i - 1, level: level, text: string(prev)})
			}
		}
	}
	return sectionUnits(data, lines, heads, fenced)
}

// packUnits turns units into chunks: small units join a neighbour, large
// ones are split at their cut points, and chunks with no words, or only a
// heading line, are left out. src holds the bytes the line spans index
// (the raw content) and text the bytes served (the same, or HTML's text).
func packUnits(name string, raw, text []byte, lines []lineSpan, units []unit, kind frame.Kind) []Chunk {
	maxBytes := maxChunkTokens * 4
	minBytes := minChunkTokens * 4
	size := func(u unit) int {
		return spanBytes(lines, u.start, u.end)
	}
	// Join small units forward (a heading-only section into its first
	// subsection, a run of small declarations into one chunk) while the
	// result stays within bounds; a section start never joins backwards.
	var merged []unit
	for _, u := range units {
		if u.end <= u.start {
			continue
		}
		if n := len(merged); n > 0 {
			last := &merged[n-1]
			small := size(*last) < minBytes || (!u.alone && size(u) < minBytes)
			if small && size(*last)+size(u) <= maxBytes && (!u.alone || size(*last) < minBytes) {
				cut := cutsOf(*last)
				for range u.start - last.end {
					cut = append(cut, true) // blank lines between declarations
				}
				last.cut = append(cut, cutsOf(u)...)
				last.end = u.end
				last.heading = joinHeading(last.heading, u.heading)
				continue
			}
		}
		merged = append(merged, u)
	}
	var out []Chunk
	for _, u := range merged {
		var pieces []unit
		if kind == frame.KindDoc {
			pieces = splitProse(u, text, lines, maxBytes, minBytes)
		} else {
			pieces = splitEven(u, lines, maxBytes, minBytes)
		}
		for _, p := range pieces {
			served := text[lines[p.start].Off : lines[p.end-1].Off+lines[p.end-1].Len]
			if !hasWords(served) || headingOnly(name, served) {
				continue
			}
			c := Chunk{
				StartLine: p.start + 1,
				EndLine:   p.end,
				Start:     lines[p.start].Off,
				End:       lines[p.end-1].Off + lines[p.end-1].Len,
				Kind:      kind,
				Heading:   u.heading,
				Text:      string(served),
			}
			if !sameBytes(text, raw) {
				c.Text = collapseBlank(served)
			}
			out = append(out, c)
		}
	}
	return out
}

// cutsOf returns u's cut points, explicit: nil means every line.
func cutsOf(u unit) []bool {
	if u.cut != nil {
		return u.cut
	}
	cut := make([]bool, u.end-u.start)
	for i := range cut {
		cut[i] = true
	}
	return cut
}

// sameBytes reports whether a and b are the same slice (not just equal).
func sameBytes(a, b []byte) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}

// joinHeading names a merged unit after both parts, without repeating a
// shared section path.
func joinHeading(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "", a == b, strings.HasPrefix(b, a+" > "):
		if len(b) > len(a) {
			return clip(b)
		}
		return a
	}
	return clip(a + "; " + b)
}

// headingOnly reports a Markdown chunk that is one heading line.
func headingOnly(name string, b []byte) bool {
	t := bytes.TrimSpace(b)
	if bytes.IndexByte(t, '\n') >= 0 {
		return false
	}
	ext := strings.ToLower(path.Ext(name))
	return (ext == ".md" || ext == ".markdown") && len(t) > 0 && t[0] == '#'
}

// splitProse cuts a unit of prose longer than maxBytes into pieces within
// maxBytes, choosing the ends that cost least over the whole unit (as a
// paragraph is broken into lines): each piece costs one, an end at a cut
// point (a blank line or a list item) nothing more, an end at a line that
// ends a sentence a little, an end at any other line more than a piece, so
// that a piece is added rather than an item broken; and a piece costs more
// the emptier it is, much more under minBytes. So pieces follow the text's
// own boundaries where they can, are of about equal size where they
// cannot, and none is a fragment left over at the end. A single line is
// never cut.
func splitProse(u unit, text []byte, lines []lineSpan, maxBytes, minBytes int) []unit {
	size := func(a, b int) int { return spanBytes(lines, a, b) }
	if size(u.start, u.end) <= maxBytes {
		return []unit{{start: u.start, end: u.end, heading: u.heading}}
	}
	n := u.end - u.start
	// cost[k] is the least cost of pieces covering the unit's first k
	// lines, the last of them starting at line from[k].
	cost := make([]float64, n+1)
	from := make([]int, n+1)
	for k := 1; k <= n; k++ {
		cost[k] = math.Inf(1)
		end := u.start + k
		brk := endCost(u, text, lines, end)
		for i := k - 1; i >= 0; i-- {
			sz := size(u.start+i, end)
			if sz > maxBytes && i < k-1 {
				break
			}
			if c := cost[i] + 1 + brk + fillCost(sz, maxBytes, minBytes); c < cost[k] {
				cost[k], from[k] = c, i
			}
		}
	}
	var out []unit
	for k := n; k > 0; k = from[k] {
		out = append(out, unit{start: u.start + from[k], end: u.start + k, heading: u.heading})
	}
	slices.Reverse(out)
	return out
}

// splitEven cuts a unit of code longer than maxBytes into pieces of about
// equal size: each piece ends at the cut point (a blank line) nearest its
// share of the unit that keeps it within maxBytes, or, with none, at the
// last line that does. In code a blank line is all the structure a body
// has and one is as good as another, so pieces are kept few and full; the
// relevance set measured prose's splitUnit on code as no better and its
// held-out code questions as worse. A single line is never cut.
func splitEven(u unit, lines []lineSpan, maxBytes, minBytes int) []unit {
	size := func(a, b int) int { return spanBytes(lines, a, b) }
	total := size(u.start, u.end)
	if total <= maxBytes {
		return []unit{{start: u.start, end: u.end, heading: u.heading}}
	}
	var out []unit
	start := u.start
	for start < u.end {
		left := size(start, u.end)
		if left <= maxBytes {
			out = append(out, unit{start: start, end: u.end, heading: u.heading})
			break
		}
		k := (left + maxBytes - 1) / maxBytes // pieces still needed
		target := left / k
		best, bestDist, lastFit := -1, 0, start+1
		for end := start + 1; end < u.end; end++ {
			sz := size(start, end)
			if sz > maxBytes {
				break
			}
			lastFit = end
			if sz < minBytes || (u.cut != nil && !u.cut[end-1-u.start]) || size(end, u.end) > (k-1)*maxBytes {
				continue
			}
			if d := abs(sz - target); best < 0 || d < bestDist {
				best, bestDist = end, d
			}
		}
		if best < 0 {
			best = lastFit
		}
		out = append(out, unit{start: start, end: best, heading: u.heading})
		start = best
	}
	return out
}

// endCost is what ending a piece before line end adds: nothing at the
// unit's end or a cut point, a little after a line that ends a sentence or
// a statement, and more after any other line.
func endCost(u unit, text []byte, lines []lineSpan, end int) float64 {
	switch {
	case end == u.end || u.cut == nil || u.cut[end-1-u.start]:
		return 0
	case endsSentence(lineText(text, lines[end-1])):
		return 0.5
	}
	return 2
}

// fillCost grows as a piece of sz bytes falls short of maxBytes, so that
// pieces come out of about equal size, and steeply under minBytes.
func fillCost(sz, maxBytes, minBytes int) float64 {
	short := max(0, 1-float64(sz)/float64(maxBytes))
	c := short * short
	if sz < minBytes {
		c += 4
	}
	return c
}

// endsSentence reports a line whose last word ends a sentence, a clause
// or a statement: its last character, after closing quotes, brackets and
// emphasis, is one of . ! ? : ; or }.
func endsSentence(line []byte) bool {
	t := bytes.TrimRight(line, " \t\r\n)]\"'`*_")
	return len(t) > 0 && bytes.IndexByte([]byte(".!?:;}"), t[len(t)-1]) >= 0
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// collapseBlank trims trailing space from each line and folds runs of blank
// lines into one, for text made from HTML.
func collapseBlank(b []byte) string {
	var sb strings.Builder
	blank := 0
	for _, ln := range bytes.Split(b, []byte("\n")) {
		ln = bytes.TrimRight(ln, " \t\r")
		if len(ln) == 0 {
			blank++
			continue
		}
		if sb.Len() > 0 {
			sb.WriteByte('\n')
			if blank > 0 {
				sb.WriteByte('\n')
			}
		}
		blank = 0
		sb.Write(ln)
	}
	if sb.Len() > 0 {
		sb.WriteByte('\n')
	}
	return sb.String()
}
