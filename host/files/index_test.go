package files_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ctxkit/ctxkit/frame"
	"github.com/ctxkit/ctxkit/host/files"
)

func ids(t *testing.T, p *files.Provider, goal string) []string {
	t.Helper()
	res, err := p.Query(context.Background(), &frame.Query{Goal: goal, MaxFrames: 32, MaxTokens: 100000})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, f := range res.Frames {
		out = append(out, f.ID)
	}
	return out
}

// Ignore files, default skips, globs and the size limit each leave files
// out, and each is counted under its own reason.
func TestWalkSkipsByReason(t *testing.T) {
	dir := t.TempDir()
	files.WriteFile(t, dir, ".gitignore", "*.log\n/generated/\n!keep.log\n")
	files.WriteFile(t, dir, "a.md", "# Alpha\n\nalpha words here\n")
	files.WriteFile(t, dir, "debug.log", "alpha log line\n")
	files.WriteFile(t, dir, "keep.log", "alpha kept log line\n")
	files.WriteFile(t, dir, "generated/x.md", "# Alpha generated\n\nalpha\n")
	files.WriteFile(t, dir, "sub/.ignore", "secret.md\n")
	files.WriteFile(t, dir, "sub/secret.md", "# Alpha secret\n\nalpha\n")
	files.WriteFile(t, dir, "node_modules/pkg/readme.md", "# Alpha dep\n\nalpha\n")
	files.WriteFile(t, dir, "docs/skip.txt", "alpha text\n")
	files.WriteFile(t, dir, "big.md", "# Alpha big\n\n"+strings.Repeat("alpha ", 400)+"\n")
	ix, err := files.Build(context.Background(), dir, &files.IndexOptions{Exclude: []string{"docs/*.txt"}, MaxFileSize: 1000})
	if err != nil {
		t.Fatal(err)
	}
	sk := ix.Stats().Skipped
	if sk.Ignored != 3 || sk.DefaultDirs != 1 || sk.Excluded != 1 || sk.TooLarge != 1 || sk.Hidden != 2 {
		t.Errorf("skipped = %+v, want 3 ignored (debug.log, generated/, sub/secret.md), 1 default dir, 1 excluded, 1 too large, 2 hidden (the ignore files)", sk)
	}
	got := strings.Join(ids(t, files.New(ix), "alpha"), " ")
	if !strings.Contains(got, "keep.log") || !strings.Contains(got, "a.md") || strings.Contains(got, "secret") || strings.Contains(got, "debug.log") {
		t.Errorf("served %s", got)
	}
	// Include keeps only matching files; NoIgnoreFiles reads no ignore file.
	ix, err = files.Build(context.Background(), dir, &files.IndexOptions{Include: []string{"**/*.md"}, NoIgnoreFiles: true, NoDefaultSkips: true})
	if err != nil {
		t.Fatal(err)
	}
	got = strings.Join(ids(t, files.New(ix), "alpha"), " ")
	if !strings.Contains(got, "sub/secret.md") || !strings.Contains(got, "node_modules/pkg/readme.md") || strings.Contains(got, ".log") {
		t.Errorf("with include and no ignore files, served %s", got)
	}
}

// Latin-1 and UTF-16 text is decoded and served as UTF-8, not skipped as
// binary; a file with NUL bytes is binary.
func TestDecodesLatin1AndUTF16(t *testing.T) {
	dir := t.TempDir()
	files.WriteFile(t, dir, "latin1.txt", "caf\xe9 cr\xe8me br\xfbl\xe9e recipe\n")
	u16 := []byte{0xFF, 0xFE}
	for _, r := range "utf sixteen recipe\n" {
		u16 = append(u16, byte(r), 0)
	}
	files.WriteFile(t, dir, "utf16.txt", string(u16))
	files.WriteFile(t, dir, "blob.bin", "recipe\x00\x01\x02")
	ix, err := files.Build(context.Background(), dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	if sk := ix.Stats().Skipped; sk.Binary != 1 || ix.Files() != 2 {
		t.Fatalf("files=%d skipped=%+v", ix.Files(), sk)
	}
	res, _ := files.New(ix).Query(context.Background(), &frame.Query{Goal: "recipe", MaxFrames: 8, MaxTokens: 1000})
	var all string
	for _, f := range res.Frames {
		all += f.Content
	}
	if !strings.Contains(all, "café crème brûlée") || !strings.Contains(all, "utf sixteen recipe") {
		t.Errorf("decoded content: %q", all)
	}
}

// Identical files are indexed once; the frame names every path in its
// provenance, and the duplicate is counted.
func TestDuplicatesIndexedOnce(t *testing.T) {
	dir := t.TempDir()
	body := "# Quota\n\nThe quota resets every night at midnight UTC.\n"
	files.WriteFile(t, dir, "a/quota.md", body)
	files.WriteFile(t, dir, "b/quota.md", body)
	ix, err := files.Build(context.Background(), dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	if st := ix.Stats(); st.Files != 2 || st.Contents != 1 || st.Skipped.Duplicates != 1 {
		t.Errorf("stats %+v", st)
	}
	res, _ := files.New(ix).Query(context.Background(), &frame.Query{Goal: "quota reset", MaxFrames: 8, MaxTokens: 1000})
	if len(res.Frames) != 1 || len(res.Frames[0].Provenance) != 2 {
		t.Fatalf("frames %+v", res.Frames)
	}
}

// Several roots are one provider: ids and labels name the root, and the
// scores compare across roots.
func TestSeveralRootsOneProvider(t *testing.T) {
	base := t.TempDir()
	files.WriteFile(t, base, "docs/retry.md", "# Retry\n\nRequests are retried with backoff.\n")
	files.WriteFile(t, base, "src/retry.go", "package retry\n\n// Backoff is the retry delay.\nfunc Backoff() {}\n")
	wd, _ := os.Getwd()
	if err := os.Chdir(base); err != nil {
		t.Fatal(err)
	}
	defer os.Chdir(wd)
	var ixs []*files.Index
	for _, r := range []string{"docs", "src"} {
		ix, err := files.Build(context.Background(), r, nil)
		if err != nil {
			t.Fatal(err)
		}
		ixs = append(ixs, ix)
	}
	p := files.New(ixs...)
	got := ids(t, p, "retry backoff")
	if len(got) != 2 || !strings.HasPrefix(got[0], "docs/") && !strings.HasPrefix(got[0], "src/") {
		t.Fatalf("ids %v", got)
	}
	vs, _ := p.Verify(context.Background(), []frame.ID{{Frame: got[0]}, {Frame: got[1]}})
	for _, v := range vs {
		if v.Status != "unknown" {
			t.Errorf("verify %s: %s", v.Frame.Frame, v.Status)
		}
	}
}

// A stored index is reused when the tree is unchanged, refreshed from the
// files that changed (and serves their new content), and rebuilt when
// corrupt, with a message.
func TestStoredIndexRefreshAndRebuild(t *testing.T) {
	dir := t.TempDir()
	store := filepath.Join(t.TempDir(), "ix", "docs.idx")
	for i := range 20 {
		files.WriteFile(t, dir, "f"+string(rune('a'+i))+".md", "# Topic\n\nplain words about nothing in particular\n")
	}
	files.WriteFile(t, dir, "target.md", "# Target\n\nthe old answer is seven\n")
	build := func() (*files.Index, string) { return buildStored(t, dir, store) }
	if ix, _ := build(); ix.Stats().State != files.StateRebuilt {
		t.Fatalf("first build: %s", ix.Stats().State)
	}
	if ix, _ := build(); ix.Stats().State != files.StateFresh || ix.Stats().Reindexed != 0 {
		t.Fatalf("unchanged tree: %+v", ix.Stats())
	}
	// Touched but identical: read once, its new time stored, then fresh.
	later := time.Now().Add(time.Hour)
	os.Chtimes(filepath.Join(dir, "fa.md"), later, later)
	if ix, _ := build(); ix.Stats().State != files.StateRefreshed || ix.Stats().Reindexed != 1 {
		t.Fatalf("touched file: %+v", ix.Stats())
	}
	if ix, _ := build(); ix.Stats().State != files.StateFresh || ix.Stats().Reindexed != 0 {
		t.Fatalf("after the touched file was stored: %+v", ix.Stats())
	}
	files.WriteFile(t, dir, "target.md", "# Target\n\nthe new answer is eleven\n")
	os.Remove(filepath.Join(dir, "fb.md"))
	ix, _ := build()
	// The delta holds every file that differs from the base: fa.md again.
	if st := ix.Stats(); st.State != files.StateRefreshed || st.Reindexed != 2 || st.Files != 20 {
		t.Fatalf("after a change: %+v", st)
	}
	res, _ := files.New(ix).Query(context.Background(), &frame.Query{Goal: "answer", MaxFrames: 4, MaxTokens: 1000})
	if len(res.Frames) != 1 || !strings.Contains(res.Frames[0].Content, "eleven") {
		t.Fatalf("refreshed index serves %+v", res.Frames)
	}
	if got := ids(t, files.New(ix), "old seven"); len(got) != 0 {
		t.Errorf("the old content still ranks: %v", got)
	}
	// Corrupt the store: rebuilt with a message, never trusted.
	data, _ := os.ReadFile(store)
	data[len(data)/2] ^= 0xFF
	os.WriteFile(store, data, 0o600)
	ix, msg := build()
	if ix.Stats().State != files.StateRebuilt || !strings.Contains(msg, "checksum") {
		t.Fatalf("corrupt store: state %s, message %q", ix.Stats().State, msg)
	}
	// An intact index of another format version: rebuilt, and the message
	// says why without calling it corrupt.
	data, _ = os.ReadFile(store)
	binary.LittleEndian.PutUint32(data[8:], 1)
	os.WriteFile(store, data, 0o600)
	if ix, msg := build(); ix.Stats().State != files.StateRebuilt || !strings.Contains(msg, "another format") || strings.Contains(msg, "corrupt") {
		t.Fatalf("older format: state %s, message %q", ix.Stats().State, msg)
	}
	os.WriteFile(store, []byte("not an index"), 0o600)
	if ix, msg := build(); ix.Stats().State != files.StateRebuilt || !strings.Contains(msg, "rebuilding") {
		t.Fatalf("garbage store: state %s, message %q", ix.Stats().State, msg)
	}
	// Other options: rebuilt, not trusted.
	var log bytes.Buffer
	ix2, err := files.Build(context.Background(), dir, &files.IndexOptions{Store: store, Log: &log, Exclude: []string{"fc.md"}})
	if err != nil {
		t.Fatal(err)
	}
	defer ix2.Close()
	if ix2.Stats().State != files.StateRebuilt || !strings.Contains(log.String(), "other options") {
		t.Fatalf("other options: %s %q", ix2.Stats().State, log.String())
	}
}

// Concurrent builds on one store neither corrupt it nor fail: each sees a
// whole index.
func TestConcurrentBuildsShareAStore(t *testing.T) {
	dir := t.TempDir()
	for i := range 30 {
		files.WriteFile(t, dir, "d"+string(rune('a'+i%26))+string(rune('a'+i/26))+".md", "# Note\n\nshared words and a number "+strings.Repeat("x", i)+"\n")
	}
	store := filepath.Join(t.TempDir(), "s.idx")
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			// Not WriteFile: it stops the test with Fatal, which only the
			// test's own goroutine may call.
			if i%2 == 1 {
				if err := os.WriteFile(filepath.Join(dir, "changing.md"), []byte("# Changing\n\nversion "+strings.Repeat("y", i)+"\n"), 0o600); err != nil {
					t.Error(err)
					return
				}
			}
			ix, err := files.Build(context.Background(), dir, &files.IndexOptions{Store: store})
			if err != nil {
				t.Error(err)
				return
			}
			defer ix.Close()
			if n := ix.Files(); n < 30 {
				t.Errorf("a concurrent build saw %d files, want 30 or more", n)
			}
		})
	}
	wg.Wait()
	var log bytes.Buffer
	ix, err := files.Build(context.Background(), dir, &files.IndexOptions{Store: store, Log: &log})
	if err != nil || log.Len() > 0 {
		t.Fatalf("after concurrent builds: %v %q", err, log.String())
	}
	ix.Close()
}

// The walk lists directories on several goroutines, yet an index of the
// same tree is the same bytes every time, and nested ignore files still
// apply to their own subtree only.
func TestParallelWalkIsDeterministic(t *testing.T) {
	dir := t.TempDir()
	for i := range 40 {
		for j := range 5 {
			rel := filepath.ToSlash(filepath.Join("pkg"+strings.Repeat("x", i%7), "d"+string(rune('a'+i)), "sub"+string(rune('a'+j)), "f.md"))
			files.WriteFile(t, dir, rel, "# Section "+rel+"\n\nText about retries and backoff number "+rel+".\n")
		}
	}
	files.WriteFile(t, dir, "pkgx/db/.gitignore", "*.md\n")
	store := func(name string) []byte {
		s := filepath.Join(t.TempDir(), name)
		ix, err := files.Build(context.Background(), dir, &files.IndexOptions{Store: s, Workers: 2})
		if err != nil {
			t.Fatal(err)
		}
		if sk := ix.Stats().Skipped; sk.Ignored != 5 {
			t.Errorf("ignored %d files, want the 5 under pkgx/db", sk.Ignored)
		}
		ix.Close()
		b, err := os.ReadFile(s)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	first := store("a.idx")
	for k := range 3 {
		if !bytes.Equal(store("b.idx"), first) {
			t.Fatalf("build %d of the same tree differs from the first", k+2)
		}
	}
}

// A glob path.Match cannot read is refused by name: it would match no
// path, so an include would index nothing and an exclude skip nothing,
// silently.
func TestBuildRefusesBadGlobs(t *testing.T) {
	dir := t.TempDir()
	for _, o := range []*files.IndexOptions{{Include: []string{"docs/["}}, {Exclude: []string{"a/**/b[", "ok"}}} {
		_, err := files.Build(context.Background(), dir, o)
		if !errors.Is(err, path.ErrBadPattern) || !strings.Contains(err.Error(), "[") {
			t.Errorf("%+v: err %v, want path.ErrBadPattern naming the pattern", o, err)
		}
	}
	if _, err := files.Build(context.Background(), dir, &files.IndexOptions{Include: []string{"**/*.md", "docs/[a-c]*"}}); err != nil {
		t.Errorf("good globs refused: %v", err)
	}
}
