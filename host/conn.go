package host

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ctxkit/ctxkit/host/transport"
	"github.com/ctxkit/ctxkit/wire"
)

// rawReply is one line from a provider, with only its routing members decoded.
type rawReply struct {
	typ  string
	id   *string
	line []byte
	err  error // non-nil when the request failed instead of being answered
}

// conn is the host's session over one transport.Connection (a child
// provider's pipes, or memory in tests). A single reader
// goroutine demultiplexes replies: correlated replies by id, id-less replies
// to the one lock-step request in flight. Every failure of the stream (EOF, a
// closed pipe, an undecodable or over-long line, a wrong correlation id) fails
// every waiting request with a typed error: a request never hangs beyond its
// own deadline, and usually returns as soon as the stream breaks.
type conn struct {
	provider string
	link     transport.Connection
	proc     *transport.Process // the child behind link; nil for other links
	secrets  secrets            // scrubbed from the child's stderr wherever it is shown

	mu        sync.Mutex
	pending   map[string]chan rawReply // correlated requests by id
	abandoned map[string]bool          // ids whose requester gave up (late replies are discarded)
	lockstep  chan rawReply            // the id-less request in flight, if any
	broken    error                    // once set, the connection is dead
	stray     int                      // unsolicited envelopes ignored

	lockSem    chan struct{} // one id-less request at a time
	nextID     atomic.Uint64
	readerDone chan struct{}
	closeOnce  sync.Once
}

func newConn(provider string, link transport.Connection, sec secrets) *conn {
	c := &conn{
		provider:   provider,
		link:       link,
		secrets:    sec,
		pending:    make(map[string]chan rawReply),
		abandoned:  make(map[string]bool),
		lockSem:    make(chan struct{}, 1),
		readerDone: make(chan struct{}),
	}
	if p, ok := link.(*transport.Process); ok {
		c.proc = p
		go c.watchExit()
	}
	go c.readLoop()
	return c
}

// kill ends the link at once: a child's whole process tree, or the
// connection.
func (c *conn) kill() {
	if c.proc != nil {
		c.proc.Kill()
		return
	}
	_ = c.link.Close()
}

// watchExit fails the connection when the child exits, even if a descendant
// still holds its stdout open (which would keep the reader from seeing EOF).
func (c *conn) watchExit() {
	<-c.proc.Exited()
	t := time.NewTimer(200 * time.Millisecond)
	select {
	case <-c.readerDone:
	case <-t.C:
	}
	t.Stop()
	c.breakWith(newErr(c.provider, "read", ErrProviderCrashed, c.exitDetail(), nil))
	c.kill()
}

// scrub removes the provider's credentials from a stderr tail.
func (c *conn) scrub(s string) string { return c.secrets.scrubTail(s) }

func (c *conn) exitDetail() string {
	if c.proc == nil {
		return "connection closed"
	}
	d := "child exited"
	select {
	case <-c.proc.Exited():
		if err := c.proc.ExitErr(); err != nil {
			d += " (" + err.Error() + ")"
		}
	default:
	}
	if s := c.proc.Stderr(); s != "" {
		// The child wrote this: quoted, it stays one field of one line.
		d += "; stderr: " + strconv.Quote(truncateForError(c.scrub(s), 512))
	}
	return d
}

func truncateForError(s string, n int) string {
	s = string(bytes.TrimSpace([]byte(s)))
	if len(s) <= n {
		return s
	}
	return "…" + s[len(s)-n:]
}

func (c *conn) readLoop() {
	defer close(c.readerDone)
	for {
		line, err := c.link.Read()
		if err != nil {
			switch {
			case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, os.ErrClosed):
				c.breakWith(newErr(c.provider, "read", ErrProviderCrashed, "stdout closed; "+c.exitDetail(), nil))
			case errors.As(err, new(*wire.TooLongError)):
				c.breakWith(newErr(c.provider, "read", errMalformed, "", err))
			default:
				c.breakWith(newErr(c.provider, "read", ErrProviderCrashed, "", err))
			}
			c.kill()
			return
		}
		var head struct {
			Type string  `json:"type"`
			ID   *string `json:"id"`
		}
		if err := json.Unmarshal(line, &head); err != nil || head.Type == "" {
			detail := "undecodable line " + strconv.Quote(truncateForError(string(line), 64))
			c.breakWith(newErr(c.provider, "read", errMalformed, detail, err))
			c.kill()
			return
		}
		c.route(rawReply{typ: head.Type, id: head.ID, line: line})
	}
}

// route hands a reply to its waiter.
func (c *conn) route(r rawReply) {
	ch, wrongID := c.waiterFor(r)
	switch {
	case ch != nil:
		ch <- r
	case wrongID != "":
		c.breakCorrelation(wrongID)
	}
}

// waiterFor picks, under the lock, the channel r goes to (removing it from
// the waiters), or the id to report when r breaks correlation; neither for
// a reply to drop (late, stray, or after the connection broke).
func (c *conn) waiterFor(r rawReply) (chan rawReply, string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.broken != nil {
		return nil, ""
	}
	got := "<absent>"
	if r.id != nil {
		got = *r.id
		if ch, ok := c.pending[got]; ok {
			delete(c.pending, got)
			return ch, ""
		}
		if c.abandoned[got] {
			delete(c.abandoned, got)
			return nil, ""
		}
	}
	// An id-less reply, or one echoing an id we never sent, answers the
	// lock-step request in flight: ids bind only correlated requests (H4).
	if c.lockstep != nil && (r.id == nil || len(c.pending) == 0) {
		ch := c.lockstep
		c.lockstep = nil
		return ch, ""
	}
	if len(c.pending) > 0 {
		return nil, got
	}
	c.stray++
	return nil, ""
}

// breakCorrelation fails every correlated waiter with a correlationError
// naming its own id and what arrived, then tears the connection down: after
// a wrong id no reply on this stream can be attributed with confidence.
func (c *conn) breakCorrelation(got string) {
	c.mu.Lock()
	pend := c.pending
	c.pending = make(map[string]chan rawReply)
	c.broken = &correlationError{Provider: c.provider, Expected: "<any pending id>", Got: got}
	lock := c.lockstep
	c.lockstep = nil
	c.mu.Unlock()
	for id, ch := range pend {
		ch <- rawReply{err: &correlationError{Provider: c.provider, Expected: id, Got: got}}
	}
	if lock != nil {
		lock <- rawReply{err: c.broken}
	}
	c.kill()
}

// breakWith marks the connection dead (first cause wins) and fails every
// waiter with err.
func (c *conn) breakWith(err error) {
	c.mu.Lock()
	if c.broken == nil {
		c.broken = err
	}
	err = c.broken
	pend := c.pending
	c.pending = make(map[string]chan rawReply)
	lock := c.lockstep
	c.lockstep = nil
	c.mu.Unlock()
	for _, ch := range pend {
		ch <- rawReply{err: err}
	}
	if lock != nil {
		lock <- rawReply{err: err}
	}
}

// write sends one line (a '\n' is appended) before deadline.
func (c *conn) write(op string, line []byte, deadline time.Time) error {
	ctx, cancel := context.WithDeadline(context.Background(), deadline)
	defer cancel()
	err := c.link.Write(ctx, line)
	if err == nil {
		return nil
	}
	if errors.Is(err, os.ErrDeadlineExceeded) {
		// A partial line may be on the pipe: the stream is unusable.
		e := newErr(c.provider, op, ErrTimeout, "provider stopped reading its input", nil)
		c.breakWith(e)
		c.kill()
		return e
	}
	e := newErr(c.provider, op, ErrProviderCrashed, "writing request: "+c.exitDetail(), err)
	c.breakWith(e)
	return e
}

// roundTrip sends the line built by mk and waits for the reply. With
// correlate, mk receives a fresh id and the reply is matched by it; otherwise
// the request runs lock-step (one at a time) and takes the next id-less reply.
// A lock-step request that times out leaves the stream out of step, so the
// connection is torn down; a correlated one only abandons its id.
func (c *conn) roundTrip(ctx context.Context, op string, timeout time.Duration, correlate bool, mk func(id string) ([]byte, error)) (rawReply, error) {
	start := time.Now()
	deadline := start.Add(timeout)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	ctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()

	ch := make(chan rawReply, 1)
	var id string
	if correlate {
		id = "q" + strconv.FormatUint(c.nextID.Add(1), 10)
	} else {
		select {
		case c.lockSem <- struct{}{}:
		case <-ctx.Done():
			return rawReply{}, c.ctxErr(op, ctx, start, timeout)
		}
		defer func() { <-c.lockSem }()
	}
	if err := c.await(id, correlate, ch); err != nil {
		return rawReply{}, err
	}
	line, err := mk(id)
	if err != nil {
		c.forget(id, correlate, false)
		return rawReply{}, fmt.Errorf("host: %s %q: encode request: %w", op, c.provider, err)
	}
	if err := c.write(op, line, deadline); err != nil {
		c.forget(id, correlate, false)
		return rawReply{}, err
	}
	select {
	case r := <-ch:
		if r.err != nil {
			return rawReply{}, r.err
		}
		return r, nil
	case <-ctx.Done():
		c.forget(id, correlate, true)
		// The reply may have raced in after the deadline: prefer it.
		select {
		case r := <-ch:
			if r.err == nil {
				return r, nil
			}
		default:
		}
		err := c.ctxErr(op, ctx, start, timeout)
		if !correlate {
			c.breakWith(err)
			c.kill()
		}
		return rawReply{}, err
	}
}

// await registers ch for the reply to the request about to be sent: under
// id with correlate, else as the lock-step reply. When the connection is
// already broken it registers nothing and returns the error that broke it.
func (c *conn) await(id string, correlate bool, ch chan rawReply) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.broken != nil {
		return c.broken
	}
	if correlate {
		c.pending[id] = ch
	} else {
		c.lockstep = ch
	}
	return nil
}

func (c *conn) forget(id string, correlate, abandon bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if correlate {
		if _, ok := c.pending[id]; ok {
			delete(c.pending, id)
			if abandon {
				c.abandoned[id] = true
			}
		}
		return
	}
	c.lockstep = nil
}

func (c *conn) ctxErr(op string, ctx context.Context, start time.Time, timeout time.Duration) error {
	if errors.Is(context.Cause(ctx), context.Canceled) {
		return newErr(c.provider, op, ErrTimeout, "canceled by caller", ctx.Err())
	}
	return newErr(c.provider, op, ErrTimeout, "no reply within "+waited(start, timeout), nil)
}

// notify sends a line that expects no reply (shutdown).
func (c *conn) notify(op string, line []byte, deadline time.Time) error {
	return c.write(op, line, deadline)
}

// close stops the child: it waits up to grace for it to exit, then kills its
// process tree, and fails any request still waiting with ErrClosed. It
// returns when the reader goroutine has finished.
func (c *conn) close(grace time.Duration) error {
	var err error
	c.closeOnce.Do(func() {
		if c.proc != nil {
			// The caller's grace may be shorter than the child's.
			t := time.AfterFunc(grace, c.proc.Kill)
			err = c.proc.Close()
			t.Stop()
		} else {
			err = c.link.Close()
		}
		c.breakWith(newErr(c.provider, "close", ErrClosed, "", nil))
		<-c.readerDone
	})
	return err
}

// stderrTail returns the captured tail of the child's stderr.
func (c *conn) stderrTail() string {
	if c.proc == nil {
		return ""
	}
	return c.proc.Stderr()
}
