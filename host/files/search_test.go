package files

import (
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
