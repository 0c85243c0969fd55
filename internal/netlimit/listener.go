package netlimit

import (
	"net"
	"sync"
)

// limitListener accepts at most n connections at a time: Accept waits while
// n are open, and the kernel's listen backlog holds the next ones until one
// closes. Unlike refusing them, waiting lets a burst of clients through in
// turn.
type limitListener struct {
	net.Listener
	slots     chan struct{}
	done      chan struct{}
	closeOnce sync.Once
}

// Listener returns ln limited to n connections open at a time: Accept
// waits while n are open.
func Listener(ln net.Listener, n int) net.Listener {
	return &limitListener{Listener: ln, slots: make(chan struct{}, n), done: make(chan struct{})}
}

// Accept waits for a free slot, then for a connection.
func (l *limitListener) Accept() (net.Conn, error) {
	select {
	case l.slots <- struct{}{}:
	case <-l.done:
		return nil, net.ErrClosed
	}
	c, err := l.Listener.Accept()
	if err != nil {
		<-l.slots
		return nil, err
	}
	return &limitConn{Conn: c, free: func() { <-l.slots }}, nil
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
}

// Close closes the connection and frees its slot.
func (c *limitConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(c.free)
	return err
}
