package files

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"sync"
	"time"
	"unsafe"
)

// A listing cache (Store + ".dirs") keeps, for each directory of the tree,
// the names it held when it was last listed, with the directory's inode,
// change time and modification time. Adding, removing or renaming an entry
// changes the directory's change time (which no program can set back), so
// while all three are as cached the names are too, and a warm query reads
// them from the cache instead of listing the directory: one fstat instead
// of two getdents calls and a sort. Files are still stated one by one.
// Only directories on the root's device, on a local file system known to
// keep these times (see cacheableFS), are cached.
//
// A listing is cached only when the directory's times are older than the
// listing by racyMargin: file systems keep times in coarse ticks, and an
// entry added in the tick the directory was listed in would leave its
// times unchanged.

const (
	dirCacheMagic   = "CTXKDIR1"
	dirCacheVersion = 1
	// dirCacheHeader is the header's size: magic, version, checksum of
	// the records, record count.
	dirCacheHeader = 8 + 4 + 4 + 4
)

// racyMargin is how much older than its listing a directory's times must
// be for the listing to be cached. A variable for tests.
var racyMargin = 2 * time.Second

// dirCachePath names the listing cache of a store.
func dirCachePath(store string) string { return store + ".dirs" }

// dirIdent is what says a directory's entries are unchanged.
type dirIdent struct {
	dev, ino     uint64
	ctime, mtime int64 // Unix nanoseconds
}

// dirCache is a listing cache read from disk: records by relative path.
type dirCache struct {
	data []byte
	at   map[string]dirRecord
}

// dirRecord is one directory's cached listing: its entries, encoded
// (kind, name length, name) from data[off:end].
type dirRecord struct {
	id       dirIdent
	off, end int
	n        int
}

// loadDirCache reads a listing cache; a missing one is empty.
func loadDirCache(name string) (*dirCache, error) {
	data, err := os.ReadFile(name)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return parseDirCache(data)
}

// parseDirCache decodes a listing cache read from disk. data is the
// cache's and never written: the paths share it.
func parseDirCache(data []byte) (*dirCache, error) {
	const hdr = dirCacheHeader
	if len(data) <= hdr || string(data[:8]) != dirCacheMagic {
		return nil, fmt.Errorf("%w: bad magic", errCorrupt)
	}
	if v := binary.LittleEndian.Uint32(data[8:]); v != dirCacheVersion {
		return nil, fmt.Errorf("%w: version %d, this ctxkit reads %d", errOtherVersion, v, dirCacheVersion)
	}
	if crc32.Checksum(data[hdr:], castagnoli) != binary.LittleEndian.Uint32(data[12:]) {
		return nil, fmt.Errorf("%w: checksum mismatch", errCorrupt)
	}
	n := int(binary.LittleEndian.Uint32(data[16:]))
	// A record takes seven bytes at least (its path's length and six
	// varints): a count the cache cannot hold must not size the map.
	if n > (len(data)-hdr)/7 {
		return nil, fmt.Errorf("%w: directory count", errCorrupt)
	}
	c := &dirCache{data: data, at: make(map[string]dirRecord, n)}
	r := reader{b: data[hdr:], str: unsafe.String(&data[hdr], len(data)-hdr)}
	for range n {
		rel := r.string(r.uvarint())
		var rec dirRecord
		rec.id.dev = r.uvarint()
		rec.id.ino = r.uvarint()
		rec.id.ctime = int64(r.uvarint())
		rec.id.mtime = int64(r.uvarint())
		rec.n = int(r.uvarint())
		size := r.uvarint()
		rec.off = len(data) - len(r.b)
		if r.bytes(size) == nil && size > 0 {
			break
		}
		rec.end = rec.off + int(size)
		c.at[rel] = rec
	}
	if r.err != nil {
		return nil, r.err
	}
	return c, nil
}

// entries decodes a record's names into lb, as a listing would. It
// reports false, and the directory is listed, unless every name is one a
// listing could hold, in strictly increasing order as listings are
// cached: a name with a slash or a NUL byte, or "." or "..", would make
// the walk read a path outside the directory (and the root), and a
// repeated name would index a path twice.
func (c *dirCache) entries(rec dirRecord, lb *listBuf) bool {
	lb.names, lb.raw = lb.names[:0], lb.raw[:0]
	b := c.data[rec.off:rec.end]
	var prev []byte
	for range rec.n {
		if len(b) < 2 {
			return false
		}
		kind, n := entryKind(b[0]), int(b[1])
		if len(b) < 2+n || n == 0 || kind > entryUnknown {
			return false
		}
		name := b[2 : 2+n]
		if bytes.IndexByte(name, '/') >= 0 || bytes.IndexByte(name, 0) >= 0 ||
			name[0] == '.' && (n == 1 || n == 2 && name[1] == '.') ||
			prev != nil && bytes.Compare(prev, name) >= 0 {
			return false
		}
		prev = name
		lb.raw = append(lb.raw, rawEntry{off: uint32(len(lb.names)), n: uint32(n), kind: kind})
		lb.names = append(lb.names, name...)
		b = b[2+n:]
	}
	return len(b) == 0
}

// dirCacheWriter collects the listings of one walk, to cache them.
type dirCacheWriter struct {
	mu     sync.Mutex
	recs   []byte // encoded records of the directories listed
	listed int    // records in recs: made from a listing, not copied from the cache
	cache  *dirCache
	kept   []keptRecord // records of the cache, used as they are
}

// keptRecord is a directory whose cached listing a walk used.
type keptRecord struct {
	rel string
	rec dirRecord
}

// add records a directory listed now (names and raw as list left them).
// Names longer than 255 bytes (no Linux file system has them) make the
// directory uncacheable.
func (cw *dirCacheWriter) add(rel string, id dirIdent, names []byte, raw []rawEntry) {
	var body []byte
	for _, r := range raw {
		if r.n > 255 {
			return
		}
		body = append(body, byte(r.kind), byte(r.n))
		body = append(body, names[r.off:r.off+r.n]...)
	}
	cw.mu.Lock()
	defer cw.mu.Unlock()
	cw.recs = appendDirRecord(cw.recs, rel, id, len(raw), body)
	cw.listed++
}

// keep records a directory whose cached listing (of cw.cache) was used.
func (cw *dirCacheWriter) keep(rel string, rec dirRecord) {
	cw.mu.Lock()
	defer cw.mu.Unlock()
	cw.kept = append(cw.kept, keptRecord{rel, rec})
}

func appendDirRecord(b []byte, rel string, id dirIdent, n int, body []byte) []byte {
	b = binary.AppendUvarint(b, uint64(len(rel)))
	b = append(b, rel...)
	b = binary.AppendUvarint(b, id.dev)
	b = binary.AppendUvarint(b, id.ino)
	b = binary.AppendUvarint(b, uint64(id.ctime))
	b = binary.AppendUvarint(b, uint64(id.mtime))
	b = binary.AppendUvarint(b, uint64(n))
	b = binary.AppendUvarint(b, uint64(len(body)))
	return append(b, body...)
}

// write stores the cache atomically.
func (cw *dirCacheWriter) write(name string) error {
	n := cw.listed + len(cw.kept)
	for _, k := range cw.kept {
		cw.recs = appendDirRecord(cw.recs, k.rel, k.rec.id, k.rec.n, cw.cache.data[k.rec.off:k.rec.end])
	}
	cw.kept = nil
	return writeAtomic(name, func(w io.Writer) ([]byte, error) {
		hdr := make([]byte, dirCacheHeader)
		copy(hdr, dirCacheMagic)
		binary.LittleEndian.PutUint32(hdr[8:], dirCacheVersion)
		binary.LittleEndian.PutUint32(hdr[12:], crc32.Checksum(cw.recs, castagnoli))
		binary.LittleEndian.PutUint32(hdr[16:], uint32(n))
		if _, err := w.Write(make([]byte, len(hdr))); err != nil {
			return nil, err
		}
		_, err := w.Write(cw.recs)
		return hdr, err
	})
}
