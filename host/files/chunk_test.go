package files

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/ctxkit/ctxkit/host/files/internal/lex"
)

// checkChunks asserts the chunk invariants a user relies on: whole lines in
// order without overlap, within the token bound unless one line is longer,
// and none that is only whitespace, punctuation or a heading line.
func checkChunks(t *testing.T, name string, content []byte, chunks []Chunk) {
	t.Helper()
	lines := lex.SplitLines(content)
	prevEnd := 0
	for _, c := range chunks {
		if c.StartLine < 1 || c.EndLine < c.StartLine || c.EndLine > len(lines) || c.StartLine <= prevEnd {
			t.Fatalf("%s: chunk %d-%d out of order or range (prev end %d, %d lines)", name, c.StartLine, c.EndLine, prevEnd, len(lines))
		}
		prevEnd = c.EndLine
		if !hasWords([]byte(c.Text)) {
			t.Fatalf("%s: chunk %d-%d has no words: %q", name, c.StartLine, c.EndLine, c.Text)
		}
		if !isHTML(name) {
			if c.Start != lines[c.StartLine-1].Off || c.End != lines[c.EndLine-1].Off+lines[c.EndLine-1].Len || c.Text != string(content[c.Start:c.End]) {
				t.Fatalf("%s: chunk %d-%d is not its whole lines", name, c.StartLine, c.EndLine)
			}
			if c.EndLine > c.StartLine && len(c.Text) > maxChunkTokens*4 {
				t.Fatalf("%s: chunk %d-%d has %d bytes, over the bound", name, c.StartLine, c.EndLine, len(c.Text))
			}
		}
		if headingOnly(name, []byte(c.Text)) {
			t.Fatalf("%s: chunk %d-%d is only a heading", name, c.StartLine, c.EndLine)
		}
	}
}

// A '#' line inside fenced code is not a heading; sections start at real
// headings; a lone heading joins its first subsection.
func TestMarkdownSections(t *testing.T) {
	md := "# Guide\n\n## Install\n\nRun the installer and wait for it to finish before going on.\n\n```sh\n# a shell comment, not a heading\nmake install\n#\n```\n\nThen check the version it prints.\n\n## Configure\n\nEdit the file config.toml and set the listen address of the server.\n"
	cs := Split("guide.md", []byte(md))
	checkChunks(t, "guide.md", []byte(md), cs)
	if len(cs) != 2 {
		t.Fatalf("got %d chunks: %+v", len(cs), cs)
	}
	if cs[0].StartLine != 1 || !strings.Contains(cs[0].Text, "make install") || !strings.Contains(cs[0].Text, "Then check") {
		t.Errorf("first section %+v", cs[0])
	}
	if cs[1].Heading != "Configure" || cs[0].Heading != "Guide; Install" {
		t.Errorf("headings %q, %q", cs[0].Heading, cs[1].Heading)
	}
}

// A long section is split at paragraph boundaries into pieces of about
// equal size, none a fragment.
func TestLongSectionSplitsEvenly(t *testing.T) {
	var b strings.Builder
	b.WriteString("# Long\n\n")
	for i := range 30 {
		b.WriteString("This paragraph number " + strings.Repeat("word ", i%5+8) + "ends here.\n\n")
	}
	cs := Split("long.md", []byte(b.String()))
	checkChunks(t, "long.md", []byte(b.String()), cs)
	if len(cs) < 2 {
		t.Fatalf("not split: %d chunks", len(cs))
	}
	for _, c := range cs {
		if len(c.Text) < maxChunkTokens*4/3 {
			t.Errorf("fragment %d-%d of %d bytes", c.StartLine, c.EndLine, len(c.Text))
		}
		if !strings.HasSuffix(c.Text, "\n\n") && c.EndLine != cs[len(cs)-1].EndLine {
			t.Errorf("piece %d-%d does not end at a paragraph", c.StartLine, c.EndLine)
		}
	}
}

// A paragraph a little over the bound, with no blank line to cut at, is
// split into halves, preferring a line that ends a sentence, not filled to
// the bound with a line or two left over as a fragment of its own.
func TestParagraphWithoutCutsSplitsEvenly(t *testing.T) {
	for _, sentenceAt := range []int{-1, 4, 7} {
		var b strings.Builder
		b.WriteString("## Consent\n\n")
		for i := range 14 {
			line := "a wrapped line of running prose about consent receipts and journals"
			if i == sentenceAt {
				line += " ends."
			}
			b.WriteString(line + "\n")
		}
		src := []byte(b.String())
		cs := Split("consent.md", src)
		checkChunks(t, "consent.md", src, cs)
		if len(cs) != 2 {
			t.Fatalf("sentence at %d: got %d chunks, want 2", sentenceAt, len(cs))
		}
		if small, big := min(len(cs[0].Text), len(cs[1].Text)), max(len(cs[0].Text), len(cs[1].Text)); small*2 < big {
			t.Errorf("sentence at %d: uneven pieces of %d and %d bytes (lines %d-%d, %d-%d)", sentenceAt, len(cs[0].Text), len(cs[1].Text), cs[0].StartLine, cs[0].EndLine, cs[1].StartLine, cs[1].EndLine)
		}
		if sentenceAt >= 0 && cs[0].EndLine != sentenceAt+3 {
			t.Errorf("first piece ends at line %d, want %d (the line that ends a sentence)", cs[0].EndLine, sentenceAt+3)
		}
	}
}

// In a long numbered list, an item that fits a chunk is served whole, in
// one chunk, even after an item too long for one: pieces follow the items
// rather than equal shares of the section that cut later items in two.
func TestListItemsStayWhole(t *testing.T) {
	for _, sizes := range [][]int{{11, 26, 9, 9}, {6, 26, 9, 5, 8}, {4, 22, 8, 7}, {3, 40, 10, 10, 10}} {
		var b strings.Builder
		b.WriteString("## Steps\n\n")
		line := 1 + 2
		type span struct{ start, end int }
		var items []span
		for item, n := range sizes {
			items = append(items, span{line, line + n - 1})
			for i := range n {
				if i == 0 {
					b.WriteString(fmt.Sprintf("%d. **Step %d.** the first line of this step of the procedure\n", item+1, item+1))
				} else {
					b.WriteString("   and more words that carry on the step without a blank line\n")
				}
				line++
			}
		}
		src := []byte(b.String())
		cs := Split("steps.md", src)
		checkChunks(t, "steps.md", src, cs)
		for _, it := range items {
			if it.end-it.start+1 > 11 {
				continue // too long for one chunk
			}
			if !slices.ContainsFunc(cs, func(c Chunk) bool { return c.StartLine <= it.start && it.end <= c.EndLine }) {
				t.Errorf("items %v: the item at lines %d-%d is cut in two: %v", sizes, it.start, it.end, chunkSpans(cs))
			}
		}
	}
}

func chunkSpans(cs []Chunk) []string {
	var out []string
	for _, c := range cs {
		out = append(out, fmt.Sprintf("%d-%d", c.StartLine, c.EndLine))
	}
	return out
}

// Go declarations keep their doc comments; names are the symbol field.
func TestGoDeclarations(t *testing.T) {
	var b strings.Builder
	b.WriteString("// Package shop sells things.\npackage shop\n\nimport \"fmt\"\n\n")
	for _, n := range []string{"Buy", "Sell", "Refund"} {
		b.WriteString("// " + n + " does the " + n + " operation for a customer order and records it in the ledger.\n")
		b.WriteString("func (s *Shop) " + n + "(id int) error {\n")
		for i := range 12 {
			b.WriteString("\tfmt.Println(\"step\", id, " + strings.Repeat("1", i+1) + ")\n")
		}
		b.WriteString("\treturn nil\n}\n\n")
	}
	src := []byte(b.String())
	cs := Split("shop.go", src)
	checkChunks(t, "shop.go", src, cs)
	var heads []string
	for _, c := range cs {
		heads = append(heads, c.Heading)
		if strings.Contains(c.Text, "func (s *Shop)") && !strings.HasPrefix(strings.TrimSpace(c.Text), "//") {
			t.Errorf("declaration without its doc comment: %q", c.Text[:40])
		}
	}
	if got := strings.Join(heads, "|"); !strings.Contains(got, "Shop.Buy") || !strings.Contains(got, "Shop.Refund") {
		t.Errorf("headings %s", got)
	}
}

// HTML is served as text by its sections, with entities decoded and the
// source's line numbers.
func TestHTMLAsText(t *testing.T) {
	doc := "<html><head><style>h2 { color: red }</style></head><body>\n<h2 id=\"a\">Select &amp; choose</h2>\n<p>A <code>select</code> statement chooses which of a set of\npossible send or receive operations will proceed.</p>\n<pre>\nselect {\ncase x &lt;- c:\n}\n</pre>\n<h2>Other</h2>\n<p>Something else entirely, long enough to stand as its own section.</p>\n</body></html>\n"
	cs := Split("spec.html", []byte(doc))
	checkChunks(t, "spec.html", []byte(doc), cs)
	if len(cs) != 2 || cs[0].Heading != "Select & choose" || cs[0].StartLine > 2 || cs[0].EndLine != 9 {
		t.Fatalf("chunks %+v", cs)
	}
	if strings.Contains(cs[0].Text, "<") && !strings.Contains(cs[0].Text, "x <- c") || strings.Contains(cs[0].Text, "<p>") || strings.Contains(cs[0].Text, "color") {
		t.Errorf("text %q", cs[0].Text)
	}
}

// Other code splits at top-level definitions.
func TestCodeBlocks(t *testing.T) {
	py := "import os\n\n\ndef load(path):\n    \"\"\"Load the settings file from path and return them.\"\"\"\n    with open(path) as f:\n        return f.read()\n\n\ndef save(path, data):\n    \"\"\"Save the settings data to path, replacing the file.\"\"\"\n    with open(path, 'w') as f:\n        f.write(data)\n"
	cs := Split("settings.py", []byte(py))
	checkChunks(t, "settings.py", []byte(py), cs)
	if len(cs) != 2 || !strings.Contains(cs[1].Heading, "def save") {
		t.Fatalf("chunks %+v", cs)
	}
}

// FuzzSplit: any content, under any kind of name, gives chunks that keep
// the invariants.
func FuzzSplit(f *testing.F) {
	f.Add("a.md", "# T\n\n```\n# x\n```\ntext\n")
	f.Add("a.go", "package a\n\n// F f.\nfunc F() {}\n")
	f.Add("a.html", "<h1>T</h1><p>a &amp; b</p>\n<pre>x</pre>")
	f.Add("a.py", "def f():\n    pass\n\n\nclass C:\n    x = 1\n")
	f.Add("a.txt", "para one\n\npara two\n")
	f.Fuzz(func(t *testing.T, name, content string) {
		checkChunks(t, name, []byte(content), Split(name, []byte(content)))
	})
}
