// Package files is the built-in local-files CGP provider and the chunking
// and ranking behind it. Split cuts a document into chunks that follow its
// structure (Markdown sections, Go declarations, HTML sections, code
// blocks); Index ranks chunks with BM25F over body, heading and path fields.
// NewIndex indexes documents held in memory; Build indexes a directory,
// incrementally, and keeps the index on disk when asked; Provider serves an
// index as doc (prose) and snippet (code) frames with file provenance, real
// digests and verify.
package files

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/ctxkit/ctxkit/host/files/internal/lex"
)

// DefaultMaxFileSize is the size above which a file is skipped (and
// counted) unless IndexOptions.MaxFileSize says otherwise.
const DefaultMaxFileSize = 4 << 20

// IndexOptions tunes Build. The zero value indexes in memory with the
// defaults.
type IndexOptions struct {
	MaxFileSize    int64     // files larger than this are skipped (default DefaultMaxFileSize)
	Progress       io.Writer // if non-nil, progress lines while indexing (a terminal)
	Log            io.Writer // if non-nil, messages such as a corrupt index being rebuilt
	Store          string    // index file to keep and refresh; "" indexes in memory only
	Include        []string  // globs; if any, only matching files are indexed
	Exclude        []string  // globs of files and directories to leave out
	NoDefaultSkips bool      // descend into hidden and DefaultSkipDirs directories too
	NoIgnoreFiles  bool      // do not read .gitignore and .ignore files
	Workers        int       // indexing goroutines (default: every core)
}

func (o *IndexOptions) maxFileSize() int64 {
	if o.MaxFileSize <= 0 {
		return DefaultMaxFileSize
	}
	return o.MaxFileSize
}

// fingerprint sums the options that decide what is indexed, so an index
// built with other options is rebuilt rather than trusted.
// checkGlobs refuses an Include or Exclude pattern path.Match cannot
// read: such a pattern matches no path, so an include would silently
// index nothing and an exclude silently skip nothing.
func (o *IndexOptions) checkGlobs() error {
	for _, set := range []struct {
		name     string
		patterns []string
	}{{"include", o.Include}, {"exclude", o.Exclude}} {
		for _, p := range set.patterns {
			for _, seg := range strings.Split(p, "/") {
				if _, err := path.Match(seg, ""); err != nil {
					return fmt.Errorf("files: %s pattern %q: %w", set.name, p, err)
				}
			}
		}
	}
	return nil
}

func (o *IndexOptions) fingerprint() uint32 {
	s := fmt.Sprintf("%d|%q|%q|%v|%v|%d", o.maxFileSize(), o.Include, o.Exclude, o.NoDefaultSkips, o.NoIgnoreFiles, maxChunkTokens)
	return crc32.Checksum([]byte(s), castagnoli)
}

// State says how Build found a stored index.
type State string

// Index states.
const (
	StateMemory    State = "memory"    // no store: indexed in memory
	StateFresh     State = "fresh"     // the stored index matched the tree
	StateRefreshed State = "refreshed" // changed files were reindexed over the stored index
	StateRebuilt   State = "rebuilt"   // built (again) from the tree and stored
)

// Stats describes an index as Build left it.
type Stats struct {
	State     State         `json:"state"`
	Elapsed   time.Duration `json:"elapsed_ns"`
	Files     int           `json:"files"`     // indexed paths
	Contents  int           `json:"contents"`  // distinct contents among them
	Chunks    int           `json:"chunks"`    // chunks of the live contents
	Bytes     int64         `json:"bytes"`     // bytes of text indexed
	Reindexed int           `json:"reindexed"` // files read and indexed by this Build
	Root      string        `json:"root"`      // absolute, symlinks resolved
	Store     string        `json:"store,omitempty"`
	Skipped   Skipped       `json:"skipped"`
}

// DefaultIndexPath returns where the index of root is kept by default: the
// user's cache directory, keyed by root's absolute path.
func DefaultIndexPath(root string) (string, error) {
	abs, err := filepath.Abs(root)
	if err != nil {
		return "", err
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256([]byte(abs))
	return filepath.Join(cache, "ctxkit", "index", filepath.Base(abs)+"-"+hex.EncodeToString(sum[:8])+".idx"), nil
}

// Build indexes every text file under root that the walk keeps (see
// IndexOptions and Skipped). With Store set, a stored index is reused:
// files whose size and modification time are as stored are not read, and
// the files that differ from the store's last full build are indexed into
// a delta stored beside it (Store + ".delta"), so the next Build on an
// unchanged tree reads no file; a missing, corrupt or incompatible store is
// rebuilt (with a message to Log). Both are written atomically under a lock
// on Store + ".lock". A large store is checked in part here and the rest as
// queries read it: a Provider that finds a part corrupt rebuilds the store
// and answers from the new index (see Provider.Query). On Linux the names
// of unchanged directories are kept beside the store too (Store + ".dirs"),
// so a warm Build need not list them. Symbolic links are never followed,
// so nothing outside root is read.
func Build(ctx context.Context, root string, opts *IndexOptions) (*Index, error) {
	return buildIndex(ctx, root, rootLabel(root), opts, false)
}

// buildIndex is Build, with label the prefix shown before the index's
// paths; whole checks a stored index whole at open, rather than in part
// with the rest checked as queries read it (see checkSegment).
func buildIndex(ctx context.Context, root, label string, opts *IndexOptions, whole bool) (*Index, error) {
	return buildIndexDistrusting(ctx, root, label, opts, whole, nil, nil)
}

// buildIndexDistrusting is buildIndex, rebuilding the store rather than
// using it when its base or delta is one of the images distrusted (by the
// sum of its block table), for why: an image whose checksums hold but
// whose records do not (see segment.malformed) passes a whole check again.
func buildIndexDistrusting(ctx context.Context, root, label string, opts *IndexOptions, whole bool, distrusted []uint32, why error) (*Index, error) {
	start := time.Now()
	var o IndexOptions
	if opts != nil {
		o = *opts
	}
	if err := o.checkGlobs(); err != nil {
		return nil, err
	}
	abs, err := resolveRoot(root)
	if err != nil {
		return nil, fmt.Errorf("files: index %s: %w", root, err)
	}
	opened := o
	ix := &Index{root: abs, label: label, opened: &opened}
	var stored chan storedIndex
	if o.Store != "" {
		if opened.Store, err = filepath.Abs(o.Store); err != nil {
			return nil, fmt.Errorf("files: index %s: %w", root, err)
		}
		if err := os.MkdirAll(filepath.Dir(o.Store), 0o700); err != nil {
			return nil, fmt.Errorf("files: index %s: %w", root, err)
		}
		unlock, err := lockFile(o.Store + ".lock")
		if err != nil {
			return nil, fmt.Errorf("files: index %s: %w", root, err)
		}
		defer unlock()
		// The stored index is mapped and checked while the tree is walked:
		// one is system calls, the other reads memory.
		stored = make(chan storedIndex, 1)
		go func() { stored <- mapStore(o.Store, whole) }()
	}
	w := &walker{root: abs, opts: &o, start: time.Now()}
	if o.Store != "" {
		cache, err := loadDirCache(dirCachePath(o.Store))
		if err != nil {
			ix.logf(&o, "listing cache %s not used (%v); listing every directory", dirCachePath(o.Store), err)
		}
		w.cache, w.cw = cache, &dirCacheWriter{cache: cache}
	}
	if err := w.walk(ctx); err != nil {
		if stored != nil {
			(<-stored).release()
		}
		return nil, fmt.Errorf("files: index %s: %w", root, err)
	}
	if w.cw != nil && w.cw.listed > 0 {
		// Directories were listed that the next walk need not list.
		if err := w.cw.write(dirCachePath(o.Store)); err != nil {
			ix.logf(&o, "listing cache %s not stored: %v", dirCachePath(o.Store), err)
		}
	}
	if o.Store == "" {
		err = ix.rebuild(ctx, w.files, &o)
		ix.stats.State = StateMemory
	} else {
		st := <-stored
		if st.err == nil && (slices.Contains(distrusted, st.seg.sum) || st.delta != nil && slices.Contains(distrusted, st.delta.sum)) {
			st.release()
			st = storedIndex{err: why}
		}
		err = ix.open(ctx, st, w.files, &o)
	}
	if err != nil {
		return nil, fmt.Errorf("files: index %s: %w", root, err)
	}
	ix.finishStats(w.skipped, time.Since(start))
	ix.stats.Store = o.Store
	ix.stats.Root = abs
	if o.Progress != nil {
		fmt.Fprintf(o.Progress, "\r%s\n", ix.stats.Summary(root))
	}
	return ix, nil
}

func resolveRoot(root string) (string, error) {
	abs, err := filepath.Abs(root)
	if err != nil {
		return "", err
	}
	abs, err = filepath.EvalSymlinks(abs)
	if err != nil {
		return "", err
	}
	st, err := os.Stat(abs)
	if err != nil {
		return "", err
	}
	if !st.IsDir() {
		return "", errors.New("not a directory")
	}
	return abs, nil
}

// rootLabel is the prefix shown before paths: the root as given when it is
// relative and inside the working directory, else nothing.
func rootLabel(root string) string {
	if filepath.IsAbs(root) {
		return ""
	}
	c := filepath.ToSlash(filepath.Clean(root))
	if c == "." || c == ".." || strings.HasPrefix(c, "../") {
		return ""
	}
	return c + "/"
}

func (ix *Index) logf(o *IndexOptions, format string, a ...any) {
	if o.Log != nil {
		fmt.Fprintf(o.Log, "files: "+format+"\n", a...)
	}
}

// indexAll indexes every file into a new builder.
func (ix *Index) indexAll(ctx context.Context, files []walkFile, o *IndexOptions) (*builder, error) {
	b := newBuilder(false, o.fingerprint())
	if err := ix.indexFiles(ctx, b, files, o); err != nil {
		return nil, err
	}
	return b, nil
}

// rebuild indexes every file into one segment in memory.
func (ix *Index) rebuild(ctx context.Context, files []walkFile, o *IndexOptions) error {
	b, err := ix.indexAll(ctx, files, o)
	if err != nil {
		return err
	}
	seg, err := parseSegment(b.encode()) // summed as it was encoded
	if err != nil {
		return err
	}
	ix.useBase(seg)
	return nil
}

// useBase makes seg the index's only segment, every text path in it live.
func (ix *Index) useBase(seg *segment) {
	ix.segs = []*segment{seg}
	ix.dead = [][]bool{make([]bool, len(seg.contents))}
	ix.live = make(map[string]contentRef)
	for ci, c := range seg.contents {
		if c.binary {
			continue
		}
		for _, p := range c.paths {
			ix.live[p.rel] = contentRef{0, uint32(ci)}
		}
	}
}

// markDead makes ix.dead anew, a flag for each content of each segment,
// and tombstones every content no live path refers to.
func (ix *Index) markDead() {
	ix.dead = make([][]bool, len(ix.segs))
	for si, s := range ix.segs {
		dead := make([]bool, len(s.contents))
		for ci := range dead {
			dead[ci] = true
		}
		ix.dead[si] = dead
	}
	for _, r := range ix.live {
		ix.dead[r.seg][r.content] = false
	}
}

// analyzedFile is one file's outcome from a worker: its analysis, or why
// it was skipped.
type analyzedFile struct {
	a      *analyzed
	skipTo string
}

// indexFiles reads, decodes, chunks and tokenises files on every core and
// adds them to b in the files' order, each distinct content once.
func (ix *Index) indexFiles(ctx context.Context, b *builder, files []walkFile, o *IndexOptions) error {
	workers := o.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	slots := make([]chan analyzedFile, len(files))
	for i := range slots {
		slots[i] = make(chan analyzedFile, 1)
	}
	next := make(chan int)
	window := make(chan struct{}, 4*workers) // results held ahead of the merge
	var wg sync.WaitGroup
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			tk := newTokenizer()
			for i := range next {
				slots[i] <- ix.analyzeFile(tk, b.dict, files[i])
			}
		}()
	}
	go func() {
		defer close(next)
		for i := range files {
			select {
			case window <- struct{}{}:
			case <-ctx.Done():
				return
			}
			select {
			case next <- i:
			case <-ctx.Done():
				return
			}
		}
	}()
	byHash := make(map[[32]byte]uint32)
	lastReport := time.Now()
	var err error
	for i, f := range files {
		var r analyzedFile
		select {
		case r = <-slots[i]:
		case <-ctx.Done():
			err = ctx.Err()
		}
		if err != nil {
			break
		}
		slots[i] = nil
		<-window
		switch {
		case r.skipTo == "binary":
			ix.stats.Skipped.Binary++
			b.addBinary(pathEntry(f))
		case r.skipTo == "unreadable":
			ix.stats.Skipped.Unreadable++
		case r.a != nil:
			pe := pathEntry(f)
			if ci, dup := byHash[r.a.hash]; dup {
				b.contents[ci].paths = append(b.contents[ci].paths, pe)
				continue
			}
			byHash[r.a.hash] = uint32(len(b.contents))
			b.add(r.a, []pathEntry{pe})
			ix.stats.Reindexed++
		}
		if o.Progress != nil && time.Since(lastReport) > 200*time.Millisecond {
			lastReport = time.Now()
			fmt.Fprintf(o.Progress, "\rindexing %s: %d/%d files", ix.root, i+1, len(files))
		}
	}
	cancel()
	wg.Wait()
	return err
}

// analyzeFile reads and analyses one file.
func (ix *Index) analyzeFile(tk *tokenizer, dict *termDict, f walkFile) analyzedFile {
	data, err := os.ReadFile(f.path(ix.root))
	if err != nil {
		return analyzedFile{skipTo: "unreadable"}
	}
	text, ok := decodeText(data)
	if !ok {
		return analyzedFile{skipTo: "binary"}
	}
	a := analyze(tk, dict, f.rel, text)
	a.hash = sha256.Sum256(data)
	a.transcoded = len(text) != len(data) || (len(text) > 0 && &text[0] != &data[0])
	return analyzedFile{a: a}
}

// corrupt returns why the index cannot be trusted: a part of its store
// checked as a query read it failed its checksum. Nil otherwise.
func (ix *Index) corrupt() error {
	for _, s := range ix.segs {
		if err := s.corrupt(); err != nil {
			return err
		}
	}
	return nil
}

// reopen opens a corrupt index's store again, as Build did, checking it
// whole: the store is rebuilt, with a message, unless another process has
// rebuilt it already. A segment found malformed (its sums hold) is
// rebuilt without the check, which it would pass.
func (ix *Index) reopen(ctx context.Context, why error) (*Index, error) {
	if ix.opened == nil || ix.opened.Store == "" {
		return nil, fmt.Errorf("files: index of %s: %w", ix.root, why)
	}
	o := *ix.opened
	ix.logf(&o, "index %s failed a check while answering (%v); opening it again", o.Store, why)
	var distrusted []uint32
	for _, s := range ix.segs {
		if s.malformed.Load() {
			distrusted = append(distrusted, s.sum)
		}
	}
	return buildIndexDistrusting(ctx, ix.root, ix.label, &o, true, distrusted, why)
}

// finishStats counts what the index holds now.
func (ix *Index) finishStats(walk Skipped, elapsed time.Duration) {
	sk := ix.stats.Skipped
	walk.Binary += sk.Binary
	walk.Unreadable += sk.Unreadable
	ix.stats.Skipped = walk
	ix.stats.Elapsed = elapsed
	ix.stats.Files = len(ix.live)
	contents := 0
	for si, s := range ix.segs {
		for ci, c := range s.contents {
			if ix.dead[si][ci] || c.binary {
				continue
			}
			contents++
			ix.stats.Chunks += int(c.nChunks)
			if len(c.paths) > 0 {
				ix.stats.Bytes += c.paths[0].size
			}
		}
	}
	ix.stats.Contents = contents
	ix.stats.Skipped.Duplicates = ix.stats.Files - contents
	if ix.stats.Skipped.Duplicates < 0 {
		ix.stats.Skipped.Duplicates = 0
	}
}

// Summary is one line for a person: the root, what the index holds, how
// it was found and what was skipped.
func (s Stats) Summary(root string) string {
	sk := s.Skipped
	return fmt.Sprintf("indexed %s: %d files, %d chunks, %s in %s (skipped %d binary, %d too large, %d unreadable, %d symlinks, %d ignored, %d excluded, %d hidden, %d default dirs; %d duplicates)",
		root, s.Files, s.Chunks, s.State, s.Elapsed.Round(time.Millisecond), sk.Binary, sk.TooLarge, sk.Unreadable, sk.Symlinks, sk.Ignored, sk.Excluded, sk.Hidden, sk.DefaultDirs, sk.Duplicates)
}

// Stats reports how the index was built and what it holds.
func (ix *Index) Stats() Stats { return ix.stats }

// Files returns the number of indexed paths.
func (ix *Index) Files() int { return ix.stats.Files }

// Root returns the absolute, symlink-resolved root directory ("" for an
// index of documents).
func (ix *Index) Root() string { return ix.root }

// Label returns the prefix shown before the index's paths in titles and
// citation labels (the root as given, when relative).
func (ix *Index) Label() string { return ix.label }

// retire releases the index's mapped store once nothing refers to the
// index any more: a Provider replacing an index it found corrupt cannot know
// whether a caller still holds the old one (from Provider.Indexes), and
// unmapping under that caller would make its next Search fault.
func (ix *Index) retire() {
	runtime.AddCleanup(ix, func(segs []*segment) {
		for _, s := range segs {
			if s.unmap != nil {
				_ = s.unmap()
				s.unmap = nil
			}
		}
	}, ix.segs)
}

// Close releases a mapped store. The index must not be used after.
func (ix *Index) Close() error {
	var err error
	for _, s := range ix.segs {
		if s.unmap != nil {
			err = errors.Join(err, s.unmap())
			s.unmap = nil
		}
	}
	return err
}

// readChunk returns lines a..b (1-based, inclusive) of the file at rel as
// they are on disk now, decoded as at index time (and as text for HTML), the
// last line it could read (b, or fewer if the file shrank), and the file's
// modification time. ok is false when the file is gone, no
// longer a regular file, no longer text, or shorter than line a.
func (ix *Index) readChunk(rel string, html bool, a, b int) (content []byte, end int, mod time.Time, ok bool) {
	abs := filepath.Join(ix.root, filepath.FromSlash(rel))
	st, err := os.Lstat(abs)
	if err != nil || !st.Mode().IsRegular() {
		return nil, 0, time.Time{}, false
	}
	if out, ok := ix.readIndexedRange(abs, rel, st, a, b); ok {
		return out, b, st.ModTime(), true
	}
	data, err := os.ReadFile(abs)
	if err != nil {
		return nil, 0, time.Time{}, false
	}
	text, ok := decodeText(data)
	if !ok {
		return nil, 0, time.Time{}, false
	}
	if html {
		text, _ = htmlText(text)
	}
	lines := lex.SplitLines(text)
	if a < 1 || a > len(lines) || b < a {
		return nil, 0, time.Time{}, false
	}
	b = min(b, len(lines))
	out := text[lines[a-1].Off : lines[b-1].Off+lines[b-1].Len]
	if html {
		out = []byte(collapseBlank(out))
	}
	return out, b, st.ModTime(), true
}

// readIndexedRange reads lines a..b by the byte offsets the index holds,
// without reading the rest of the file, when that is sound: the file has
// the size and modification time it was indexed with, it was UTF-8 (so
// offsets in its text are offsets in the file), and the range is one of the
// index's chunks. ok is false otherwise, and the caller reads the file.
func (ix *Index) readIndexedRange(abs, rel string, st os.FileInfo, a, b int) ([]byte, bool) {
	r, live := ix.live[rel]
	if !live {
		return nil, false
	}
	seg := ix.segs[r.seg]
	c := seg.contents[r.content]
	if c.html || c.transcoded {
		return nil, false
	}
	var pe *pathEntry
	for i := range c.paths {
		if c.paths[i].rel == rel {
			pe = &c.paths[i]
		}
	}
	if pe == nil || pe.size != st.Size() || pe.modTime != st.ModTime().UnixNano() {
		return nil, false
	}
	var start, end uint32
	found := false
	for k := c.firstChunk; k < c.firstChunk+c.nChunks; k++ {
		ch := seg.chunk(k)
		if int(ch.startLine) == a {
			start, found = ch.start, true
		}
		if found && int(ch.endLine) == b {
			end = ch.end
			break
		}
	}
	if !found || end <= start || int64(end) > st.Size() {
		return nil, false
	}
	f, err := os.Open(abs)
	if err != nil {
		return nil, false
	}
	defer f.Close()
	out := make([]byte, end-start)
	if _, err := f.ReadAt(out, int64(start)); err != nil {
		return nil, false
	}
	return out, true
}
