package files

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
)

// A store is two files: the base (IndexOptions.Store), an image of every
// file as it was at the last full build, and a delta beside it (Store +
// ".delta"), an image of every file that differs from the base now: files
// changed or added since, and the paths removed. A refresh that finds a
// change writes a new delta, so the next query on an unchanged tree trusts
// both and reads no file; when the delta would cover a tenth of the tree,
// the base is rebuilt instead. Both are written beside their name and
// renamed into place under the store's lock, and a delta names its base by
// checksum, so a reader never pairs a delta with another base.

// deltaPath names the delta of a store.
func deltaPath(store string) string { return store + ".delta" }

// storedIndex is a store mapped and checked, or why it could not be.
type storedIndex struct {
	seg   *segment // the base, with unmap set; nil if err is set
	delta *segment // the delta over seg, with unmap set; nil if there is none usable
	err   error    // os.ErrNotExist when there is none
	note  string   // why a delta present was not used
	// Every stored path, by path (see storedPaths): listed while the tree
	// is walked, as it needs only the store.
	at    map[string]int32
	paths []storedPath
}

// release unmaps what was mapped.
func (st storedIndex) release() {
	for _, s := range []*segment{st.seg, st.delta} {
		if s != nil {
			_ = s.unmap()
		}
	}
}

// mapSegment maps an image and decodes it with decode: checkSegment, or
// parseSegment for an image this process has just written.
func mapSegment(name string, decode func([]byte) (*segment, error)) (*segment, error) {
	data, unmap, err := mapFile(name)
	if err != nil {
		return nil, err
	}
	seg, err := decode(data)
	if err != nil {
		_ = unmap()
		return nil, err
	}
	seg.unmap = unmap
	return seg, nil
}

// mapStore maps a stored index and its delta and checks their images,
// whole or in part (see checkSegment).
func mapStore(name string, whole bool) storedIndex {
	check := func(data []byte) (*segment, error) { return checkSegment(data, whole) }
	seg, err := mapSegment(name, check)
	if err != nil {
		return storedIndex{err: err}
	}
	st := storedIndex{seg: seg}
	delta, err := mapSegment(deltaPath(name), check)
	switch {
	case errors.Is(err, os.ErrNotExist):
	case err != nil:
		st.note = err.Error()
	case delta.baseSum != seg.sum || delta.optionsSum != seg.optionsSum:
		_ = delta.unmap()
		st.note = "made over another base"
	default:
		st.delta = delta
	}
	st.at, st.paths = storedPaths(st.seg, st.delta)
	return st
}

// open reuses the stored index when it is sound; the caller holds the
// store's lock.
func (ix *Index) open(ctx context.Context, st storedIndex, files []walkFile, o *IndexOptions) error {
	switch {
	case errors.Is(st.err, os.ErrNotExist):
		return ix.rebuildAndStore(ctx, files, o)
	case st.err != nil:
		ix.logf(o, "index %s not used (%v); rebuilding", o.Store, st.err)
		return ix.rebuildAndStore(ctx, files, o)
	case st.seg.optionsSum != o.fingerprint():
		st.release()
		ix.logf(o, "index %s not used (built with other options); rebuilding", o.Store)
		return ix.rebuildAndStore(ctx, files, o)
	}
	if st.note != "" {
		ix.logf(o, "index %s not used (%s); reindexing what changed since its base", deltaPath(o.Store), st.note)
		// Removed now: when the tree is as the base, no delta replaces
		// it, and every later Build would report it again.
		if err := os.Remove(deltaPath(o.Store)); err != nil && !errors.Is(err, os.ErrNotExist) {
			st.release()
			return fmt.Errorf("store %s: %w", deltaPath(o.Store), err)
		}
	}
	return ix.refresh(ctx, st, files, o)
}

func (ix *Index) rebuildAndStore(ctx context.Context, files []walkFile, o *IndexOptions) error {
	b, err := ix.indexAll(ctx, files, o)
	if err != nil {
		return err
	}
	// The delta goes first: a base left without one is only older, and
	// the next refresh reindexes what differs from it.
	if err := os.Remove(deltaPath(o.Store)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	seg, err := writeSegment(o.Store, b)
	if err != nil {
		return err
	}
	ix.useBase(seg)
	ix.stats.State = StateRebuilt
	return nil
}

// writeSegment writes b's image to name atomically and maps it. The image
// is served from the file, as a later query would be: the process does not
// hold it in its heap as well.
func writeSegment(name string, b *builder) (*segment, error) {
	if err := writeAtomic(name, b.encodeTo); err != nil {
		return nil, err
	}
	return mapSegment(name, parseSegment) // summed as it was written
}

// writeAtomic writes an image beside name and renames it into place, so a
// reader sees the old index or the new one, never a torn one. encode
// writes the image after a header of zeros and returns the header.
func writeAtomic(name string, encode func(io.Writer) ([]byte, error)) error {
	f, err := os.CreateTemp(filepath.Dir(name), filepath.Base(name)+".tmp*")
	if err != nil {
		return err
	}
	hdr, werr := encode(f)
	if werr == nil {
		_, werr = f.WriteAt(hdr, 0)
	}
	if werr == nil {
		werr = f.Sync()
	}
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Rename(f.Name(), name)
	}
	if werr != nil {
		os.Remove(f.Name())
	}
	return werr
}

// storedPath is what the store says of one path: as it is now (the
// delta's entry over the base's) and as the base has it.
type storedPath struct {
	cur, base pathState
	seen      bool // the walk found the path
}

// pathState is one segment's entry for a path.
type pathState struct {
	ref           contentRef
	size, modTime int64
	ok            bool // the segment holds the path (and not as removed)
	binary        bool
}

func (p pathState) matches(f walkFile) bool {
	return p.ok && p.size == f.size && p.modTime == f.modTime
}

// storedPaths lists every path of the base and the delta (which may be
// nil), by path.
func storedPaths(base, delta *segment) (map[string]int32, []storedPath) {
	n := 0
	for _, c := range base.contents {
		n += len(c.paths)
	}
	at := make(map[string]int32, n)
	paths := make([]storedPath, 0, n)
	for si, s := range []*segment{base, delta} {
		if s == nil {
			continue
		}
		for ci, c := range s.contents {
			st := pathState{ref: contentRef{uint32(si), uint32(ci)}, ok: !c.gone, binary: c.binary}
			for _, p := range c.paths {
				i, ok := at[p.rel]
				if !ok {
					i = int32(len(paths))
					at[p.rel] = i
					paths = append(paths, storedPath{})
				}
				st.size, st.modTime = p.size, p.modTime
				paths[i].cur = st
				if si == 0 {
					paths[i].base = st
				}
			}
		}
	}
	return at, paths
}

// refresh compares the tree with the stored base and delta (if any) by size and modification time. When every file is as the store says,
// the store is used as it is; otherwise every file that differs from the
// base is indexed into a new delta, which is stored.
func (ix *Index) refresh(ctx context.Context, st storedIndex, files []walkFile, o *IndexOptions) error {
	base, delta, at, paths := st.seg, st.delta, st.at, st.paths
	ix.live = make(map[string]contentRef, len(files))
	var changed []walkFile // differ from the base: what a new delta holds
	fresh := true
	binBase, binCur := 0, 0
	for _, f := range files {
		i, ok := at[f.rel]
		if !ok {
			fresh = false
			changed = append(changed, f)
			continue
		}
		p := &paths[i]
		p.seen = true
		cur := p.cur
		if p.base.matches(f) {
			cur = p.base
		} else {
			changed = append(changed, f)
		}
		switch {
		case !cur.matches(f):
			fresh = false
		case cur.binary && cur == p.base:
			binBase++
		case cur.binary:
			binCur++
		default:
			ix.live[f.rel] = cur.ref
		}
	}
	var gone []string // base paths the tree no longer has
	for rel, i := range at {
		p := paths[i]
		if p.seen {
			continue
		}
		if p.cur.ok {
			fresh = false
		}
		if p.base.ok {
			gone = append(gone, rel)
		}
	}
	slices.Sort(gone)
	ix.segs = []*segment{base}
	if delta != nil {
		ix.segs = append(ix.segs, delta)
	}
	ix.stats.State = StateFresh
	if fresh {
		ix.stats.Skipped.Binary += binBase + binCur
		ix.markDead()
		return nil
	}
	if delta != nil {
		_ = delta.unmap()
	}
	// Many changes: a rebuild costs little more than the delta, and keeps
	// the next refresh fast.
	if len(changed) > 256 && len(changed)*10 > len(files) {
		_ = base.unmap()
		return ix.rebuildAndStore(ctx, files, o)
	}
	ix.stats.Skipped.Binary += binBase
	ix.stats.State = StateRefreshed
	return ix.storeDelta(ctx, base, changed, gone, o)
}

// storeDelta indexes the files that differ from base into a new delta,
// stores it and serves it over base. ix.live holds the base's live paths.
func (ix *Index) storeDelta(ctx context.Context, base *segment, changed []walkFile, gone []string, o *IndexOptions) error {
	for _, f := range changed {
		delete(ix.live, f.rel) // it may name the old delta
	}
	ix.segs = []*segment{base}
	if len(changed) == 0 && len(gone) == 0 {
		// The tree is back to the base.
		if err := os.Remove(deltaPath(o.Store)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
	} else {
		b := newBuilder(false, o.fingerprint())
		b.baseSum = base.sum
		if err := ix.indexFiles(ctx, b, changed, o); err != nil {
			return err
		}
		b.addGone(gone)
		seg, err := writeSegment(deltaPath(o.Store), b)
		if err != nil {
			return fmt.Errorf("store %s: %w", deltaPath(o.Store), err)
		}
		ix.segs = append(ix.segs, seg)
		for ci, c := range seg.contents {
			if c.binary || c.gone {
				continue
			}
			for _, p := range c.paths {
				ix.live[p.rel] = contentRef{1, uint32(ci)}
			}
		}
	}
	ix.markDead()
	return nil
}
