package files

import (
	"fmt"
	"strings"
	"testing"

	"github.com/ctxkit/ctxkit/frame"
)

// filler is prose that shares no word with the tests' query words.
func filler(n int) string {
	var b strings.Builder
	for i := range n {
		b.WriteString("The harbour lights were dim that evening and ")
		if i%8 == 7 {
			b.WriteString("the gulls slept.\n\n")
		}
	}
	return b.String()
}

// A chunk shorter than the average gets no length bonus: two sections
// that use the query word once, one a single line and one a paragraph
// (both under the average, which a long third document raises), score the
// same.
func TestShortChunkGetsNoLengthBonus(t *testing.T) {
	ix := NewIndex()
	ix.Add(Document{Path: "short.md", Content: []byte("# One\n\nzeta\n")})
	ix.Add(Document{Path: "longer.md", Content: []byte("# Two\n\nzeta and some words that pad the line\n")})
	ix.Add(Document{Path: "long.md", Content: []byte("# Three\n\n" + filler(40))})
	wantTwoEqualHits(t, ix.Search("zeta", 0))
}

// wantTwoEqualHits fails t unless hits are two of the same score.
func wantTwoEqualHits(t *testing.T, hits []Hit) {
	t.Helper()
	if len(hits) != 2 {
		t.Fatalf("got %d hits, want 2: %+v", len(hits), hits)
	}
	if hits[0].Score != hits[1].Score {
		t.Errorf("%s scores %.4f, %s %.4f: want equal", hits[0].Path, hits[0].Score, hits[1].Path, hits[1].Score)
	}
}

// A chunk in a file that matches the query in several places ranks above
// an equal chunk in a file that matches once (file evidence), whatever
// the order the files were added in.
func TestFileEvidenceLiftsChunksOfMatchingFiles(t *testing.T) {
	// Sections long enough not to be merged into one chunk.
	body := "kappa\n\n" + filler(12)
	ix := NewIndex()
	ix.Add(Document{Path: "once.md", Content: []byte("# Kappa\n\n" + body)})
	ix.Add(Document{Path: "often.md", Content: []byte("# Kappa\n\n" + body + "# Other\n\n" + body + "# Third\n\n" + body)})
	hits := ix.Search("kappa", 0)
	if len(hits) != 4 {
		t.Fatalf("got %d hits, want 4", len(hits))
	}
	if hits[0].Path != "often.md" || hits[0].Chunk.Heading != "Kappa" {
		t.Errorf("first hit %s %q, want often.md's Kappa section", hits[0].Path, hits[0].Chunk.Heading)
	}
	var once float64
	for _, h := range hits {
		if h.Path == "once.md" {
			once = h.Score
		}
	}
	if once >= hits[0].Score {
		t.Errorf("once.md scores %.4f, not below often.md's %.4f", once, hits[0].Score)
	}
}

// The later parts of one section rank at repeatBy of their own score, the
// section's best part and other sections' chunks at theirs.
func TestLaterPartsOfASectionAreDemoted(t *testing.T) {
	var long strings.Builder
	long.WriteString("# Omega\n\n")
	for range 6 {
		long.WriteString("omega " + filler(8))
	}
	ix := NewIndex()
	ix.Add(Document{Path: "long.md", Content: []byte(long.String())})
	ix.Add(Document{Path: "other.md", Content: []byte("# Other\n\nomega once here\n")})
	raw := map[uint32]float64{}
	for _, r := range ix.search("omega") {
		raw[r.chunk] = r.score
	}
	p := New(ix)
	cands, _ := p.rank(&frame.Query{Goal: "omega"})
	parts, demoted := 0, 0
	for _, c := range cands {
		s := ix.segs[c.seg]
		ch := s.chunk(c.chunk)
		if s.str(ch.headOff, ch.headN) == "Omega" {
			parts++
		}
		switch {
		case float64(c.score) == float64(float32(raw[c.chunk])):
		case float64(c.score) == float64(float32(raw[c.chunk])*repeatBy):
			demoted++
		default:
			t.Errorf("chunk %d scores %.4f, raw %.4f", c.chunk, c.score, raw[c.chunk])
		}
	}
	if parts < 3 {
		t.Fatalf("the long section made %d chunks, want at least 3", parts)
	}
	if demoted != parts-1 {
		t.Errorf("%d chunks demoted, want %d (every part of Omega but its best)", demoted, parts-1)
	}
}

// Each prior ranks the chunk it weighs below the same chunk without it:
// the two documents differ only in what the prior reads (their heads have
// the same length), and the weighed one's path sorts first, so it would
// win the tie without the prior.
func TestPriorsRankLower(t *testing.T) {
	duration := "\n\n// Package p parses durations.\npackage p\n\n// ParseDuration parses a duration string such as 1h30m.\nfunc ParseDuration(s string) {}\n"
	readAll := "package p\n\n// ReadAll reads from r until an error or EOF.\n//\n// %s\nfunc ReadAll(r io.Reader) ([]byte, error)\n"
	sequencer := "\n\n// Sequencer orders the results of concurrent jobs.\nfunc Sequencer() {}\n"
	for _, c := range []struct {
		prior, query  string
		lower, higher Document
	}{
		{"off by default", "parse a duration such as 1h30m",
			Document{Path: "a/v2/parse.go", Content: []byte("//go:build goexperiment.v2" + duration)},
			Document{Path: "b/parse.go", Content: []byte("// a comment of the length" + duration)}},
		{"deprecated", "read everything from a reader until eof",
			Document{Path: "a/ioutil.go", Content: []byte(fmt.Sprintf(readAll, "Deprecated: see the io package."))},
			Document{Path: "b/io.go", Content: []byte(fmt.Sprintf(readAll, "Note well: see the io package."))}},
		{"command", "order the results of concurrent jobs",
			Document{Path: "a/cmd.go", Content: []byte("package main" + sequencer)},
			Document{Path: "b/lib.go", Content: []byte("package libx" + sequencer)}},
	} {
		ix := NewIndex()
		ix.Add(c.lower)
		ix.Add(c.higher)
		if hits := ix.Search(c.query, 0); len(hits) < 2 || hits[0].Path != c.higher.Path || hits[1].Score >= hits[0].Score*0.7 {
			t.Errorf("%s: hits %+v, want %s first and the other at the prior's share", c.prior, hits, c.higher.Path)
		}
	}
	for _, c := range []struct {
		text string
		want bool
	}{
		{"// Deprecated: use X.\nfunc F()", true},
		{"// F does.\n//\n// Deprecated: use X.\nfunc F()", true},
		{"type T struct {\n\t// Deprecated: use Y.\n\tX int\n}", false},
		{"// F is not Deprecated: at all.\nfunc F()", false},
	} {
		if got := deprecated(c.text); got != c.want {
			t.Errorf("deprecated(%q) = %v", c.text, got)
		}
	}
}
