package files

import (
	"path"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzTerms: terms are non-empty, lower-case where case exists, valid UTF-8,
// and never stop words.
func FuzzTerms(f *testing.F) {
	f.Add("How is the BudgetSplit between HTTPServer providers?")
	f.Add("日本語 テキスト ÄÖÜ")
	f.Add("\xff\xfe")
	f.Fuzz(func(t *testing.T, s string) {
		for _, term := range Terms(s) {
			if term == "" || !utf8.ValidString(term) || stopwords[term] {
				t.Fatalf("bad term %q from %q", term, s)
			}
			if strings.ToLower(term) != term {
				t.Fatalf("term %q not lower-case", term)
			}
		}
	})
}

// FuzzParseFrameID: an accepted id names a relative, clean path that cannot
// leave the root, a valid line range, and re-parses identically from its
// canonical spelling.
func FuzzParseFrameID(f *testing.F) {
	f.Add("docs/a.md#L1-3")
	f.Add("../x#L1-2")
	f.Add("/etc/passwd#L1-2")
	f.Add("a#L3-1")
	f.Fuzz(func(t *testing.T, id string) {
		rel, a, b, ok := parseFrameID(id)
		if !ok {
			return
		}
		if a < 1 || b < a || rel == ".." || strings.HasPrefix(rel, "../") || strings.HasPrefix(rel, "/") || path.Clean(rel) != rel {
			t.Fatalf("accepted %q -> %q %d %d", id, rel, a, b)
		}
		r2, a2, b2, ok2 := parseFrameID(frameID(rel, a, b))
		if !ok2 || r2 != rel || a2 != a || b2 != b {
			t.Fatalf("canonical form of %q does not re-parse", id)
		}
	})
}
