package netlimit

import (
	"bytes"
	"errors"
	"io"
	"math/rand/v2"
	"net"
	"testing"
	"time"
)

// choppy hands out its data in pieces of the given sizes in turn, as a
// network would.
type choppy struct {
	data   []byte
	pieces []int
	i      int
}

func (c *choppy) Read(p []byte) (int, error) {
	if len(c.data) == 0 {
		return 0, io.EOF
	}
	n := len(c.data)
	if len(c.pieces) > 0 {
		n = min(n, max(1, c.pieces[c.i%len(c.pieces)]))
		c.i++
	}
	n = copy(p, c.data[:n])
	c.data = c.data[n:]
	return n, nil
}

// checkRead reads data through ReadBody and checks the body, the error
// and what was held against the budget.
func checkRead(t *testing.T, data []byte, pieces []int, limit, declared, budget int64) {
	t.Helper()
	b := NewBudget(budget)
	body, held, err := ReadBody(&choppy{data: data, pieces: pieces}, limit, declared, b)
	defer func() {
		b.Give(held)
		if b.Used() != 0 {
			t.Fatalf("%d bytes still reserved after giving back what was held", b.Used())
		}
	}()
	if held != b.Used() {
		t.Fatalf("held %d, budget used %d", held, b.Used())
	}
	if held > budget {
		t.Fatalf("held %d over the budget %d", held, budget)
	}
	size := int64(len(data))
	switch {
	case size > limit || declared > limit:
		if !errors.Is(err, ErrTooLarge) {
			t.Fatalf("%d bytes (declared %d) over the limit %d: %v", size, declared, limit, err)
		}
	case errors.Is(err, ErrBusy):
		if held+ReadChunk <= budget && held < size/2 {
			t.Fatalf("busy with %d held of a budget of %d for %d bytes", held, budget, size)
		}
	case err != nil:
		t.Fatalf("%d bytes: %v", size, err)
	default:
		if !bytes.Equal(body, data) {
			t.Fatalf("body of %d bytes differs from the %d sent", len(body), size)
		}
		// The buffer follows what arrived: at most about twice the body.
		if held > 2*size+2*ReadChunk {
			t.Fatalf("held %d for a body of %d", held, size)
		}
	}
}

func TestReadBodyProperties(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		size := r.IntN(1 << r.IntN(20))
		data := make([]byte, size)
		for i := range data {
			data[i] = byte(r.UintN(256))
		}
		limit := int64(r.IntN(1 << r.IntN(21)))
		declared := int64(-1)
		if r.IntN(2) == 0 {
			declared = int64(size)
		}
		budget := max(limit+1, int64(r.IntN(4<<20)))
		pieces := []int{1 + r.IntN(1<<r.IntN(17)), 1 + r.IntN(100)}
		checkRead(t, data, pieces, limit, declared, budget)
	}
}

// A declared length over the limit is refused before anything is read.
func TestReadBodyRefusesADeclaredLengthUnread(t *testing.T) {
	r := &choppy{data: []byte("hello")}
	if _, held, err := ReadBody(r, 4, 1<<30, NewBudget(1<<20)); !errors.Is(err, ErrTooLarge) || held != 0 || len(r.data) != 5 {
		t.Fatalf("err %v, held %d, %d bytes left unread", err, held, len(r.data))
	}
}

// stall is a body whose first bytes came and whose rest never comes.
type stall struct {
	first []byte
	wait  chan struct{}
}

func (s *stall) Read(p []byte) (int, error) {
	if len(s.first) > 0 {
		n := copy(p, s.first)
		s.first = s.first[n:]
		return n, nil
	}
	<-s.wait
	return 0, errors.New("gone")
}

// A client that sends headers, or a few bytes, and then nothing holds no
// budget while it waits.
func TestReadBodyHoldsNothingForAStalledStart(t *testing.T) {
	b := NewBudget(1 << 20)
	s := &stall{first: []byte("{\"a\":"), wait: make(chan struct{})}
	done := make(chan error)
	go func() {
		_, held, err := ReadBody(s, 1<<20, 1000, b)
		b.Give(held)
		done <- err
	}()
	time.Sleep(20 * time.Millisecond)
	if b.Used() != 0 {
		t.Errorf("a stalled body holds %d bytes", b.Used())
	}
	close(s.wait)
	if err := <-done; err == nil || errors.Is(err, ErrBusy) || errors.Is(err, ErrTooLarge) {
		t.Fatalf("the reader's error was not passed on: %v", err)
	}
}

// The listener keeps at most n connections open: the next Accept waits
// until one closes, and Close ends a waiting Accept.
func TestListenerLimitsOpenConnections(t *testing.T) {
	raw, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln, _ := Listener(raw, 2)
	accepted := make(chan net.Conn, 3)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				close(accepted)
				return
			}
			accepted <- c
		}
	}()
	for range 3 {
		c, err := net.Dial("tcp", raw.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
	}
	first := <-accepted
	<-accepted
	select {
	case <-accepted:
		t.Fatal("a third connection was accepted with two open")
	case <-time.After(50 * time.Millisecond):
	}
	first.Close()
	first.Close() // a second Close frees no second slot
	select {
	case c := <-accepted:
		c.Close()
	case <-time.After(5 * time.Second):
		t.Fatal("a closed connection freed no slot")
	}
	ln.Close()
	if _, ok := <-accepted; ok {
		t.Fatal("Accept went on after Close")
	}
}

func FuzzReadBody(f *testing.F) {
	f.Add([]byte(`{"jsonrpc":"2.0"}`), uint16(3), uint16(100), int64(-1), uint32(1<<16))
	f.Add(bytes.Repeat([]byte("x"), 70000), uint16(40000), uint16(65535), int64(70000), uint32(1<<17))
	f.Fuzz(func(t *testing.T, data []byte, piece, limit uint16, declared int64, budget uint32) {
		if declared < -1 {
			declared = -1
		}
		if declared >= 0 && declared != int64(len(data)) {
			declared = int64(len(data))
		}
		checkRead(t, data, []int{int(piece)}, int64(limit), declared, max(int64(limit)+1, int64(budget)))
	})
}
