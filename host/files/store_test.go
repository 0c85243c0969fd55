package files_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ctxkit/ctxkit/frame"
	"github.com/ctxkit/ctxkit/host/files"
)

// A refresh stores what it indexed: after files change, are added or are
// removed, the next build on the unchanged tree is fresh (no file read)
// and serves the new contents, not the old.
func TestRefreshIsStored(t *testing.T) {
	dir := t.TempDir()
	store := filepath.Join(t.TempDir(), "s.idx")
	for i := range 20 {
		files.WriteFile(t, dir, "n"+string(rune('a'+i))+".md", filler(i))
	}
	files.WriteFile(t, dir, "answer.md", "# Answer\n\nthe magic number is seven\n")
	build := func(want files.State, reindexed int) (*files.Index, string) {
		t.Helper()
		ix, log := buildStored(t, dir, store)
		if st := ix.Stats(); st.State != want || st.Reindexed != reindexed {
			t.Fatalf("state %s, %d reindexed; want %s, %d (%+v)", st.State, st.Reindexed, want, reindexed, st)
		}
		return ix, log
	}
	build(files.StateRebuilt, 21)
	files.WriteFile(t, dir, "answer.md", "# Answer\n\nthe magic number is eleven\n")
	files.WriteFile(t, dir, "added.md", "# Added\n\na zebra crossing\n")
	os.Remove(filepath.Join(dir, "nc.md"))
	build(files.StateRefreshed, 2)
	for round := range 2 {
		ix, _ := build(files.StateFresh, 0)
		p := files.New(ix)
		if got := ids(t, p, "magic number"); !slices.Equal(got, []string{"answer.md#L1-3"}) {
			t.Fatalf("round %d: magic number: %v", round, got)
		}
		if got := ids(t, p, "zebra"); !slices.Equal(got, []string{"added.md#L1-3"}) {
			t.Fatalf("round %d: zebra: %v", round, got)
		}
		if ix.Files() != 21 {
			t.Fatalf("round %d: %d files, want 21 (nc.md removed, added.md added)", round, ix.Files())
		}
		res := first(t, p, "magic number")
		if !strings.Contains(res, "eleven") {
			t.Fatalf("round %d: serves %q", round, res)
		}
	}
	// A second change is stored over the first.
	files.WriteFile(t, dir, "answer.md", "# Answer\n\nthe magic number is forty-two\n")
	build(files.StateRefreshed, 2)
	ix, _ := build(files.StateFresh, 0)
	if res := first(t, files.New(ix), "magic number"); !strings.Contains(res, "forty-two") {
		t.Fatalf("after the second change: %q", res)
	}
	// A removed file stays removed; a file put back as it was in the base
	// is served from the base.
	files.WriteFile(t, dir, "nc.md", filler(2))
	build(files.StateRefreshed, 3)
	if ix, _ := build(files.StateFresh, 0); ix.Files() != 22 {
		t.Fatalf("nc.md back: %d files, want 22", ix.Files())
	}
}

// A delta that does not belong to the base beside it, or is corrupt, is
// not used: the files that differ from the base are indexed again, with a
// message.
func TestDeltaOfAnotherBaseIsNotTrusted(t *testing.T) {
	dir := t.TempDir()
	store := filepath.Join(t.TempDir(), "s.idx")
	for i := range 10 {
		files.WriteFile(t, dir, "n"+string(rune('a'+i))+".md", "# Note\n\nfiller words\n")
	}
	files.WriteFile(t, dir, "answer.md", "# Answer\n\nthe magic number is seven\n")
	build := func() (*files.Index, string) { t.Helper(); return buildStored(t, dir, store) }
	build()
	files.WriteFile(t, dir, "answer.md", "# Answer\n\nthe magic number is eleven\n")
	build()
	delta, err := os.ReadFile(store + ".delta")
	if err != nil {
		t.Fatalf("no delta stored: %v", err)
	}
	// A new base (here: the old one removed) with the old delta beside it.
	os.Remove(store)
	files.WriteFile(t, dir, "answer.md", "# Answer\n\nthe magic number is twelve\n")
	build()
	if err := os.WriteFile(store+".delta", delta, 0o600); err != nil {
		t.Fatal(err)
	}
	ix, msg := build()
	if !strings.Contains(msg, "another base") {
		t.Errorf("message %q does not say the delta was made over another base", msg)
	}
	if res := first(t, files.New(ix), "magic number"); !strings.Contains(res, "twelve") {
		t.Fatalf("with a stale delta: serves %q", res)
	}
	// A corrupt delta.
	files.WriteFile(t, dir, "answer.md", "# Answer\n\nthe magic number is thirteen\n")
	build()
	delta, _ = os.ReadFile(store + ".delta")
	delta[len(delta)-1] ^= 0xFF
	os.WriteFile(store+".delta", delta, 0o600)
	ix, msg = build()
	if !strings.Contains(msg, "checksum") || ix.Stats().State != files.StateRefreshed {
		t.Errorf("corrupt delta: state %s, message %q", ix.Stats().State, msg)
	}
	if res := first(t, files.New(ix), "magic number"); !strings.Contains(res, "thirteen") {
		t.Fatalf("with a corrupt delta: serves %q", res)
	}
	if _, msg := build(); msg != "" {
		t.Errorf("after the delta was stored again: %q", msg)
	}
}

// first returns the content of the best frame for goal.
func first(t *testing.T, p *files.Provider, goal string) string {
	t.Helper()
	res, err := p.Query(context.Background(), &frame.Query{Goal: goal, MaxFrames: 4, MaxTokens: 1000})
	if err != nil || len(res.Frames) == 0 {
		t.Fatalf("query %q: %v, %d frames", goal, err, len(res.Frames))
	}
	return res.Frames[0].Content
}

// filler is the content of the i-th file of no interest, distinct from
// the others' (identical contents are indexed once).
func filler(i int) string {
	return "# Note\n\nfiller words about nothing " + strings.Repeat("x", i+1) + "\n"
}

// buildStored builds the index of dir kept in store, closed when the test
// ends, and returns it with what it logged.
func buildStored(t *testing.T, dir, store string) (*files.Index, string) {
	t.Helper()
	var log bytes.Buffer
	ix, err := files.Build(context.Background(), dir, &files.IndexOptions{Store: store, Log: &log})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ix.Close() })
	return ix, log.String()
}
