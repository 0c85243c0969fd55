package files

import (
	"context"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctxkit/ctxkit/frame"
	"github.com/ctxkit/ctxkit/internal/syncbuf"
)

// segmentGoals are the searches run on every fuzzed image: terms of the
// seed trees (body, heading and path terms), a synonym's source, and
// terms no seed holds.
var segmentGoals = []string{
	"zygomorphic answer",
	"common weather station",
	"ServeHTTP handler server",
	"notes readme install",
	"retry backoff timeout error",
	"qqqq nothing",
}

// writeSeedTree writes a small tree of prose and Go for a seed image.
func writeSeedTree(tb testing.TB, dir string, extra string) {
	tb.Helper()
	files := map[string]string{
		"README.md": "# Install\n\nRun make install.\n\n## Notes\n\nThe zygomorphic answer is forty-two.\n" + extra,
		"docs/weather.md": "# Weather station\n\ncommon words about the weather station and its common readings.\n\n" +
			"# Retry\n\nA retry with backoff after a timeout error.\n",
		"server/server.go": "package server\n\n// Server serves.\ntype Server struct{ n int }\n\n" +
			"// ServeHTTP answers a request.\nfunc (s *Server) ServeHTTP() error { return nil }\n\nfunc helper() int { return 1 }\n",
		"internal/x/x.go":  "package x\n\n// X is internal.\nfunc X() {}\n",
		"data/config.json": "{\"timeout\": 3, \"retry\": true}\n",
		"bin/blob.bin":     "\x00\x01\x02binary",
		"copy/README.md":   "# Install\n\nRun make install.\n\n## Notes\n\nThe zygomorphic answer is forty-two.\n" + extra,
	}
	for rel, text := range files {
		writeFile(tb, dir, rel, text)
	}
}

// seedImages returns real images: an in-memory index's segment, the same
// tree stored, and a delta stored beside it after a file changed and one
// was removed.
func seedImages(tb testing.TB, dir string) [][]byte {
	tb.Helper()
	tree := filepath.Join(dir, "tree")
	writeSeedTree(tb, tree, "")
	ix, err := Build(context.Background(), tree, nil)
	if err != nil {
		tb.Fatal(err)
	}
	out := [][]byte{ix.segs[0].data}
	store := filepath.Join(dir, "s.idx")
	var log strings.Builder
	if _, err := Build(context.Background(), tree, &IndexOptions{Store: store, Log: &log}); err != nil {
		tb.Fatal(err)
	}
	base, err := os.ReadFile(store)
	if err != nil {
		tb.Fatal(err)
	}
	writeSeedTree(tb, tree, "\n## Changed\n\nA new zygomorphic note on retry.\n")
	if err := os.Remove(filepath.Join(tree, "internal/x/x.go")); err != nil {
		tb.Fatal(err)
	}
	if _, err := Build(context.Background(), tree, &IndexOptions{Store: store, Log: &log}); err != nil {
		tb.Fatal(err)
	}
	delta, err := os.ReadFile(deltaPath(store))
	if err != nil {
		tb.Fatalf("no delta stored: %v (log: %s)", err, log.String())
	}
	return append(out, base, delta)
}

// resealSegment returns data as an image whose checksums hold: the magic
// and version set, the block table at the header's table offset (clamped
// to the data) recomputed and put after the sections, and the header's
// table and header sums recomputed. What the sums no longer guard, the
// header's counts and offsets and every section's records, is as given.
func resealSegment(data []byte) []byte {
	if len(data) < headerSize {
		data = append(data, make([]byte, headerSize-len(data))...)
	}
	hdr := append([]byte(nil), data[:headerSize]...)
	copy(hdr, segMagic)
	binary.LittleEndian.PutUint32(hdr[8:], segVersion)
	tableOff := int(binary.LittleEndian.Uint32(hdr[8+4*17:]))
	tableOff = min(max(tableOff, headerSize), len(data))
	binary.LittleEndian.PutUint32(hdr[8+4*17:], uint32(tableOff))
	body := data[headerSize:tableOff]
	var table []byte
	for len(body) > 0 {
		k := min(len(body), blockSize)
		table = binary.LittleEndian.AppendUint32(table, crc32.Checksum(body[:k], castagnoli))
		body = body[k:]
	}
	binary.LittleEndian.PutUint32(hdr[8+4*15:], crc32.Checksum(table, castagnoli))
	binary.LittleEndian.PutUint32(hdr[8+4*18:], crc32.Checksum(hdr[:8+4*18], castagnoli))
	out := append(hdr, data[headerSize:tableOff]...)
	return append(out, table...)
}

// storeSegment reads the store image at path and opens it as a segment,
// checked whole or only as at open (whole false), failing t if it does
// not pass.
func storeSegment(t *testing.T, path string, whole bool) ([]byte, *segment) {
	t.Helper()
	img, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	seg, err := checkSegment(img, whole)
	if err != nil {
		t.Fatal(err)
	}
	return img, seg
}

// exerciseSegment opens img whole and lazily and reads everything a query,
// a chunk read and Stats read; it fails t on a panic (by the fuzzer), on an
// error that is not the package's corrupt or other-format error, on an
// allocation sized beyond the image, and on a malformed record read
// without the segment being marked corrupt.
func exerciseSegment(t *testing.T, img []byte) {
	for _, whole := range []bool{true, false} {
		seg, err := checkSegment(img, whole)
		if err != nil {
			if !errors.Is(err, errCorrupt) && !errors.Is(err, errOtherVersion) {
				t.Fatalf("open (whole %v): error %v is not errCorrupt", whole, err)
			}
			continue
		}
		if cap(seg.contents) > len(img)/36+1 || seg.nChunks*chunkRec > len(img) || seg.nTerms*4 > len(img) {
			t.Fatalf("counts beyond the image: %d contents (cap %d), %d chunks, %d terms in %d bytes",
				len(seg.contents), cap(seg.contents), seg.nChunks, seg.nTerms, len(img))
		}
		ix := &Index{}
		ix.useBase(seg)
		ix.finishStats(Skipped{}, 0)
		st := ix.Stats()
		if st.Files > len(img) || st.Contents > len(seg.contents) {
			t.Fatalf("stats beyond the image: %+v", st)
		}
		_ = st.Summary("root")
		for _, goal := range segmentGoals {
			for _, h := range ix.Search(goal, 20) {
				if h.Score < 0 || h.Score > 1 {
					t.Fatalf("score %v out of [0, 1]", h.Score)
				}
			}
		}
		// What reading a chunk's text and heading reads, for every content.
		for ci, c := range seg.contents {
			for k := c.firstChunk; k < c.firstChunk+c.nChunks; k++ {
				ch := seg.chunk(k)
				_ = seg.str(ch.headOff, ch.headN)
				_ = seg.str(ch.textOff, ch.textN)
				_ = seg.strBytes(ch.headOff, ch.headN)
			}
			_ = ix.pathsOf(0, uint32(ci))
		}
		for i := range min(seg.nTerms, 64) {
			if term := seg.term(i); len(term) > 0 {
				_ = ix.pathChunks(seg, term)
				_ = postingCount(seg.postings(term))
			}
		}
		_, _ = storedPaths(seg, seg)
		if err := seg.corrupt(); err != nil && !errors.Is(err, errCorrupt) {
			t.Fatalf("corrupt: %v is not errCorrupt", err)
		}
	}
}

// FuzzSegment feeds stored index images (bases and deltas) to the reader
// as they are, and re-sealed so their checksums hold: nothing panics, and
// an image is either refused with errCorrupt or read within its bounds.
func FuzzSegment(f *testing.F) {
	for _, img := range seedImages(f, f.TempDir()) {
		f.Add(img)
	}
	saved := lazyCheckMin
	lazyCheckMin = 0 // whole=false opens lazily
	f.Cleanup(func() { lazyCheckMin = saved })
	f.Fuzz(func(t *testing.T, data []byte) {
		exerciseSegment(t, data)
		exerciseSegment(t, resealSegment(data))
	})
}

// Re-sealing an intact image changes nothing, and re-sealing a mutated one
// gives an image whose sums hold, so the fuzzer's mutations reach the
// structure behind them.
func TestResealSegment(t *testing.T) {
	for i, img := range seedImages(t, t.TempDir()) {
		if got := resealSegment(img); string(got) != string(img) {
			t.Fatalf("image %d: reseal changed an intact image", i)
		}
		mut := append([]byte(nil), img...)
		mut[headerSize+40] ^= 0xff
		if _, err := checkSegment(mut, true); !errors.Is(err, errCorrupt) {
			t.Fatalf("image %d: mutated image not refused: %v", i, err)
		}
		if _, err := checkSegment(resealSegment(mut), true); err != nil && strings.Contains(err.Error(), "checksum") {
			t.Fatalf("image %d: resealed image fails a checksum: %v", i, err)
		}
	}
}

// sealedWith returns a seed image with the uint32 at off set to v,
// re-sealed.
func sealedWith(t *testing.T, off int, v uint32) []byte {
	t.Helper()
	img := append([]byte(nil), seedImages(t, t.TempDir())[0]...)
	binary.LittleEndian.PutUint32(img[off:], v)
	return resealSegment(img)
}

// An image whose sums hold but whose header claims more contents than its
// contents section can hold is refused at open, before the count sizes an
// allocation.
func TestSegmentContentCountBounded(t *testing.T) {
	img := sealedWith(t, 8+4*1, 1<<31)
	for _, whole := range []bool{true, false} {
		if _, err := checkSegment(img, whole); !errors.Is(err, errCorrupt) {
			t.Fatalf("whole %v: got %v, want errCorrupt", whole, err)
		}
	}
}

// Records that point outside their sections (a chunk's content, a term's
// bytes, a heading in the string pool, a postings list that does not
// decode) are read as empty and mark the segment corrupt, so Search gives
// no hits rather than panicking, and the provider rebuilds the store.
func TestSegmentRecordsOutOfBounds(t *testing.T) {
	base := seedImages(t, t.TempDir())[0]
	s, err := checkSegment(base, false)
	if err != nil {
		t.Fatal(err)
	}
	cases := map[string]func(img []byte){
		"chunk content": func(img []byte) {
			binary.LittleEndian.PutUint32(img[s.chunkOff:], 1<<30)
		},
		"chunk heading": func(img []byte) {
			for k := range s.nChunks {
				binary.LittleEndian.PutUint32(img[s.chunkOff+k*chunkRec+4*7:], 1<<30)
				binary.LittleEndian.PutUint32(img[s.chunkOff+k*chunkRec+4*8:], 5)
			}
		},
		"term offsets": func(img []byte) {
			for i := 1; i <= s.nTerms; i++ {
				binary.LittleEndian.PutUint32(img[s.termIdx+4*i:], 1<<30)
			}
		},
		"postings varints": func(img []byte) {
			for i := s.postBytes; i < s.tableOff; i++ {
				img[i] = 0xff
			}
		},
	}
	for name, mutate := range cases {
		t.Run(name, func(t *testing.T) {
			img := append([]byte(nil), base...)
			mutate(img)
			img = resealSegment(img)
			seg, err := checkSegment(img, true)
			if err != nil {
				if !errors.Is(err, errCorrupt) {
					t.Fatalf("open: %v is not errCorrupt", err)
				}
				return
			}
			ix := &Index{}
			ix.useBase(seg)
			var hits int
			for _, goal := range segmentGoals {
				hits += len(ix.Search(goal, 10))
			}
			for ci, c := range seg.contents {
				for k := c.firstChunk; k < c.firstChunk+c.nChunks; k++ {
					ch := seg.chunk(k)
					_ = seg.str(ch.headOff, ch.headN)
				}
				_ = ix.pathsOf(0, uint32(ci))
			}
			if err := seg.corrupt(); !errors.Is(err, errCorrupt) {
				t.Fatalf("corrupt() = %v after reading malformed records (%d hits)", err, hits)
			}
			if hits != 0 {
				t.Fatalf("%d hits from a corrupt segment", hits)
			}
		})
	}
}

// A stored index whose checksums hold but whose records are out of bounds
// passes the checks at open; the query that reads such a record finds the
// index corrupt, and the store is rebuilt (not opened again, which a whole
// check would pass), with a message, and the query answered from it.
func TestMalformedStoreIsRebuilt(t *testing.T) {
	dir := t.TempDir()
	tree := filepath.Join(dir, "tree")
	writeSeedTree(t, tree, "")
	store := filepath.Join(dir, "s.idx")
	build := func(log *syncbuf.Buffer) *Index {
		t.Helper()
		ix, err := Build(context.Background(), tree, &IndexOptions{Store: store, Log: log})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ix.Close() })
		return ix
	}
	query := &frame.Query{Goal: "zygomorphic answer", MaxFrames: 3, MaxTokens: 400}
	want, err := New(build(new(syncbuf.Buffer))).Query(context.Background(), query)
	if err != nil || len(want.Frames) == 0 {
		t.Fatalf("intact store: %v, %+v", err, want)
	}
	img, s := storeSegment(t, store, false)
	for k := range s.nChunks {
		binary.LittleEndian.PutUint32(img[s.chunkOff+k*chunkRec:], 1<<30)
	}
	if err := os.WriteFile(store, resealSegment(img), 0o600); err != nil {
		t.Fatal(err)
	}
	var log syncbuf.Buffer
	p := New(build(&log))
	if msg := log.String(); msg != "" {
		t.Fatalf("the malformed store was found at open: %q", msg)
	}
	got, err := p.Query(context.Background(), query)
	if err != nil {
		t.Fatalf("query over a malformed store: %v (log %q)", err, log.String())
	}
	if msg := log.String(); !strings.Contains(msg, "failed a check") || !strings.Contains(msg, "rebuilding") {
		t.Fatalf("log %q: want the check and the rebuild said", msg)
	}
	if len(got.Frames) != len(want.Frames) || got.Frames[0].ID != want.Frames[0].ID {
		t.Fatalf("answer after the rebuild: %+v, want %+v", got.Frames, want.Frames)
	}
	var again syncbuf.Buffer
	build(&again)
	if msg := again.String(); msg != "" {
		t.Fatalf("the rebuilt store: %q", msg)
	}
}
