package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strconv"

	"github.com/ctxkit/ctxkit/host/files"
)

// filesFlags are the files provider's flags, shared by query and provider.
type filesFlags struct {
	index          string
	noIndex        bool
	include        repeated
	exclude        repeated
	maxFileSize    int64
	noDefaultSkips bool
	noIgnore       bool
}

// filesFlagsUsage documents filesFlags for the commands' usage texts.
const filesFlagsUsage = `  --index PATH          keep the index of DIR in PATH (several DIRs: PATH.1,
                        PATH.2, ...); default: the user cache directory, keyed
                        by DIR's absolute path
  --no-index            index in memory only; nothing is written
  --include GLOB        index only files matching GLOB (repeatable; a GLOB with
                        a slash matches the path under DIR, ** any depth)
  --exclude GLOB        leave out files and directories matching GLOB (repeatable)
  --max-file-size N     skip files larger than N bytes (default %d)
  --no-default-skips    also index hidden files and directories and
                        node_modules, vendor, build, dist, target, ...
  --no-ignore           do not read .gitignore and .ignore files
`

func (f *filesFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.index, "index", "", "")
	fs.BoolVar(&f.noIndex, "no-index", false, "")
	fs.Var(&f.include, "include", "")
	fs.Var(&f.exclude, "exclude", "")
	fs.Int64Var(&f.maxFileSize, "max-file-size", files.DefaultMaxFileSize, "")
	fs.BoolVar(&f.noDefaultSkips, "no-default-skips", false, "")
	fs.BoolVar(&f.noIgnore, "no-ignore", false, "")
}

// check reports a flag combination that cannot work.
func (f *filesFlags) check() error {
	switch {
	case f.index != "" && f.noIndex:
		return fmt.Errorf("--index and --no-index contradict each other")
	case f.maxFileSize <= 0:
		return fmt.Errorf("--max-file-size must be a positive number of bytes")
	}
	return nil
}

// build indexes every DIR and returns one files provider over all of them.
// progress, if non-nil, gets progress lines (a terminal); log gets messages
// such as a corrupt index being rebuilt, always.
func (f *filesFlags) build(ctx context.Context, dirs []string, progress, log io.Writer) (*files.Provider, error) {
	var ixs []*files.Index
	for i, dir := range dirs {
		o := &files.IndexOptions{
			MaxFileSize: f.maxFileSize, Progress: progress, Log: log,
			Include: f.include, Exclude: f.exclude, NoDefaultSkips: f.noDefaultSkips, NoIgnoreFiles: f.noIgnore,
		}
		switch {
		case f.noIndex:
		case f.index != "" && len(dirs) == 1:
			o.Store = f.index
		case f.index != "":
			o.Store = f.index + "." + strconv.Itoa(i+1)
		default:
			p, err := files.DefaultIndexPath(dir)
			if err != nil {
				return nil, fmt.Errorf("no cache directory for the index of %s (use --index PATH or --no-index): %w", dir, err)
			}
			o.Store = p
		}
		ix, err := files.Build(ctx, dir, o)
		if err != nil {
			for _, done := range ixs {
				_ = done.Close()
			}
			return nil, err
		}
		ixs = append(ixs, ix)
	}
	return files.New(ixs...), nil
}

// writeIndexReport prints one line per indexed root for the audit: what it
// holds, whether the stored index was fresh, refreshed or rebuilt, how long
// that took, and every file left out by reason.
func writeIndexReport(w io.Writer, p *files.Provider) {
	for _, ix := range p.Indexes() {
		st := ix.Stats()
		root := ix.Label()
		if root == "" {
			root = ix.Root()
		}
		fmt.Fprintf(w, "# index %s\n", st.Summary(root))
	}
}

// indexStats lists each root's statistics for --format json (nil without
// a files provider).
func indexStats(p *files.Provider) []files.Stats {
	if p == nil {
		return nil
	}
	var out []files.Stats
	for _, ix := range p.Indexes() {
		out = append(out, ix.Stats())
	}
	return out
}
