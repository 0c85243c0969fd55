package server

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"sync"

	"github.com/ctxkit/ctxkit/internal/netlimit"
	"github.com/ctxkit/ctxkit/server/api"
)

// body is one request body read into a pooled buffer, with the bytes it
// reserved from the handler's budget. release gives both back.
type body struct {
	buf    *[]byte
	held   int64
	budget *netlimit.Budget
	first  [512]byte // the first bytes, read before a buffer is taken
}

var (
	bodyPool    = sync.Pool{New: func() any { return new(body) }}
	bodyBufPool = sync.Pool{New: func() any { return new([]byte) }}
)

// bytes returns the body read so far.
func (b *body) bytes() []byte { return *b.buf }

// release returns the reservation, and the buffer to the pool unless it grew
// past 1 MiB (a rare large request should not pin its memory).
// The body must not be used after.
func (b *body) release() {
	b.budget.Give(b.held)
	if b.buf != nil && cap(*b.buf) > 0 && cap(*b.buf) <= 1<<20 {
		*b.buf = (*b.buf)[:0]
		bodyBufPool.Put(b.buf)
	}
	b.buf, b.held, b.budget = nil, 0, nil
	bodyPool.Put(b)
}

// grow makes room for the next read, reserving any new capacity first. The
// capacity at most doubles, and never passes what the body can still need:
// the declared length (when there is one) or the limit, plus one byte to
// see the end. So the memory a body holds follows the bytes that arrived,
// never a Content-Length a client merely announced.
func (b *body) grow(limit, declared int64) bool {
	cur := *b.buf
	need := limit + 1
	if declared >= 0 {
		need = min(need, declared+1)
	}
	c := netlimit.NextCap(len(cur), cap(cur), need)
	if c == int64(cap(cur)) {
		return true
	}
	if c > b.held {
		if !b.budget.Take(c - b.held) {
			return false
		}
		b.held = c
	}
	next := make([]byte, len(cur), c)
	copy(next, cur)
	*b.buf = next
	return true
}

// readBody checks the content type and reads the request body, never more
// than limit bytes. A declared Content-Length over the limit is refused
// before any byte is read; a body that grows past it is cut off at the
// limit. The body is read incrementally: no buffer is taken for it until
// its first bytes arrive, and its buffer only grows with what arrived,
// against the handler's budget of body bytes in flight (503 when it is
// spent). The caller must release the returned body, even with an error.
func (h *Handler) readBody(w http.ResponseWriter, r *http.Request) (*body, *api.Error) {
	b := bodyPool.Get().(*body)
	b.budget = h.bodies
	if e := checkContentType(r.Header.Get("Content-Type")); e != nil {
		return b, e
	}
	limit := h.maxBody
	if r.ContentLength > limit {
		return b, tooLarge(limit)
	}
	rd := http.MaxBytesReader(w, r.Body, limit)
	// Wait for the first bytes without holding a buffer: a client that
	// sends headers and then nothing costs the server no body memory.
	n, err := readSome(rd, b.first[:])
	b.buf = bodyBufPool.Get().(*[]byte)
	b.reserveHeld()
	*b.buf = append((*b.buf)[:0], b.first[:n]...)
	for err == nil {
		if !b.grow(limit, r.ContentLength) {
			return b, busy(h.bodies.Limit())
		}
		cur := *b.buf
		n, err = rd.Read(cur[len(cur):cap(cur)])
		*b.buf = cur[:len(cur)+n]
	}
	if err == io.EOF {
		return b, nil
	}
	var mbe *http.MaxBytesError
	switch {
	case errors.As(err, &mbe):
		return b, tooLarge(limit)
	case errors.Is(err, os.ErrDeadlineExceeded):
		return b, &api.Error{Status: http.StatusRequestTimeout, Code: api.CodeRequestTimeout,
			Message: "read body: the request body did not arrive within the request timeout"}
	default:
		return b, api.BadRequest("", "read body: %v", err)
	}
}

// readSome reads into p until it is full or r fails; io.EOF is passed on
// as is (unlike io.ReadFull, which would blur a short body with a broken
// one).
func readSome(r io.Reader, p []byte) (int, error) {
	n := 0
	for n < len(p) {
		m, err := r.Read(p[n:])
		n += m
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// reserveHeld reserves the capacity of the pooled buffer the body got; when
// the budget cannot cover it, the body starts with no buffer instead (grow
// reserves what it allocates).
func (b *body) reserveHeld() {
	c := int64(cap(*b.buf))
	if c > 0 && b.budget.Take(c) {
		b.held = c
		return
	}
	if c > 0 {
		*b.buf = nil
	}
}

func tooLarge(limit int64) *api.Error {
	return &api.Error{Status: http.StatusRequestEntityTooLarge, Code: api.CodeBodyTooLarge,
		Message: fmt.Sprintf("read body: the body exceeds the limit of %d bytes", limit)}
}

// busy is the answer when the bodies in flight hold the whole budget. The
// client may retry: the budget frees as requests finish.
func busy(limit int64) *api.Error {
	return &api.Error{Status: http.StatusServiceUnavailable, Code: api.CodeUnavailable, RetryAfter: 1,
		Message: "read body: the server is holding its limit of " + strconv.FormatInt(limit, 10) +
			" bytes of request bodies in flight; retry shortly"}
}
