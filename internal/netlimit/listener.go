package netlimit

import (
	"container/list"
	"net"
	"net/http"
	"sync"
	"time"
)

// newConnGrace is how long a connection that has sent no request yet is
// left alone when the listener is full: a client that has just connected
// is most likely sending its request now.
const newConnGrace = time.Second

// limitListener accepts at most n connections at a time. When all n are
// open and a client connects, Accept closes the one that has been waiting longest without a
// request in flight, if the http.Server reports connection states to
// connState: an idle keep-alive connection at once, one that has sent
// nothing yet after newConnGrace. Otherwise Accept waits until one closes,
// and the kernel's listen backlog holds the clients after it; waiting,
// unlike refusing, lets a burst of clients through in turn.
type limitListener struct {
	net.Listener
	slots     chan struct{}
	done      chan struct{}
	closeOnce sync.Once

	mu    sync.Mutex
	quiet list.List // *limitConn without a request in flight, longest quiet first
}

// Listener returns ln limited to n connections open at a time, and the
// hook to call from the http.Server's ConnState (directly, or from a hook
// of its own) so that idle connections give way to new clients instead of
// holding every slot.
func Listener(ln net.Listener, n int) (net.Listener, func(net.Conn, http.ConnState)) {
	l := &limitListener{Listener: ln, slots: make(chan struct{}, n), done: make(chan struct{})}
	return l, l.connState
}

// Accept waits for a connection, then for a free slot for it: when every
// slot is taken, it closes a quiet connection to make one. It looks for a
// slot only once a client is there, so that no quiet connection is closed
// for a client that has not come; the one connection waiting for a slot
// is held outside the bound.
func (l *limitListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	if err := l.takeSlot(); err != nil {
		c.Close()
		return nil, err
	}
	return &limitConn{Conn: c, free: func() { <-l.slots }}, nil
}

// takeSlot returns once a slot is taken, or net.ErrClosed after Close.
func (l *limitListener) takeSlot() error {
	for {
		select {
		case l.slots <- struct{}{}:
			return nil
		case <-l.done:
			return net.ErrClosed
		default:
		}
		wait := l.evict(time.Now())
		t := time.NewTimer(wait)
		select {
		case l.slots <- struct{}{}:
			t.Stop()
			return nil
		case <-l.done:
			t.Stop()
			return net.ErrClosed
		case <-t.C:
		}
	}
}

// evict closes the connection quiet longest if it may be closed now, and
// says how long to wait before looking again.
func (l *limitListener) evict(now time.Time) time.Duration {
	l.mu.Lock()
	front := l.quiet.Front()
	if front == nil {
		l.mu.Unlock()
		return newConnGrace
	}
	c := front.Value.(*limitConn)
	if !c.idle && now.Sub(c.since) < newConnGrace {
		l.mu.Unlock()
		return newConnGrace - now.Sub(c.since)
	}
	l.quiet.Remove(front)
	c.elem = nil
	l.mu.Unlock()
	c.Close()
	return newConnGrace
}

// connState records which connections have no request in flight.
func (l *limitListener) connState(nc net.Conn, st http.ConnState) {
	c, ok := nc.(*limitConn)
	if !ok {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if c.elem != nil {
		l.quiet.Remove(c.elem)
		c.elem = nil
	}
	if st == http.StateNew || st == http.StateIdle {
		c.idle, c.since = st == http.StateIdle, time.Now()
		c.elem = l.quiet.PushBack(c)
	}
}

// Close stops accepting; an Accept waiting for a slot returns at once.
func (l *limitListener) Close() error {
	l.closeOnce.Do(func() { close(l.done) })
	return l.Listener.Close()
}

// limitConn frees its listener slot when closed (once, however often Close
// is called).
type limitConn struct {
	net.Conn
	once sync.Once
	free func()

	// Guarded by the listener's mu.
	elem  *list.Element // in limitListener.quiet, or nil
	idle  bool          // quiet after a request, not before the first
	since time.Time     // when it became quiet
}

// Close closes the connection and frees its slot.
func (c *limitConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(c.free)
	return err
}
