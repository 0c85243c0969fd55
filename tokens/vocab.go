package tokens

import (
	"bytes"
	"compress/gzip"
	_ "embed" // the rank tables
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"sync"
)

// The rank tables of the two encodings, as written by
// tokens/internal/rankgen from OpenAI's published rank files (the
// generator records their source and checksums).
var (
	//go:embed ranks/o200k_base.ranks.gz
	o200kRanks []byte
	//go:embed ranks/cl100k_base.ranks.gz
	cl100kRanks []byte
)

// noRank marks a byte string that is not a token.
const noRank = math.MaxUint32

// vocab is one encoding's mergeable ranks: an open-addressing hash table
// from token bytes to rank, over one string holding every token. It is
// built once and never written afterwards.
type vocab struct {
	blob   string   // every token, in rank order
	off    []uint32 // token r is blob[off[r]:off[r+1]]
	slots  []slot
	mask   uint64
	pairs  []uint32 // rank of every 2-byte string, by b0<<8 | b1
	filter []uint64 // bit per hash value of a token: most misses stop here
	maxLen int
}

// filterMask sizes the miss filter: 2^21 bits, 256 KB, about one bit in
// ten set, small enough to stay in a core's cache.
const filterMask = 1<<21 - 1

// slot is one hash table entry, kept together so a look-up touches one
// cache line.
type slot struct {
	meta uint64 // 0 empty, else tag<<40 | len<<32 | rank+1
	head uint64 // the token's first 8 bytes, packed
}

// lazyVocab parses an embedded rank table on first use, so a program that
// never counts exactly never pays for it.
type lazyVocab struct {
	data []byte
	once sync.Once
	v    *vocab
	err  error
}

var (
	o200kVocab  = &lazyVocab{data: o200kRanks}
	cl100kVocab = &lazyVocab{data: cl100kRanks}
)

func (l *lazyVocab) get() (*vocab, error) {
	l.once.Do(func() { l.v, l.err = parseRanks(l.data) })
	return l.v, l.err
}

// parseRanks reads rankgen's format: gzip of, for each rank from 0, a
// uvarint length and the token's bytes.
func parseRanks(data []byte) (*vocab, error) {
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("tokens: rank table: %w", err)
	}
	raw, err := io.ReadAll(zr)
	if err != nil {
		return nil, fmt.Errorf("tokens: rank table: %w", err)
	}
	blob := make([]byte, 0, len(raw))
	v := &vocab{off: make([]uint32, 1, 200_001)}
	for i := 0; i < len(raw); {
		n, k := binary.Uvarint(raw[i:])
		if k <= 0 || n == 0 || n > 255 || uint64(len(raw)-i-k) < n {
			return nil, fmt.Errorf("tokens: rank table: bad length at byte %d", i)
		}
		i += k
		blob = append(blob, raw[i:i+int(n)]...)
		v.off = append(v.off, uint32(len(blob)))
		v.maxLen = max(v.maxLen, int(n))
		i += int(n)
	}
	v.blob = string(blob)
	if err := v.index(); err != nil {
		return nil, err
	}
	for b := range 256 {
		if v.rank(string([]byte{byte(b)})) == noRank {
			return nil, fmt.Errorf("tokens: rank table: byte %#x has no token", b)
		}
	}
	return v, nil
}

// index builds the hash table, at most 4/5 full: a small table stays in
// cache, and the miss filter spares look-ups the longer probes.
func (v *vocab) index() error {
	n := v.tokens()
	size := 1
	for size*4 < n*5 {
		size *= 2
	}
	v.slots = make([]slot, size)
	v.filter = make([]uint64, (filterMask+1)/64)
	v.mask = uint64(size - 1)
	for r := range n {
		t := v.token(uint32(r))
		head := pack8(t)
		h := hashString(t, head)
		i := h & v.mask
		for v.slots[i].meta != 0 {
			e := v.slots[i].meta
			if v.token(uint32(e)-1) == t {
				return fmt.Errorf("tokens: rank table: token %q has ranks %d and %d", t, uint32(e)-1, r)
			}
			i = (i + 1) & v.mask
		}
		v.slots[i] = slot{meta: h>>40<<40 | uint64(len(t))<<32 | uint64(r+1), head: head}
		f := h >> 16 & filterMask
		v.filter[f/64] |= 1 << (f % 64)
	}
	v.pairs = make([]uint32, 1<<16)
	for k := range v.pairs {
		v.pairs[k] = v.rank(string([]byte{byte(k >> 8), byte(k)}))
	}
	return nil
}

// tokens returns the number of tokens.
func (v *vocab) tokens() int { return len(v.off) - 1 }

// token returns the bytes of rank r.
func (v *vocab) token(r uint32) string { return v.blob[v.off[r]:v.off[r+1]] }

// rank returns the rank of the byte string b, or noRank. Most look-ups
// are of a few bytes, which the packed heads compare without reading the
// token itself.
func (v *vocab) rank(b string) uint32 {
	if len(b) > v.maxLen {
		return noRank
	}
	head := pack8(b)
	h := hashString(b, head)
	if f := h >> 16 & filterMask; v.filter[f/64]&(1<<(f%64)) == 0 {
		return noRank
	}
	want := h>>40<<40 | uint64(len(b))<<32
	for i := h & v.mask; ; i = (i + 1) & v.mask {
		sl := &v.slots[i]
		if sl.meta == 0 {
			return noRank
		}
		if sl.meta&^0xffffffff == want && sl.head == head {
			r := uint32(sl.meta) - 1
			if len(b) <= 8 || v.token(r)[8:] == b[8:] {
				return r
			}
		}
	}
}

// pack8 packs the first 8 bytes of s (fewer if s is shorter) into a word.
func pack8(s string) uint64 {
	if len(s) >= 8 {
		return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
			uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
	}
	// Two overlapping loads instead of a loop: where they overlap both
	// hold the same bytes at the same places, so OR keeps them.
	switch n := len(s); {
	case n >= 4:
		return uint64(load32(s)) | uint64(load32(s[n-4:]))<<(8*(n-4))
	case n >= 2:
		return uint64(load16(s)) | uint64(load16(s[n-2:]))<<(8*(n-2))
	case n == 1:
		return uint64(s[0])
	}
	return 0
}

func load32(s string) uint32 {
	return uint32(s[0]) | uint32(s[1])<<8 | uint32(s[2])<<16 | uint32(s[3])<<24
}

func load16(s string) uint16 { return uint16(s[0]) | uint16(s[1])<<8 }

// hashString mixes s, whose first 8 bytes are head, 8 bytes at a time (a
// multiply-xorshift hash); the low bits pick a slot and the high 24 are
// kept as a tag.
func hashString(s string, head uint64) uint64 {
	h := (uint64(len(s))*0x9E3779B97F4A7C15 ^ head) * 0xff51afd7ed558ccd
	for s = s[min(len(s), 8):]; len(s) > 0; s = s[min(len(s), 8):] {
		h ^= h >> 32
		h = (h ^ pack8(s)) * 0xc4ceb9fe1a85ec53
	}
	h ^= h >> 29
	h *= 0xff51afd7ed558ccd
	h ^= h >> 32
	return h
}
