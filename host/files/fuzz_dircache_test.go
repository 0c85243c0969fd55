package files

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// seedDirCache returns a listing cache as the walk writes it, with a
// record whose names are as a listing holds them, an empty directory, and
// records holding names that would leave the directory.
func seedDirCache(tb testing.TB) []byte {
	tb.Helper()
	var cw dirCacheWriter
	id := dirIdent{dev: 2049, ino: 1234567, ctime: 1700000000123456789, mtime: 1700000000123456789}
	names := []byte("a.mdb.gosubz.txt")
	cw.add("", id, names, []rawEntry{{0, 4, entryFile}, {4, 4, entryFile}, {8, 3, entryDir}, {11, 5, entryUnknown}})
	id.ino++
	cw.add("sub", id, nil, nil)
	for i, bad := range []string{"../outside.md", "..", ".", "x/../../y", "a\x00b"} {
		id.ino++
		cw.add("bad"+string(rune('0'+i)), id, []byte("a.md"+bad), []rawEntry{{0, 4, entryFile}, {4, uint32(len(bad)), entryFile}})
	}
	id.ino++
	cw.add("unsorted", id, []byte("zzaa"), []rawEntry{{0, 2, entryFile}, {2, 2, entryFile}})
	name := filepath.Join(tb.TempDir(), "s.idx.dirs")
	if err := cw.write(name); err != nil {
		tb.Fatal(err)
	}
	data, err := os.ReadFile(name)
	if err != nil {
		tb.Fatal(err)
	}
	return data
}

// resealDirCache returns data with the magic and version set and the
// checksum recomputed, so what the checksum guards reaches the decoder.
func resealDirCache(data []byte) []byte {
	const hdr = dirCacheHeader
	out := append([]byte(nil), data...)
	if len(out) < hdr+1 {
		out = append(out, make([]byte, hdr+1-len(out))...)
	}
	copy(out, dirCacheMagic)
	binary.LittleEndian.PutUint32(out[8:], dirCacheVersion)
	binary.LittleEndian.PutUint32(out[12:], crc32.Checksum(out[hdr:], castagnoli))
	return out
}

// checkDirCache decodes data as a listing cache and every record in it:
// an error is the package's corrupt or other-format error, the map is
// sized by what the bytes can hold, and a record whose entries are used
// holds only names a listing could: non-empty, without a slash or NUL,
// not "." or "..", in strictly increasing order.
func checkDirCache(t *testing.T, data []byte) {
	c, err := parseDirCache(data)
	if err != nil {
		if !errors.Is(err, errCorrupt) && !errors.Is(err, errOtherVersion) {
			t.Fatalf("error %v is neither errCorrupt nor errOtherVersion", err)
		}
		return
	}
	if len(c.at) > len(data) {
		t.Fatalf("%d records from %d bytes", len(c.at), len(data))
	}
	var lb listBuf
	for rel, rec := range c.at {
		if rec.off < 0 || rec.off > rec.end || rec.end > len(data) {
			t.Fatalf("record %q: range %d..%d of %d bytes", rel, rec.off, rec.end, len(data))
		}
		if !c.entries(rec, &lb) {
			continue
		}
		if len(lb.raw) != rec.n {
			t.Fatalf("record %q: %d entries, says %d", rel, len(lb.raw), rec.n)
		}
		var prev []byte
		for i, r := range lb.raw {
			name := lb.names[r.off : r.off+r.n]
			if len(name) == 0 || bytes.ContainsAny(name, "/\x00") || string(name) == "." || string(name) == ".." {
				t.Fatalf("record %q: name %q used", rel, name)
			}
			if i > 0 && bytes.Compare(prev, name) >= 0 {
				t.Fatalf("record %q: %q after %q", rel, name, prev)
			}
			prev = name
		}
	}
}

// FuzzListingCache feeds listing caches to the loader as they are and
// re-sealed so their checksum holds: nothing panics, a corrupt cache is
// refused with errCorrupt (and so set aside), and no name that would
// leave its directory is used.
func FuzzListingCache(f *testing.F) {
	f.Add(seedDirCache(f))
	f.Fuzz(func(t *testing.T, data []byte) {
		checkDirCache(t, data)
		checkDirCache(t, resealDirCache(data))
	})
}

// The seed cache decodes, its good record's names are used, and every
// record with a name that leaves the directory, or out of order, is not.
func TestListingCacheSeedRecords(t *testing.T) {
	c, err := parseDirCache(seedDirCache(t))
	if err != nil {
		t.Fatal(err)
	}
	var lb listBuf
	if !c.entries(c.at[""], &lb) || string(lb.names) != "a.mdb.gosubz.txt" {
		t.Fatalf("good record: names %q", lb.names)
	}
	if !c.entries(c.at["sub"], &lb) || len(lb.raw) != 0 {
		t.Fatalf("empty record: %d entries", len(lb.raw))
	}
	for _, rel := range []string{"bad0", "bad1", "bad2", "bad3", "bad4", "unsorted"} {
		rec, ok := c.at[rel]
		if !ok || c.entries(rec, &lb) {
			t.Fatalf("record %q (present %v) used", rel, ok)
		}
	}
}

// A cache whose checksum holds but whose count claims more records than
// its bytes can hold is refused before the count sizes the map.
func TestListingCacheCountBounded(t *testing.T) {
	data := seedDirCache(t)
	binary.LittleEndian.PutUint32(data[16:], 1<<31-1)
	if _, err := parseDirCache(resealDirCache(data)); !errors.Is(err, errCorrupt) {
		t.Fatalf("got %v, want errCorrupt", err)
	}
	// A count of the file's size was let through to size the map before
	// the records ran out: allocations many times the cache's size.
	binary.LittleEndian.PutUint32(data[16:], uint32(len(data)))
	data = resealDirCache(data)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	_, err := parseDirCache(data)
	runtime.ReadMemStats(&after)
	if !errors.Is(err, errCorrupt) {
		t.Fatalf("count of the cache's size: got %v, want errCorrupt", err)
	}
	if got := after.TotalAlloc - before.TotalAlloc; got > uint64(8*len(data)) {
		t.Fatalf("refusing a %d-byte cache allocated %d bytes", len(data), got)
	}
}
