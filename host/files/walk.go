package files

import (
	"bufio"
	"bytes"
	"context"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"
	"unsafe"
)

// DefaultSkipDirs are directory names not descended into unless
// IndexOptions.NoDefaultSkips is set: version-control metadata, installed
// dependencies, vendored code and build output. Hidden directories and
// files (a leading dot) are skipped too.
var DefaultSkipDirs = []string{"node_modules", "vendor", "build", "dist", "target", "out", "__pycache__", "venv", "bower_components"}

// Skipped counts the files (and, where a whole directory was left out, the
// directories) that an index left out, by reason. Nothing is left out
// silently.
type Skipped struct {
	Binary      int `json:"binary"`       // not text: NUL bytes or control characters
	TooLarge    int `json:"too_large"`    // larger than MaxFileSize
	Unreadable  int `json:"unreadable"`   // open or read failed
	Symlinks    int `json:"symlinks"`     // symbolic links are never followed
	Ignored     int `json:"ignored"`      // matched by a .gitignore or .ignore file
	Excluded    int `json:"excluded"`     // matched --exclude, or no --include
	Hidden      int `json:"hidden"`       // names starting with a dot
	DefaultDirs int `json:"default_dirs"` // directories in DefaultSkipDirs
	Duplicates  int `json:"duplicates"`   // paths whose content is indexed at another path
}

// walkFile is a regular file found by the walk.
type walkFile struct {
	rel     string // slash path below the root
	size    int64
	modTime int64
}

// path returns the file's path in the file system, under root.
func (f walkFile) path(root string) string {
	return root + string(filepath.Separator) + filepath.FromSlash(f.rel)
}

// ignoreRule is one line of a .gitignore or .ignore file.
type ignoreRule struct {
	base     string // slash directory of the ignore file relative to the root, "" at the root
	pattern  string
	negate   bool
	dirOnly  bool
	anchored bool // the pattern has a slash before its end: match from base
}

// walker lists the files to index under a root.
type walker struct {
	root    string
	opts    *IndexOptions
	skipped Skipped
	files   []walkFile
	skipSet map[string]bool
	sem     chan struct{} // tokens for listing a directory on another goroutine
	bufs    sync.Pool     // of *listBuf, for reading directory listings
	// With a store: the listing cache read (nil if none) and the one
	// this walk makes, and when the walk began.
	cache   *dirCache
	cw      *dirCacheWriter
	start   time.Time
	rootDev uint64 // only directories on the root's device are cached
}

// listing is what one directory's walk found: its files and, in name
// order among them, its subdirectories' listings. The walk flattens the
// tree once at the end, so a file is copied once, not once per level.
type listing struct {
	parts   []part
	skipped Skipped
	err     error
	n       int // files in this directory and below
}

// part is a run of a directory's files and the subdirectory listed after
// them, if any.
type part struct {
	files []walkFile
	sub   *listing
}

// flatten appends the files of l and its subdirectories, in walk order.
func (l *listing) flatten(out []walkFile) []walkFile {
	for _, p := range l.parts {
		out = append(out, p.files...)
		if p.sub != nil {
			out = p.sub.flatten(out)
		}
	}
	return out
}

// walk lists the tree. Directories are listed on every core (the walk is
// mostly system calls: one stat per file), and the result is in name
// order whatever the scheduling.
func (w *walker) walk(ctx context.Context) error {
	w.skipSet = make(map[string]bool)
	if !w.opts.NoDefaultSkips {
		for _, d := range DefaultSkipDirs {
			w.skipSet[d] = true
		}
	}
	w.sem = make(chan struct{}, 2*runtime.GOMAXPROCS(0))
	d, err := openRootDir(w.root)
	if err != nil {
		return err
	}
	if w.cw != nil {
		if id, err := d.ident(); err == nil && d.cacheableFS() {
			w.rootDev = id.dev
		} else {
			w.cache, w.cw = nil, nil
		}
	}
	l := w.dir(ctx, d, w.root, "", nil)
	w.files, w.skipped = l.flatten(make([]walkFile, 0, l.n)), l.skipped
	return l.err
}

// entryKind is what a directory entry is.
type entryKind uint8

// Entry kinds; entryUnknown is a listing that did not say (the entry is
// then stated).
const (
	entryOther entryKind = iota
	entryFile
	entryDir
	entrySymlink
	entryUnknown
)

// dirEntry is one name in a directory listing.
type dirEntry struct {
	rel  string // slash path below the root; ends with name
	z    string // name followed by a NUL byte, for system calls
	kind entryKind
}

// name is the entry's name in its directory.
func (e *dirEntry) name() string { return e.z[:len(e.z)-1] }

// rawEntry is a name read from a directory listing: names[off:off+n] of
// the listing's name buffer.
type rawEntry struct {
	off, n uint32
	kind   entryKind
}

// makeEntries turns the names of one listing (lb.names and lb.raw) into
// entries, in name order (it sorts lb.raw), their relative paths and
// NUL-terminated names cut from one allocation rather than one (or two)
// per name. The entries are lb's, valid until lb is used again.
func makeEntries(lb *listBuf, prefix string) []dirEntry {
	names, raw := lb.names, lb.raw
	// Sorted before the entries are made: the records are small.
	slices.SortFunc(raw, func(a, b rawEntry) int {
		return bytes.Compare(names[a.off:a.off+a.n], names[b.off:b.off+b.n])
	})
	size := 0
	for _, r := range raw {
		size += len(prefix) + 1 + int(r.n) + 1
	}
	arena := make([]byte, 0, size)
	spans := lb.spans[:0]
	for _, r := range raw {
		start := len(arena)
		if prefix != "" {
			arena = append(append(arena, prefix...), '/')
		}
		name := len(arena)
		arena = append(arena, names[r.off:r.off+r.n]...)
		spans = append(spans, span{start, name, len(arena)})
		arena = append(arena, 0)
	}
	lb.spans = spans
	if len(arena) == 0 {
		return nil
	}
	// The arena is not written again, so a string may share its bytes.
	s := unsafe.String(&arena[0], len(arena))
	out := lb.entries[:0]
	for i, sp := range spans {
		out = append(out, dirEntry{rel: s[sp.start:sp.end], z: s[sp.name : sp.end+1], kind: raw[i].kind})
	}
	lb.entries = out
	return out
}

// listBuf is the scratch space of one directory listing, reused.
type listBuf struct {
	dents   []byte
	names   []byte
	raw     []rawEntry
	spans   []span
	entries []dirEntry
}

// span is where one entry's path and name are in a listing's arena.
type span struct{ start, name, end int }

// dir lists one directory (open as d, which it closes), in name order,
// with the ignore rules in force.
func (w *walker) dir(ctx context.Context, d *dirHandle, abs, rel string, rules []ignoreRule) *listing {
	defer d.close()
	out := &listing{}
	if err := ctx.Err(); err != nil {
		out.err = err
		return out
	}
	lb, _ := w.bufs.Get().(*listBuf)
	if lb == nil {
		lb = &listBuf{dents: make([]byte, 32<<10)}
	}
	defer w.bufs.Put(lb) // the entries are lb's
	entries, err := w.listDir(d, lb, rel)
	if err != nil {
		out.skipped.Unreadable++
		return out
	}
	if !w.opts.NoIgnoreFiles {
		for _, e := range entries {
			if name := e.name(); (name == ".gitignore" || name == ".ignore") && e.kind == entryFile {
				rules = append(slices.Clip(rules), readIgnore(filepath.Join(abs, name), rel)...)
			}
		}
	}
	// subs are the pending listings of subdirectories, one per part but
	// the last.
	var subs []chan *listing
	// The directory's files go to one slice, each part a piece of it.
	n := 0
	for i := range entries {
		if k := entries[i].kind; k == entryFile || k == entryUnknown {
			n++
		}
	}
	all := make([]walkFile, 0, n)
	from := 0 // where the current part begins in all
	sk := &out.skipped
	for i := range entries {
		e := &entries[i]
		name, r := e.name(), e.rel
		var size, modTime int64
		stated := false
		if e.kind == entryUnknown {
			stated = true
			if e.kind, size, modTime, err = d.stat(e); err != nil {
				sk.Unreadable++
				continue
			}
		}
		if e.kind == entrySymlink {
			sk.Symlinks++
			continue
		}
		isDir := e.kind == entryDir
		switch {
		case strings.HasPrefix(name, ".") && !w.opts.NoDefaultSkips:
			sk.Hidden++
			continue
		case ignored(rules, r, isDir):
			sk.Ignored++
			continue
		case isDir && w.skipSet[name]:
			sk.DefaultDirs++
			continue
		case matchAny(w.opts.Exclude, r):
			sk.Excluded++
			continue
		}
		if isDir {
			childAbs := abs + string(filepath.Separator) + name
			child, err := d.openDir(name, childAbs)
			if err != nil {
				sk.Unreadable++
				continue
			}
			out.parts = append(out.parts, part{files: all[from:len(all):len(all)]})
			subs = append(subs, w.sub(ctx, child, childAbs, r, rules))
			from = len(all)
			continue
		}
		if e.kind != entryFile {
			continue
		}
		if len(w.opts.Include) > 0 && !matchAny(w.opts.Include, r) {
			sk.Excluded++
			continue
		}
		if !stated {
			var kind entryKind
			if kind, size, modTime, err = d.stat(e); err != nil || kind != entryFile {
				sk.Unreadable++ // gone or replaced since the listing
				continue
			}
		}
		if size > w.opts.maxFileSize() {
			sk.TooLarge++
			continue
		}
		all = append(all, walkFile{rel: r, size: size, modTime: modTime})
		out.n++
	}
	if len(all) > from {
		out.parts = append(out.parts, part{files: all[from:]})
	}
	for i, ch := range subs {
		l := <-ch
		out.parts[i].sub = l
		out.n += l.n
		*sk = addSkipped(*sk, l.skipped)
		if out.err == nil {
			out.err = l.err
		}
	}
	return out
}

// listDir lists d, from the listing cache when the directory is as cached
// (see dircache.go), and records the listing for the next walk.
func (w *walker) listDir(d *dirHandle, lb *listBuf, rel string) ([]dirEntry, error) {
	if w.cw == nil {
		return d.list(lb, rel)
	}
	// The directory's times are read before it is listed: a change made
	// while it is listed then shows next time.
	id, err := d.ident()
	if err != nil || id.dev != w.rootDev {
		return d.list(lb, rel)
	}
	if w.cache != nil {
		if rec, ok := w.cache.at[rel]; ok && rec.id == id && w.cache.entries(rec, lb) {
			w.cw.keep(rel, rec)
			return makeEntries(lb, rel), nil
		}
	}
	entries, err := d.list(lb, rel)
	if err == nil {
		if old := w.start.Add(-racyMargin).UnixNano(); id.ctime < old && id.mtime < old {
			w.cw.add(rel, id, lb.names, lb.raw)
		}
	}
	return entries, err
}

// sub lists a subdirectory on another goroutine when one is free, else on
// this one.
func (w *walker) sub(ctx context.Context, d *dirHandle, abs, rel string, rules []ignoreRule) chan *listing {
	ch := make(chan *listing, 1)
	select {
	case w.sem <- struct{}{}:
		go func() {
			defer func() { <-w.sem }()
			ch <- w.dir(ctx, d, abs, rel, rules)
		}()
	default:
		ch <- w.dir(ctx, d, abs, rel, rules)
	}
	return ch
}

// readIgnore parses an ignore file; a missing one has no rules.
func readIgnore(file, base string) []ignoreRule {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil
	}
	var rules []ignoreRule
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		line := strings.TrimRight(sc.Text(), " \r")
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		r := ignoreRule{base: base}
		if strings.HasPrefix(line, "!") {
			r.negate, line = true, line[1:]
		} else if strings.HasPrefix(line, `\`) {
			line = line[1:]
		}
		if strings.HasSuffix(line, "/") {
			r.dirOnly, line = true, strings.TrimRight(line, "/")
		}
		if strings.Contains(line, "/") {
			r.anchored, line = true, strings.TrimPrefix(line, "/")
		}
		if line == "" {
			continue
		}
		r.pattern = line
		rules = append(rules, r)
	}
	return rules
}

// ignored applies the rules in order; the last that matches decides.
func ignored(rules []ignoreRule, rel string, isDir bool) bool {
	out := false
	for _, r := range rules {
		if r.dirOnly && !isDir {
			continue
		}
		sub := rel
		if r.base != "" {
			var ok bool
			if sub, ok = strings.CutPrefix(rel, r.base+"/"); !ok {
				continue
			}
		}
		var m bool
		if r.anchored {
			m = globMatch(r.pattern, sub)
		} else {
			m = globMatch(r.pattern, path.Base(sub))
		}
		if m {
			out = !r.negate
		}
	}
	return out
}

// matchAny reports whether rel matches one of the globs: a glob without a
// slash matches the base name, one with a slash the whole relative path;
// "**" matches any number of directories.
func matchAny(globs []string, rel string) bool {
	for _, g := range globs {
		g = strings.TrimPrefix(g, "./")
		if strings.Contains(g, "/") {
			if globMatch(strings.TrimSuffix(g, "/"), rel) {
				return true
			}
		} else if globMatch(g, path.Base(rel)) {
			return true
		}
	}
	return false
}

// globMatch matches a slash path against a pattern of path.Match segments
// where a "**" segment matches zero or more segments.
func globMatch(pattern, name string) bool {
	return matchSegs(strings.Split(pattern, "/"), strings.Split(name, "/"))
}

func matchSegs(ps, ns []string) bool {
	for len(ps) > 0 {
		if ps[0] == "**" {
			for k := 0; k <= len(ns); k++ {
				if matchSegs(ps[1:], ns[k:]) {
					return true
				}
			}
			return false
		}
		if len(ns) == 0 {
			return false
		}
		if ok, err := path.Match(ps[0], ns[0]); err != nil || !ok {
			return false
		}
		ps, ns = ps[1:], ns[1:]
	}
	return len(ns) == 0
}
