package conformance

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"sync"
	"time"

	"github.com/ctxkit/ctxkit/host/transport"
	"github.com/ctxkit/ctxkit/wire"
)

// The provider suite's own minimal client. It is deliberately raw: the
// wire probes must write a malformed line or an unknown envelope, read the
// very next line whatever it is, and quote it as evidence.

// conn is one session with a provider.
type conn interface {
	// roundTrip sends one envelope and waits for one reply.
	roundTrip(ctx context.Context, line []byte) ([]byte, error)
	// send writes one line without waiting (stdio only).
	send(line []byte) error
	// next waits for the next reply line (stdio only).
	next(ctx context.Context) ([]byte, error)
	// shutdown sends shutdown and judges the teardown; it closes the conn.
	shutdown(ctx context.Context) (string, bool)
	close()
}

// stdioConn is a session with a child provider over transport.Stdio. A
// reader goroutine turns the child's lines into a channel so that a probe
// can wait for the next one with a timeout.
type stdioConn struct {
	proc    *transport.Process
	lines   chan []byte
	readErr error         // set before lines is closed
	quit    chan struct{} // closed by close: the reader discards from then on
	timeout time.Duration
	once    sync.Once
}

func startStdio(ctx context.Context, t ProviderTarget, stderr io.Writer, timeout time.Duration) (*stdioConn, error) {
	// The provider under test gets this process's whole environment: it
	// is the operator's program, run as the operator would run it.
	tr := transport.Stdio{Program: t.Command[0], Args: t.Command[1:], Env: os.Environ(), Dir: t.Dir,
		Stderr: stderr, ShutdownGrace: 500 * time.Millisecond}
	proc, err := tr.Start()
	if err != nil {
		return nil, fmt.Errorf("start %s: %w", t.Command[0], err)
	}
	c := &stdioConn{proc: proc, lines: make(chan []byte, 16), timeout: timeout, quit: make(chan struct{})}
	go func() {
		for {
			line, err := proc.Read()
			if err != nil {
				c.readErr = err
				close(c.lines)
				return
			}
			select {
			case c.lines <- line:
			case <-c.quit:
			}
		}
	}()
	return c, nil
}

func (c *stdioConn) send(line []byte) error {
	if err := c.proc.Write(context.Background(), line); err != nil {
		return fmt.Errorf("write to provider: %w (the provider has exited?)", err)
	}
	return nil
}

func (c *stdioConn) next(ctx context.Context) ([]byte, error) {
	timer := time.NewTimer(c.timeout)
	defer timer.Stop()
	select {
	case line, ok := <-c.lines:
		if !ok {
			return nil, fmt.Errorf("the provider closed its output (%v)%s", c.readErr, c.exitNote())
		}
		return line, nil
	case <-timer.C:
		return nil, fmt.Errorf("no reply within %v", c.timeout)
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (c *stdioConn) exitNote() string {
	select {
	case <-c.proc.Exited():
		if err := c.proc.ExitErr(); err != nil {
			return "; it exited: " + err.Error()
		}
		return "; it exited with status 0"
	case <-time.After(200 * time.Millisecond):
		return ""
	}
}

func (c *stdioConn) roundTrip(ctx context.Context, line []byte) ([]byte, error) {
	if err := c.send(line); err != nil {
		return nil, err
	}
	return c.next(ctx)
}

func (c *stdioConn) shutdown(ctx context.Context) (string, bool) {
	defer c.close()
	line, _ := encodeEnvelope(&wire.Shutdown{})
	if err := c.send(line); err != nil {
		return err.Error(), false
	}
	close(c.quit) // replies after shutdown are not read
	timer := time.NewTimer(c.timeout)
	defer timer.Stop()
	select {
	case <-c.proc.Exited():
		if err := c.proc.ExitErr(); err != nil {
			return "the provider exited: " + err.Error(), false
		}
		return "the provider exited with status 0", true
	case <-timer.C:
		return fmt.Sprintf("the provider was still running %v after shutdown", c.timeout), false
	case <-ctx.Done():
		return ctx.Err().Error(), false
	}
}

// close ends the session: stdin is closed, the process gets half a second
// to exit on its own and is then killed with its whole tree.
func (c *stdioConn) close() {
	c.once.Do(func() {
		select {
		case <-c.quit:
		default:
			close(c.quit)
		}
		_ = c.proc.Close()
	})
}

type httpConn struct {
	tr      transport.HTTP
	timeout time.Duration
}

func newHTTPConn(t ProviderTarget, timeout time.Duration) *httpConn {
	return &httpConn{tr: transport.HTTP{URL: t.URL, Client: t.Client}, timeout: timeout}
}

// post sends one envelope and returns the status and the body.
func (c *httpConn) post(ctx context.Context, line []byte) (int, []byte, error) {
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	x, _ := c.tr.Dial(ctx)
	if err := x.Write(ctx, line); err != nil {
		return 0, nil, fmt.Errorf("post: %w", err)
	}
	body, err := x.Read()
	var se *transport.StatusError
	switch {
	case errors.As(err, &se):
		return se.Code, se.Body, nil
	case errors.Is(err, io.EOF):
		return http.StatusNoContent, nil, nil
	case err != nil:
		return 0, nil, fmt.Errorf("read response: %w", err)
	}
	return http.StatusOK, body, nil
}

func (c *httpConn) roundTrip(ctx context.Context, line []byte) ([]byte, error) {
	status, body, err := c.post(ctx, line)
	if err != nil {
		return nil, err
	}
	if status/100 != 2 && !bytes.Contains(body, []byte(`"error"`)) {
		return nil, fmt.Errorf("HTTP %d: %s", status, clip(string(body), 200))
	}
	return body, nil
}

func (c *httpConn) send([]byte) error { return errors.New("http: no raw line connection") }

func (c *httpConn) next(context.Context) ([]byte, error) {
	return nil, errors.New("http: no raw line connection")
}

func (c *httpConn) shutdown(ctx context.Context) (string, bool) {
	line, _ := encodeEnvelope(&wire.Shutdown{})
	status, body, err := c.post(ctx, line)
	if err != nil {
		return err.Error(), false
	}
	if status/100 != 2 {
		return fmt.Sprintf("HTTP %d: %s", status, clip(string(body), 200)), false
	}
	if env, derr := decodeEnvelope(body); derr == nil {
		if e, ok := env.(*wire.Error); ok {
			return fmt.Sprintf("error %q: %s", e.Code, e.Message), false
		}
	}
	return fmt.Sprintf("HTTP %d", status), true
}

func (c *httpConn) close() {}
