package netlimit

import (
	"errors"
	"io"
	"sync/atomic"
)

// Budget bounds the bytes of request bodies held at once across the
// requests of one server. A request reserves what its buffer holds before
// the buffer grows, and gives it back when the request ends. The zero
// Budget holds nothing; make one with NewBudget.
type Budget struct {
	limit int64
	used  atomic.Int64
}

// NewBudget returns a budget of limit bytes.
func NewBudget(limit int64) *Budget { return &Budget{limit: limit} }

// Limit is the budget's size in bytes.
func (b *Budget) Limit() int64 { return b.limit }

// Used is how many bytes are reserved now.
func (b *Budget) Used() int64 { return b.used.Load() }

// Take reserves n bytes, or reports false (reserving nothing) when that
// would go over the limit.
func (b *Budget) Take(n int64) bool {
	if b.used.Add(n) > b.limit {
		b.used.Add(-n)
		return false
	}
	return true
}

// Give returns n reserved bytes.
func (b *Budget) Give(n int64) { b.used.Add(-n) }

// ReadChunk is the most a body read asks for at once, and the first buffer
// a body gets once its first bytes have arrived.
const ReadChunk = 32 << 10

// NextCap is the capacity a body buffer of length n and capacity c grows
// to when it needs room, for a body that can need at most need bytes (the
// declared length or the limit, plus one byte to see the end). It returns
// c when there is room enough already. The capacity at most doubles, so the
// memory a body holds follows the bytes that arrived, never a length a
// client merely announced.
func NextCap(n, c int, need int64) int64 {
	room := c - n
	if room >= ReadChunk || (room > 0 && int64(c) >= need) {
		return int64(c)
	}
	next := min(int64(max(2*c, n+ReadChunk)), need)
	if next <= int64(c) { // a full buffer at the limit: room to see the end
		next = int64(c) + 1
	}
	return next
}

// ErrTooLarge is returned by ReadBody for a body longer than its limit.
var ErrTooLarge = errors.New("netlimit: the body exceeds its limit")

// ErrBusy is returned by ReadBody when the budget cannot cover the body's
// next bytes: the bodies in flight hold it all. A client may retry.
var ErrBusy = errors.New("netlimit: the bodies in flight hold the whole budget")

// ReadBody reads r to its end, at most limit bytes, growing its buffer only
// as bytes arrive and reserving each growth from b first. declared is the
// length the client announced, or -1. It returns the body and the bytes it
// reserved, which the caller gives back when done with the body, also
// after an error. A body over the limit is ErrTooLarge; a spent budget is
// ErrBusy; r's own errors are passed on.
func ReadBody(r io.Reader, limit, declared int64, b *Budget) (body []byte, held int64, err error) {
	if declared > limit {
		return nil, 0, ErrTooLarge
	}
	need := limit + 1
	if declared >= 0 {
		need = min(need, declared+1)
	}
	// The first bytes go into a small array, so a client that sends headers
	// and then nothing costs no body memory.
	var first [512]byte
	n, err := io.ReadAtLeast(r, first[:], len(first))
	switch {
	case int64(n) > limit:
		return nil, 0, ErrTooLarge
	case err == io.EOF || err == io.ErrUnexpectedEOF:
		body = append([]byte(nil), first[:n]...)
		return body, 0, nil
	case err != nil:
		return nil, 0, err
	}
	for {
		if c := NextCap(len(body)+n, cap(body), need); c > int64(cap(body)) {
			if !b.Take(c - held) {
				return nil, held, ErrBusy
			}
			held = c
			next := make([]byte, len(body), c)
			copy(next, body)
			body = next
		}
		if n > 0 {
			body = append(body, first[:n]...)
			n = 0
			continue
		}
		m, err := r.Read(body[len(body):cap(body)])
		body = body[:len(body)+m]
		if int64(len(body)) > limit {
			return nil, held, ErrTooLarge
		}
		if err == io.EOF {
			return body, held, nil
		}
		if err != nil {
			return nil, held, err
		}
	}
}
