package files

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ctxkit/ctxkit/internal/syncbuf"
)

// walkWith walks dir with the listing cache of store, as Build does, and
// returns the files found and how many directories came from the cache.
func walkWith(t *testing.T, dir, store string) (files []string, hits int) {
	t.Helper()
	ix, log := buildLogged(t, dir, store)
	if strings.Contains(log, "listing cache") {
		t.Fatalf("log %q", log)
	}
	for rel := range ix.live {
		files = append(files, rel)
	}
	slices.Sort(files)
	cache, err := loadDirCache(dirCachePath(store))
	if err != nil || cache == nil {
		t.Fatalf("no listing cache after a build: %v", err)
	}
	w := &walker{root: ix.root, opts: &IndexOptions{}, start: time.Now(), cache: cache, cw: &dirCacheWriter{}}
	if err := w.walk(context.Background()); err != nil {
		t.Fatal(err)
	}
	return files, len(w.cw.kept)
}

// buildLogged builds dir on store, closed when t ends, and returns what
// Build said to its Log.
func buildLogged(t *testing.T, dir, store string) (*Index, string) {
	t.Helper()
	var log syncbuf.Buffer
	ix, err := Build(context.Background(), dir, &IndexOptions{Store: store, Log: &log})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ix.Close() })
	return ix, log.String()
}

// writeFile writes content to the slash path rel under dir, making its
// directories.
func writeFile(tb testing.TB, dir, rel, content string) {
	tb.Helper()
	p := filepath.Join(dir, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		tb.Fatal(err)
	}
}

// setForTest sets *p to v for the rest of t, for the package's tunables
// whose production values would make a test slow or large.
func setForTest[T any](t *testing.T, p *T, v T) {
	t.Helper()
	old := *p
	*p = v
	t.Cleanup(func() { *p = old })
}

// rootIdent returns the identity of the directory dir as the walk's
// listing cache keys it, skipping t where the system gives none.
func rootIdent(t *testing.T, dir string) dirIdent {
	t.Helper()
	root, err := resolveRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	d, err := openRootDir(root)
	if err != nil {
		t.Fatal(err)
	}
	id, err := d.ident()
	d.close()
	if err != nil {
		t.Skipf("no directory identity on this system: %v", err)
	}
	return id
}

// liveFiles returns the paths ix holds, sorted.
func liveFiles(ix *Index) []string {
	var got []string
	for rel := range ix.live {
		got = append(got, rel)
	}
	slices.Sort(got)
	return got
}

// tick waits past the coarse clock of a file system's times.
func tick() { time.Sleep(30 * time.Millisecond) }

// listingTree makes the listing cache keep listings older than a short
// racyMargin for the rest of t, writes files (slash path to content) into
// a fresh directory and waits past the clock's grain; it returns the
// directory and a store path for it in a directory of its own.
func listingTree(t *testing.T, files map[string]string) (dir, store string) {
	t.Helper()
	setForTest(t, &racyMargin, 10*time.Millisecond)
	dir = t.TempDir()
	for rel, content := range files {
		writeFile(t, dir, rel, content)
	}
	tick()
	return dir, filepath.Join(t.TempDir(), "s.idx")
}

// A directory whose inode and times are as cached is read from the
// listing cache; one whose entries changed is listed again, even when its
// modification time is set back; a listing newer than racyMargin is not
// cached.
func TestListingCache(t *testing.T) {
	dir, store := listingTree(t, map[string]string{
		"a.md":          "# A\n\nalpha words\n",
		"sub/b.md":      "# B\n\nbravo words\n",
		"sub/deep/c.md": "# C\n\ncharlie words\n",
		"other/d.md":    "# D\n\ndelta words\n",
	})
	got, hits := walkWith(t, dir, store)
	if want := []string{"a.md", "other/d.md", "sub/b.md", "sub/deep/c.md"}; !slices.Equal(got, want) || hits != 4 {
		t.Fatalf("files %v, %d directories from the cache; want %v, 4", got, hits, want)
	}

	// Entries added and removed: their directories are listed again.
	tick()
	writeFile(t, dir, "sub/deep/e.md", "# E\n\necho words\n")
	os.Remove(filepath.Join(dir, "other", "d.md"))
	writeFile(t, dir, "new/f.md", "# F\n\nfoxtrot words\n")
	tick()
	got, hits = walkWith(t, dir, store)
	if want := []string{"a.md", "new/f.md", "sub/b.md", "sub/deep/c.md", "sub/deep/e.md"}; !slices.Equal(got, want) {
		t.Fatalf("after changes: %v, want %v", got, want)
	}
	if hits != 5 { // every directory, now cached again
		t.Errorf("after changes: %d directories from the cache, want 5", hits)
	}

	// A file added and the directory's modification time set back, as
	// a copy that keeps times would: its change time still moved.
	sub := filepath.Join(dir, "sub")
	st, err := os.Stat(sub)
	if err != nil {
		t.Fatal(err)
	}
	tick()
	writeFile(t, dir, "sub/g.md", "# G\n\ngolf words\n")
	if err := os.Chtimes(sub, st.ModTime(), st.ModTime()); err != nil {
		t.Fatal(err)
	}
	tick()
	if got, _ = walkWith(t, dir, store); !slices.Contains(got, "sub/g.md") {
		t.Fatalf("a file added under a directory with its time set back is missing: %v", got)
	}

	// A corrupt cache is not used, with a message, and made again.
	cache, err := os.Stat(dirCachePath(store))
	if err != nil {
		t.Fatal(err)
	}
	flipByte(t, dirCachePath(store), int(cache.Size()-3))
	ix, log := buildLogged(t, dir, store)
	if !strings.Contains(log, "listing cache") || !strings.Contains(log, "checksum") || ix.Files() != 6 {
		t.Fatalf("corrupt cache: %d files, log %q", ix.Files(), log)
	}
	if _, log := buildLogged(t, dir, store); log != "" {
		t.Errorf("after the cache was made again: %q", log)
	}

	// Within racyMargin of its times a listing is not cached.
	racyMargin = time.Hour
	os.Remove(dirCachePath(store))
	buildLogged(t, dir, store)
	if _, err := os.Stat(dirCachePath(store)); !os.IsNotExist(err) {
		t.Errorf("listings of directories changed within racyMargin were cached (%v)", err)
	}
}

// The cached listing is what the walk uses: a name the cache holds for a
// directory as it is (here written into the cache by hand) is walked, and
// found gone.
func TestListingCacheIsUsed(t *testing.T) {
	dir, store := listingTree(t, map[string]string{"a.md": "# A\n\nalpha words\n"})
	buildLogged(t, dir, store)
	id := rootIdent(t, dir)
	var cw dirCacheWriter
	names := []byte("a.mdghost.md")
	cw.add("", id, names, []rawEntry{{0, 4, entryFile}, {4, 8, entryFile}})
	if err := cw.write(dirCachePath(store)); err != nil {
		t.Fatal(err)
	}
	ix, _ := buildLogged(t, dir, store)
	if sk := ix.Stats().Skipped; sk.Unreadable != 1 || ix.Files() != 1 {
		t.Fatalf("the cache's listing was not used: %d files, %+v", ix.Files(), sk)
	}
}

// A listing cache is read from a file: a name in it that is not one
// directory entry's name ("..", a slash, a NUL) would make the walk state
// and index a path outside the directory, or outside the root. Such a
// record is not used: the directory is listed, and nothing outside the
// root is indexed.
func TestListingCacheRejectsNamesThatLeaveTheDirectory(t *testing.T) {
	setForTest(t, &racyMargin, 10*time.Millisecond)
	top := t.TempDir()
	dir := filepath.Join(top, "root")
	writeFile(t, dir, "a.md", "# A\n\nalpha words\n")
	writeFile(t, top, "outside.md", "# Outside\n\nwords outside the root\n")
	store := filepath.Join(t.TempDir(), "s.idx")
	// Without the default skips a leading dot does not hide a name.
	build := func() *Index {
		t.Helper()
		var log syncbuf.Buffer
		ix, err := Build(context.Background(), dir, &IndexOptions{Store: store, Log: &log, NoDefaultSkips: true})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ix.Close() })
		return ix
	}
	tick()
	build()
	id := rootIdent(t, dir)
	for _, bad := range []string{"../outside.md", "..", ".", "sub/../../outside.md", "a.md\x00"} {
		t.Run(bad, func(t *testing.T) {
			var cw dirCacheWriter
			names := []byte("a.md" + bad)
			raw := []rawEntry{{0, 4, entryFile}, {4, uint32(len(bad)), entryFile}}
			if bad == ".." || bad == "." {
				raw[1].kind = entryDir
			}
			cw.add("", id, names, raw)
			if err := cw.write(dirCachePath(store)); err != nil {
				t.Fatal(err)
			}
			ix := build()
			if got, sk := liveFiles(ix), ix.Stats().Skipped; len(got) != 1 || got[0] != "a.md" || sk != (Skipped{}) {
				t.Fatalf("indexed %v, skipped %+v; want only a.md", got, sk)
			}
		})
	}
}

// What the cache keeps is a directory's names alone: an ignore file edited
// in place (its directory unchanged, so listed from the cache), options
// changed between runs, and a directory replaced by another of the same
// name all take effect on the next walk.
func TestListingCacheKeepsNamesOnly(t *testing.T) {
	dir, store := listingTree(t, map[string]string{
		".gitignore": "# nothing yet\n",
		"a.md":       "# A\n\nalpha words\n",
		"b.txt":      "bravo words\n",
		"sub/c.md":   "# C\n\ncharlie words\n",
	})
	build := func(o IndexOptions) []string {
		t.Helper()
		o.Store = store
		ix, err := Build(context.Background(), dir, &o)
		if err != nil {
			t.Fatal(err)
		}
		defer ix.Close()
		return liveFiles(ix)
	}
	build(IndexOptions{})
	if got, hits := walkWith(t, dir, store); len(got) != 3 || hits != 2 {
		t.Fatalf("files %v, %d directories from the cache; want 3 files, 2", got, hits)
	}
	// The ignore file rewritten in place: the root's entries are as cached.
	if err := os.WriteFile(filepath.Join(dir, ".gitignore"), []byte("*.txt\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if got := build(IndexOptions{}); !slices.Equal(got, []string{"a.md", "sub/c.md"}) {
		t.Errorf("after the ignore file changed: %v", got)
	}
	if got := build(IndexOptions{Exclude: []string{"sub/**"}}); !slices.Equal(got, []string{"a.md"}) {
		t.Errorf("with an exclusion: %v", got)
	}
	if got := build(IndexOptions{MaxFileSize: 10, NoIgnoreFiles: true}); len(got) != 0 {
		t.Errorf("with a size limit below every file: %v", got)
	}
	// sub replaced by another directory of that name, its times set to
	// the old one's.
	st, err := os.Stat(filepath.Join(dir, "sub"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(filepath.Join(dir, "sub")); err != nil {
		t.Fatal(err)
	}
	writeFile(t, dir, "sub/d.md", "# D\n\ndelta words\n")
	os.Chtimes(filepath.Join(dir, "sub"), st.ModTime(), st.ModTime())
	if got := build(IndexOptions{}); !slices.Equal(got, []string{"a.md", "sub/d.md"}) {
		t.Errorf("after sub was replaced: %v", got)
	}
}
