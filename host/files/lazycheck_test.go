package files

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/ctxkit/ctxkit/frame"
	"github.com/ctxkit/ctxkit/internal/syncbuf"
	"github.com/ctxkit/ctxkit/wire"
)

// lazyTree writes a tree whose store spans many blocks in each of its
// sections: the first file (in walk order) holds the answer, every chunk
// the word "common".
func lazyTree(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	var b strings.Builder
	for f := range 400 {
		b.Reset()
		for s := range 8 {
			fmt.Fprintf(&b, "# Section %d of note %d about the common subject of weather station number %d\n\n", s, f, f*8+s)
			fmt.Fprintf(&b, "common words w%dx%d v%dy%d u%dz%d and some filler text about the weather.\n\n", f, s, s, f, f+s, f*s)
		}
		name := fmt.Sprintf("n%03d.md", f)
		if f == 0 {
			name = "a-answer.md"
			b.WriteString("# Zygomorphic answer\n\nthe zygomorphic answer is forty-two and common\n")
		}
		writeFile(t, dir, name, b.String())
	}
	return dir
}

// A large store is checked in part at open and the rest as queries read
// it: a flipped byte in a section every query reads (header, contents,
// term and postings tables, block table) is found by Build, which
// rebuilds the store; one in the chunk records, strings or postings that
// a query reads is found by that query, which opens the store again
// checked whole (so rebuilt, with a message) and answers from it, as it
// would have from an intact store. Nothing corrupt is served.
func TestLazyCheckFindsEveryCorruptSection(t *testing.T) {
	dir, store := lazyStore(t)
	query := lazyQuery()
	answer := func(p *Provider) string {
		t.Helper()
		res, err := p.Query(context.Background(), query)
		if err != nil {
			t.Fatalf("query: %v", err)
		}
		var out []string
		for _, f := range res.Frames {
			out = append(out, f.ID+"\n"+f.Content)
		}
		return strings.Join(out, "\n--\n")
	}
	open := func() (*Index, *syncbuf.Buffer) {
		t.Helper()
		var log syncbuf.Buffer
		ix, err := Build(context.Background(), dir, &IndexOptions{Store: store, Log: &log})
		if err != nil {
			t.Fatal(err)
		}
		return ix, &log
	}
	ix, _ := open()
	want := answer(New(ix))
	ix.Close()
	if !strings.Contains(want, "forty-two") {
		t.Fatalf("intact store answers %q", want)
	}
	// Where the query's reads fall in the intact image.
	clean, seg := storeSegment(t, store, true)
	post := func(term string) int {
		i := sort.Search(seg.nTerms, func(i int) bool { return bytes.Compare(seg.term(i), []byte(term)) >= 0 })
		if i >= seg.nTerms || string(seg.term(i)) != term {
			t.Fatalf("no term %q", term)
		}
		a := seg.postBytes + int(binary.LittleEndian.Uint32(seg.data[seg.postIdx+4*i:]))
		b := seg.postBytes + int(binary.LittleEndian.Uint32(seg.data[seg.postIdx+4*i+4:]))
		return (a + b) / 2
	}
	answerChunk := answerHeadingChunk(t, seg)
	cases := []struct {
		section string
		off     int
		lazy    bool // found by the query, not by Build
	}{
		{"header", 8 + 4*3, false},
		{"contents", (headerSize + seg.chunkOff) / 2, false},
		{"term offsets", (seg.termIdx + seg.termBytes) / 2, false},
		{"terms", (seg.termBytes + seg.postIdx) / 2, false},
		{"postings offsets", (seg.postIdx + seg.postBytes) / 2, false},
		{"block table", seg.tableOff + 4, false},
		{"chunk records", chunkRecordsMiddle(seg), true},
		{"strings", seg.strOff + int(answerChunk.headOff) + 2, true},
		{"postings", post("zygomorph"), true},
	}
	for _, c := range cases {
		t.Run(c.section, func(t *testing.T) {
			// The flipped byte must lie in a block of its own section
			// alone for the lazy cases: else Build would find it.
			if lo, hi := blockBounds(c.off, seg.tableOff); c.lazy && !(lo >= seg.chunkOff && hi <= seg.termIdx || lo >= seg.postBytes) {
				t.Fatalf("offset %d: block [%d, %d) is checked at open", c.off, lo, hi)
			}
			data := bytes.Clone(clean)
			data[c.off] ^= 0x5A
			if err := os.WriteFile(store, data, 0o600); err != nil {
				t.Fatal(err)
			}
			os.Remove(deltaPath(store))
			ix, log := open()
			st := ix.Stats().State
			switch {
			case !c.lazy && (st != StateRebuilt || !strings.Contains(log.String(), "corrupt")):
				t.Fatalf("Build: state %s, log %q; want rebuilt as corrupt", st, log)
			case c.lazy && st != StateFresh:
				t.Fatalf("Build: state %s, log %q; want the flip found by the query", st, log)
			}
			p := New(ix)
			if got := answer(p); got != want {
				t.Errorf("answer from the corrupt store:\n%s\nwant\n%s", got, want)
			}
			if c.lazy {
				if msg := log.String(); !strings.Contains(msg, "failed a check") || !strings.Contains(msg, "rebuilding") {
					t.Errorf("log %q does not say the store failed and was rebuilt", msg)
				}
				if st := p.Indexes()[0].Stats().State; st != StateRebuilt {
					t.Errorf("index after the query: %s, want rebuilt", st)
				}
			}
			p.Indexes()[0].Close()
			// The store on disk is sound again.
			ix, log = open()
			defer ix.Close()
			if st := ix.Stats().State; st != StateFresh || log.String() != "" {
				t.Errorf("next Build: state %s, log %q", st, log)
			}
			if got := answer(New(ix)); got != want || ix.corrupt() != nil {
				t.Errorf("next answer %q (corrupt: %v)", got, ix.corrupt())
			}
		})
	}
}

// blockBounds returns the block of the image that holds offset off.
func blockBounds(off, tableOff int) (lo, hi int) {
	lo = headerSize + (off-headerSize)>>blockShift<<blockShift
	return lo, min(lo+blockSize, tableOff)
}

// lazyQuery is the query most lazy-check tests ask of lazyTree: its
// answer is the first file, and every chunk matches "common".
func lazyQuery() *frame.Query {
	return &frame.Query{Goal: "zygomorphic common answer", MaxFrames: 3, MaxTokens: 400}
}

// lazyStore turns the lazy check on for every store for the rest of t and
// returns lazyTree's root and a store path for it in a directory of its
// own.
func lazyStore(t *testing.T) (dir, store string) {
	t.Helper()
	setForTest(t, &lazyCheckMin, 0)
	return lazyTree(t), filepath.Join(t.TempDir(), "s.idx")
}

// buildOn builds root on store and returns the index, open.
func buildOn(t *testing.T, root, store string) *Index {
	t.Helper()
	ix, err := Build(context.Background(), root, &IndexOptions{Store: store})
	if err != nil {
		t.Fatal(err)
	}
	return ix
}

// buildIntact builds root on store and returns the index, open, and its
// answer to lazyQuery, which must have frames.
func buildIntact(t *testing.T, root, store string) (*Index, *wire.Result) {
	t.Helper()
	ix := buildOn(t, root, store)
	want, err := New(ix).Query(context.Background(), lazyQuery())
	if err != nil || len(want.Frames) == 0 {
		t.Fatalf("intact store: %v", err)
	}
	return ix, want
}

// chunkRecordsMiddle returns an offset in the middle of seg's chunk
// records: every query of lazyTree's "common" reads it, and no check at
// open does.
func chunkRecordsMiddle(seg *segment) int {
	return (seg.chunkOff + seg.strOff) / 2
}

// answerHeadingChunk returns the chunk of seg whose heading is
// lazyTree's answer.
func answerHeadingChunk(t *testing.T, seg *segment) chunkInfo {
	t.Helper()
	var head chunkInfo
	for k := range uint32(seg.nChunks) {
		if c := seg.chunk(k); strings.Contains(seg.str(c.headOff, c.headN), "Zygomorphic") {
			head = c
		}
	}
	if head.headN == 0 {
		t.Fatal("no chunk with the answer's heading")
	}
	return head
}

// flipByte flips the byte at offset off of the file at path.
func flipByte(t *testing.T, path string, off int) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	data[off] ^= 0x5A
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
}

// reopenFlipped flips the byte at off of store, written by an intact
// build of root and closed, and builds root on it again with a log. The
// flip must lie where only a query reads it: the store opens fresh.
func reopenFlipped(t *testing.T, root, store string, off int) (*Index, *syncbuf.Buffer) {
	t.Helper()
	flipByte(t, store, off)
	log := new(syncbuf.Buffer)
	ix, err := Build(context.Background(), root, &IndexOptions{Store: store, Log: log})
	if err != nil {
		t.Fatal(err)
	}
	if st := ix.Stats().State; st != StateFresh {
		ix.Close()
		t.Fatalf("state %s: the flip was found at open; log %q", st, log)
	}
	return ix, log
}

// reopenCorruptRecords closes ix, built intact from root on store, and
// opens it again with a byte of its chunk records flipped, as
// reopenFlipped: only a query finds the flip.
func reopenCorruptRecords(t *testing.T, ix *Index, root, store string) (*Index, *syncbuf.Buffer) {
	t.Helper()
	off := chunkRecordsMiddle(ix.segs[0])
	ix.Close()
	return reopenFlipped(t, root, store, off)
}

// sameAnswer reports whether a query's result res and error err are the
// intact store's answer want: as many frames, the first the same.
func sameAnswer(res *wire.Result, err error, want *wire.Result) bool {
	return err == nil && len(res.Frames) == len(want.Frames) && res.Frames[0].Content == want.Frames[0].Content
}

// An intact large store checked lazily answers as one checked whole.
func TestLazyCheckAnswersAsWholeCheck(t *testing.T) {
	dir := lazyTree(t)
	store := filepath.Join(t.TempDir(), "s.idx")
	ixWhole, err := buildIndex(context.Background(), dir, "", &IndexOptions{Store: store}, true)
	if err != nil {
		t.Fatal(err)
	}
	defer ixWhole.Close()
	setForTest(t, &lazyCheckMin, 0)
	ixWhole2, err := buildIndex(context.Background(), dir, "", &IndexOptions{Store: store}, true)
	if err != nil {
		t.Fatal(err)
	}
	defer ixWhole2.Close()
	ixLazy, err := Build(context.Background(), dir, &IndexOptions{Store: store})
	if err != nil {
		t.Fatal(err)
	}
	defer ixLazy.Close()
	if ixLazy.segs[0].checked || ixWhole2.segs[0].good[0].Load() == 0 {
		t.Fatal("the store was not checked lazily, or not whole")
	}
	for _, goal := range []string{"zygomorphic answer", "common weather station", "filler text section"} {
		q := &frame.Query{Goal: goal, MaxFrames: 8, MaxTokens: 2000}
		a, err1 := New(ixWhole).Query(context.Background(), q)
		b, err2 := New(ixLazy).Query(context.Background(), q)
		if err1 != nil || err2 != nil || len(a.Frames) == 0 || len(a.Frames) != len(b.Frames) {
			t.Fatalf("%q: %v %v, %d and %d frames", goal, err1, err2, len(a.Frames), len(b.Frames))
		}
		for i := range a.Frames {
			if a.Frames[i].ID != b.Frames[i].ID || a.Frames[i].Content != b.Frames[i].Content {
				t.Errorf("%q frame %d: %v, lazily %v", goal, i, a.Frames[i].ID, b.Frames[i].ID)
			}
		}
	}
	if err := ixLazy.corrupt(); err != nil {
		t.Errorf("intact store found corrupt: %v", err)
	}
}

// Concurrent queries on one provider whose store turns out corrupt all get
// the intact store's answer, and the store is rebuilt once.
func TestLazyCheckConcurrentQueries(t *testing.T) {
	dir, store := lazyStore(t)
	q := lazyQuery()
	ix, want := buildIntact(t, dir, store)
	ix, log := reopenCorruptRecords(t, ix, dir, store)
	p := New(ix)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			if res, err := p.Query(context.Background(), q); !sameAnswer(res, err, want) {
				t.Errorf("%v %+v", err, res)
			}
		})
	}
	wg.Wait()
	if n := strings.Count(log.String(), "rebuilding"); n != 1 {
		t.Errorf("rebuilt %d times; log %q", n, log.String())
	}
	p.Indexes()[0].Close()
}

// Ranking reads the headings of the best chunks (to tell the parts of one
// section apart): a heading in a block that fails its checksum is found
// there, not trusted, even when no answer reads that heading again (here
// the rank alone is run).
func TestLazyCheckRankChecksHeadings(t *testing.T) {
	dir, store := lazyStore(t)
	ix := buildOn(t, dir, store)
	seg := ix.segs[0]
	head := answerHeadingChunk(t, seg)
	off := seg.strOff + int(head.headOff) + 2
	if lo, hi := blockBounds(off, seg.tableOff); lo < seg.chunkOff || hi > seg.termIdx {
		t.Fatalf("heading at %d: its block [%d, %d) is checked at open", off, lo, hi)
	}
	ix.Close()
	ix, _ = reopenFlipped(t, dir, store, off)
	defer ix.Close()
	cands, _ := New(ix).rank(&frame.Query{Goal: "zygomorphic", MaxFrames: 3, MaxTokens: 400})
	if len(cands) == 0 {
		t.Fatal("no candidates")
	}
	if ix.corrupt() == nil {
		t.Error("rank read a heading from a corrupt block unchecked")
	}
}

// Index.Search on a store with a corrupt part it read gives no hit made
// from it: none at all, with a message to the index's Log, rather than
// hits cut from a chunk record read as zeros.
func TestLazyCheckSearchGivesNothingCorrupt(t *testing.T) {
	dir, store := lazyStore(t)
	ix := buildOn(t, dir, store)
	const goal = "zygomorphic common answer"
	want := ix.Search(goal, 3)
	if len(want) == 0 || !strings.Contains(want[0].Chunk.Text, "forty-two") {
		ix.Close()
		t.Fatalf("intact store: %+v", want)
	}
	ix, log := reopenCorruptRecords(t, ix, dir, store)
	defer ix.Close()
	got := ix.Search(goal, 0)
	if ix.corrupt() == nil {
		t.Fatal("the search did not read the corrupt block")
	}
	if len(got) != 0 || !strings.Contains(log.String(), "failed a check") {
		t.Errorf("%d hits from a corrupt store (%.300v); log %q", len(got), got, log.String())
	}
}

// A store found corrupt while answering is opened again at the root and
// store Build was given, even when both were relative and the working
// directory has changed since.
func TestLazyCheckReopensTheSameRoot(t *testing.T) {
	setForTest(t, &lazyCheckMin, 0)
	dir := lazyTree(t)
	t.Chdir(filepath.Dir(dir))
	root, store := filepath.Base(dir), "s.idx"
	q := lazyQuery()
	ix, want := buildIntact(t, root, store)
	files := ix.Files()
	ix, log := reopenCorruptRecords(t, ix, root, store)
	p := New(ix)
	// Elsewhere, a directory of the same name holding another tree.
	other := t.TempDir()
	writeFile(t, other, root+"/x.md", "# X\n\nnothing about it\n")
	t.Chdir(other)
	if res, err := p.Query(context.Background(), q); !sameAnswer(res, err, want) {
		t.Fatalf("after the reopen: %v %+v; log %q", err, res, log.String())
	}
	if got := p.Indexes()[0]; got.Files() != files || got.Label() != ix.Label() {
		t.Errorf("reopened index: %d files, label %q; want %d, %q", got.Files(), got.Label(), files, ix.Label())
	}
	if _, err := os.Stat(store); err == nil {
		t.Errorf("a store was made in the new working directory")
	}
	p.Indexes()[0].Close()
}

// Verify, Stats and Indexes run beside queries that find the store corrupt
// and replace its index: each sees the old index or the new one, whole
// (run with -race), and Verify's verdicts are the intact store's.
func TestLazyCheckReopenBesideVerify(t *testing.T) {
	dir, store := lazyStore(t)
	q := lazyQuery()
	ix, want := buildIntact(t, dir, store)
	var ids []frame.ID
	for _, f := range want.Frames {
		ids = append(ids, frame.ID{Frame: f.ID, Digest: f.ContentDigest})
	}
	files := ix.Files()
	ix, _ = reopenCorruptRecords(t, ix, dir, store)
	p := New(ix)
	var wg sync.WaitGroup
	for i := range 12 {
		wg.Go(func() {
			switch i % 3 {
			case 0:
				if res, err := p.Query(context.Background(), q); !sameAnswer(res, err, want) {
					t.Errorf("query: %v", err)
				}
			case 1:
				vs, err := p.Verify(context.Background(), ids)
				for _, v := range vs {
					if v.Status != wire.StatusValid {
						t.Errorf("verify %s: %s", v.Frame.Frame, v.Status)
					}
				}
				if err != nil {
					t.Errorf("verify: %v", err)
				}
			default:
				p.mu.RLock()
				st := p.stats()
				p.mu.RUnlock()
				if st.Files != files {
					t.Errorf("stats: %d files", st.Files)
				}
				if n := p.Indexes()[0].Files(); n != files {
					t.Errorf("indexes: %d files", n)
				}
			}
		})
	}
	wg.Wait()
	if p.Indexes()[0].corrupt() != nil {
		t.Error("the corrupt index was not replaced")
	}
	p.Indexes()[0].Close()
}

// A delta that fails its check is set aside with a message once: when the
// tree is back to the base (so no new delta is written over it), the bad
// delta is removed, not reported again by every later Build.
func TestCorruptDeltaIsReportedOnce(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "a.md", "# A\n\nalpha words\n")
	writeFile(t, dir, "b.md", "# B\n\nbravo words\n")
	store := filepath.Join(t.TempDir(), "s.idx")
	build := func() (*Index, string) { return buildLogged(t, dir, store) }
	build()
	b := filepath.Join(dir, "b.md")
	st, err := os.Stat(b)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, dir, "b.md", "# B\n\nbravo changed\n")
	if ix, _ := build(); ix.Stats().State != StateRefreshed {
		t.Fatalf("state %s, want refreshed", ix.Stats().State)
	}
	// Back to the base, and the delta damaged.
	writeFile(t, dir, "b.md", "# B\n\nbravo words\n")
	if err := os.Chtimes(b, st.ModTime(), st.ModTime()); err != nil {
		t.Fatal(err)
	}
	delta, err := os.Stat(deltaPath(store))
	if err != nil {
		t.Fatal(err)
	}
	flipByte(t, deltaPath(store), int(delta.Size()/2))
	if _, log := build(); !strings.Contains(log, "not used") {
		t.Fatalf("corrupt delta: log %q", log)
	}
	if ix, log := build(); log != "" || ix.Files() != 2 {
		t.Errorf("next Build: %d files, log %q", ix.Files(), log)
	}
}

// An index a query replaced (its store found corrupt) stays safe to use
// for a caller that took it from Provider.Indexes before: its mapping is
// released only once nothing refers to it, so Search on it answers (here
// nothing, the store being corrupt) instead of faulting on unmapped memory.
func TestReplacedIndexStaysMapped(t *testing.T) {
	dir, store := lazyStore(t)
	ix, _ := reopenCorruptRecords(t, buildOn(t, dir, store), dir, store)
	p := New(ix)
	held := p.Indexes()[0]
	q := lazyQuery()
	if _, err := p.Query(context.Background(), q); err != nil {
		t.Fatal(err)
	}
	if p.Indexes()[0] == held {
		t.Fatal("the query did not replace the corrupt index")
	}
	runtime.GC()
	if hits := held.Search("zygomorphic common answer", 3); len(hits) != 0 {
		t.Errorf("%d hits from the replaced, corrupt index", len(hits))
	}
	held.Close()
	p.Indexes()[0].Close()
}
