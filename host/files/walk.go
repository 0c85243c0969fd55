package files

import (
	"bufio"
	"bytes"
	"context"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
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

// Total is the number of paths left out or folded into another.
func (s Skipped) Total() int {
	return s.Binary + s.TooLarge + s.Unreadable + s.Symlinks + s.Ignored + s.Excluded + s.Hidden + s.DefaultDirs + s.Duplicates
}

// walkFile is a regular file found by the walk.
type walkFile struct {
	rel     string
	abs     string
	size    int64
	modTime int64
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
}

func (w *walker) walk(ctx context.Context) error {
	w.skipSet = make(map[string]bool)
	if !w.opts.NoDefaultSkips {
		for _, d := range DefaultSkipDirs {
			w.skipSet[d] = true
		}
	}
	return w.dir(ctx, w.root, "", nil)
}

// dir lists one directory, in name order, with the ignore rules in force.
func (w *walker) dir(ctx context.Context, abs, rel string, rules []ignoreRule) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	entries, err := os.ReadDir(abs)
	if err != nil {
		w.skipped.Unreadable++
		return nil
	}
	if !w.opts.NoIgnoreFiles {
		for _, name := range []string{".gitignore", ".ignore"} {
			rules = append(rules, readIgnore(filepath.Join(abs, name), rel)...)
		}
	}
	for _, e := range entries {
		name := e.Name()
		r := name
		if rel != "" {
			r = rel + "/" + name
		}
		childAbs := filepath.Join(abs, name)
		if e.Type()&fs.ModeSymlink != 0 {
			w.skipped.Symlinks++
			continue
		}
		isDir := e.IsDir()
		switch {
		case strings.HasPrefix(name, ".") && !w.opts.NoDefaultSkips:
			w.skipped.Hidden++
			continue
		case ignored(rules, r, isDir):
			w.skipped.Ignored++
			continue
		case isDir && w.skipSet[name]:
			w.skipped.DefaultDirs++
			continue
		case matchAny(w.opts.Exclude, r):
			w.skipped.Excluded++
			continue
		}
		if isDir {
			if err := w.dir(ctx, childAbs, r, rules); err != nil {
				return err
			}
			continue
		}
		if !e.Type().IsRegular() {
			continue
		}
		if len(w.opts.Include) > 0 && !matchAny(w.opts.Include, r) {
			w.skipped.Excluded++
			continue
		}
		info, err := e.Info()
		if err != nil {
			w.skipped.Unreadable++
			continue
		}
		if info.Size() > w.opts.maxFileSize() {
			w.skipped.TooLarge++
			continue
		}
		w.files = append(w.files, walkFile{rel: r, abs: childAbs, size: info.Size(), modTime: info.ModTime().UnixNano()})
	}
	return nil
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
