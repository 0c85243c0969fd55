package conformance

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"sync"
	"time"

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

type stdioConn struct {
	cmd     *exec.Cmd
	stdin   io.WriteCloser
	lines   chan []byte
	readErr error         // set before lines is closed
	quit    chan struct{} // closed by close: the reader discards from then on
	killed  chan struct{} // closed when the harness kills the process
	done    chan struct{} // closed when the process has been waited for
	waitErr error
	timeout time.Duration
	once    sync.Once
	kill    sync.Once
}

func startStdio(ctx context.Context, t ProviderTarget, stderr io.Writer, timeout time.Duration) (*stdioConn, error) {
	cmd := exec.Command(t.Command[0], t.Command[1:]...)
	cmd.Dir = t.Dir
	cmd.Env = os.Environ()
	if stderr == nil {
		stderr = io.Discard
	}
	cmd.Stderr = stderr
	cmd.WaitDelay = 2 * time.Second
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, fmt.Errorf("start %s: %w", t.Command[0], err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("start %s: %w", t.Command[0], err)
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", t.Command[0], err)
	}
	c := &stdioConn{cmd: cmd, stdin: stdin, lines: make(chan []byte, 16), timeout: timeout,
		quit: make(chan struct{}), killed: make(chan struct{}), done: make(chan struct{})}
	readerDone := make(chan struct{})
	go func() {
		defer close(readerDone)
		read := newLineReader(stdout)
		for {
			line, err := read()
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
	go func() {
		// Wait closes stdout, so it must not run before the reader has seen
		// the end of it — unless the harness has given up and killed the
		// process (WaitDelay then bounds a pipe held open by a grandchild).
		select {
		case <-readerDone:
		case <-c.killed:
		}
		c.waitErr = cmd.Wait()
		close(c.done)
	}()
	return c, nil
}

func (c *stdioConn) send(line []byte) error {
	if _, err := c.stdin.Write(append(append([]byte(nil), line...), '\n')); err != nil {
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
	case <-c.done:
		if c.waitErr != nil {
			return "; it exited: " + c.waitErr.Error()
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
	case <-c.done:
		if c.waitErr != nil {
			return "the provider exited: " + c.waitErr.Error(), false
		}
		return "the provider exited with status 0", true
	case <-timer.C:
		return fmt.Sprintf("the provider was still running %v after shutdown", c.timeout), false
	case <-ctx.Done():
		return ctx.Err().Error(), false
	}
}

// close ends the session: stdin is closed, the process gets half a second
// to exit on its own and is then killed.
func (c *stdioConn) close() {
	c.once.Do(func() {
		select {
		case <-c.quit:
		default:
			close(c.quit)
		}
		_ = c.stdin.Close()
		select {
		case <-c.done:
		case <-time.After(500 * time.Millisecond):
			c.kill.Do(func() {
				_ = c.cmd.Process.Kill()
				close(c.killed)
			})
			<-c.done
		}
	})
}

// newLineReader returns a function reading bounded lines from r.
func newLineReader(r io.Reader) func() ([]byte, error) {
	dec := wire.NewDecoder(r, nil)
	return func() ([]byte, error) {
		line, err := dec.ReadLine()
		if err != nil {
			return nil, err
		}
		return append([]byte(nil), line...), nil
	}
}

type httpConn struct {
	url     string
	client  *http.Client
	timeout time.Duration
}

func newHTTPConn(t ProviderTarget, timeout time.Duration) *httpConn {
	c := t.Client
	if c == nil {
		c = &http.Client{}
	}
	return &httpConn{url: t.URL, client: c, timeout: timeout}
}

func (c *httpConn) post(ctx context.Context, line []byte) (int, []byte, error) {
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url, bytes.NewReader(line))
	if err != nil {
		return 0, nil, fmt.Errorf("post: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.client.Do(req)
	if err != nil {
		return 0, nil, fmt.Errorf("post: %w", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxLine+1))
	if err != nil {
		return resp.StatusCode, nil, fmt.Errorf("read response: %w", err)
	}
	if len(body) > maxLine {
		return resp.StatusCode, nil, fmt.Errorf("response longer than %d bytes", maxLine)
	}
	return resp.StatusCode, body, nil
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
