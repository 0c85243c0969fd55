package files

import (
	"bytes"
	"hash/maphash"
	"sync"
	"sync/atomic"
)

// dictShards is how many independently locked parts a termDict has: with
// one per few cores, two workers seldom wait on one lock.
const dictShards = 64

// termDict numbers the distinct terms of one builder. The indexing
// workers share it, so the merge appends postings by number without
// hashing each term of each chunk again on one goroutine.
//
// A cold index of a large tree holds half a million terms, so the
// dictionary keeps them compactly rather than as a map of strings (which
// cost four times as much, the largest part of a cold index's peak
// memory): each shard stores its terms back to back in one byte slice and
// finds them through an open-addressing table of 4-byte slots. Ids are
// dense, in the order terms were first seen, so the builder's per-term
// tables have no holes.
type termDict struct {
	seed   maphash.Seed
	next   atomic.Uint32 // the id the next new term gets
	shards [dictShards]dictShard
	where  []uint32 // id -> shard<<26 | number in shard; made by term
}

// dictShard is one locked part of a termDict.
type dictShard struct {
	mu    sync.Mutex
	data  []byte   // the shard's terms, back to back
	ends  []uint32 // end offset in data of each term
	ids   []uint32 // the dictionary's id of each term
	table []uint32 // number in the shard + 1 of the term hashed there, 0 if free
}

func newTermDict() *termDict { return &termDict{seed: maphash.MakeSeed()} }

// id returns t's id, numbering it if it is new.
func (d *termDict) id(t []byte) uint32 {
	h := maphash.Bytes(d.seed, t)
	si := h % dictShards
	s := &d.shards[si]
	s.mu.Lock()
	id := s.lookup(d, t, h/dictShards)
	s.mu.Unlock()
	return id
}

// term returns the bytes of the term numbered id. Only the builder calls
// it, once the workers are done.
func (d *termDict) term(id uint32) []byte {
	if len(d.where) != int(d.next.Load()) {
		d.where = make([]uint32, d.next.Load())
		for si := range d.shards {
			for local, id := range d.shards[si].ids {
				d.where[id] = uint32(si)<<26 | uint32(local)
			}
		}
	}
	w := d.where[id]
	return d.shards[w>>26].term(w & (1<<26 - 1))
}

func (s *dictShard) term(local uint32) []byte {
	start := uint32(0)
	if local > 0 {
		start = s.ends[local-1]
	}
	return s.data[start:s.ends[local]]
}

// lookup finds or adds t, whose hash (within the shard) is h, and returns
// its id.
func (s *dictShard) lookup(d *termDict, t []byte, h uint64) uint32 {
	if 2*(len(s.ends)+1) > len(s.table) {
		s.grow(d.seed)
	}
	mask := uint64(len(s.table) - 1)
	for i := h & mask; ; i = (i + 1) & mask {
		v := s.table[i]
		if v == 0 {
			s.data = append(s.data, t...)
			s.ends = append(s.ends, uint32(len(s.data)))
			s.table[i] = uint32(len(s.ends))
			id := d.next.Add(1) - 1
			s.ids = append(s.ids, id)
			return id
		}
		if bytes.Equal(s.term(v-1), t) {
			return s.ids[v-1]
		}
	}
}

// grow doubles the table (keeping it at most half full) and places every
// term again.
func (s *dictShard) grow(seed maphash.Seed) {
	s.table = make([]uint32, max(64, 2*len(s.table)))
	mask := uint64(len(s.table) - 1)
	for local := range s.ends {
		i := (maphash.Bytes(seed, s.term(uint32(local))) / dictShards) & mask
		for s.table[i] != 0 {
			i = (i + 1) & mask
		}
		s.table[i] = uint32(local + 1)
	}
}
