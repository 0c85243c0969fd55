package server

import (
	"bytes"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/ctxkit/ctxkit/internal/netlimit"
	"github.com/ctxkit/ctxkit/server/api"
)

// choppy returns its data in pieces of random length, as a network would.
type choppy struct {
	data []byte
	rng  *rand.Rand
}

func (c *choppy) Read(p []byte) (int, error) {
	if len(c.data) == 0 {
		return 0, io.EOF
	}
	n := min(len(p), len(c.data), 1+c.rng.IntN(70<<10))
	copy(p, c.data[:n])
	c.data = c.data[n:]
	return n, nil
}

// TestReadBodyProperty: for random sizes around the limit, declared or
// chunked, arriving in random pieces, readBody returns exactly the body
// (or 413 past the limit), holds no more of the budget than a body of its
// size needs, and gives the budget back on release.
func TestReadBodyProperty(t *testing.T) {
	const limit = 256 << 10
	h := New(&Options{MaxBodyBytes: limit})
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 80 {
		size := rng.IntN(limit + limit/4)
		if i%10 == 0 {
			size = rng.IntN(600)
		}
		data := bytes.Repeat([]byte("abcdefghijklmnopqrstuvwxyz0123456789"[rng.IntN(10):]), size/26+1)[:size]
		declared := rng.IntN(2) == 0
		r := httptest.NewRequest(http.MethodPost, api.PathCompose, &choppy{data: data, rng: rng})
		r.Header.Set("Content-Type", "application/json")
		r.ContentLength = -1
		if declared {
			r.ContentLength = int64(size)
		}
		w := httptest.NewRecorder()
		b, e := h.readBody(w, r)
		held := b.held
		switch {
		case size > limit:
			if e == nil || e.Status != http.StatusRequestEntityTooLarge {
				t.Fatalf("size %d over the limit %d (declared %v): %v", size, limit, declared, e)
			}
		case e != nil:
			t.Fatalf("size %d (declared %v): %v", size, declared, e)
		case !bytes.Equal(b.bytes(), data):
			t.Fatalf("size %d (declared %v): got %d bytes back, not the body", size, declared, len(b.bytes()))
		}
		// A pooled buffer of up to 1 MiB may be reused as it is; beyond
		// it, the reservation follows what arrived.
		if held > int64(max(2*size+2*netlimit.ReadChunk, 1<<20)) || held > limit+1 && held > 1<<20 {
			t.Fatalf("size %d (declared %v): %d bytes of the budget held", size, declared, held)
		}
		b.release()
		if n := h.bodies.Used(); n != 0 {
			t.Fatalf("after release, %d bytes of the budget still held", n)
		}
	}
}

// TestReadBodyDeclaredButUnsent: a request that declares a large body and
// sends none of it holds no buffer and none of the budget while waiting.
func TestReadBodyDeclaredButUnsent(t *testing.T) {
	h := New(nil)
	pr, pw := io.Pipe()
	r := httptest.NewRequest(http.MethodPost, api.PathCompose, pr)
	r.Header.Set("Content-Type", "application/json")
	r.ContentLength = defaultMaxBodyBytes
	done := make(chan *api.Error, 1)
	go func() {
		b, e := h.readBody(httptest.NewRecorder(), r)
		b.release()
		done <- e
	}()
	if _, err := pw.Write([]byte("[")); err != nil { // one byte, then nothing
		t.Fatal(err)
	}
	time.Sleep(20 * time.Millisecond)
	if n := h.bodies.Used(); n != 0 {
		t.Fatalf("one byte of an announced %d held %d bytes of the budget", defaultMaxBodyBytes, n)
	}
	pw.CloseWithError(io.ErrUnexpectedEOF)
	if e := <-done; e == nil || e.Status != http.StatusBadRequest {
		t.Fatalf("a body cut short: %v", e)
	}
}
