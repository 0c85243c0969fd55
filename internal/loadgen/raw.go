package loadgen

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"strconv"
	"time"
)

// Why a second client: net/http's client spends about as much CPU per
// request as the server under test (about 170 µs on the load test's body),
// and on a 2-core box that CPU is taken from the server. rawConn speaks just
// the HTTP/1.1 the test needs over one keep-alive connection: it writes
// the prepared request in one call and reads a response framed by
// Content-Length, as wrk does.

// rawRequest is the whole request, head and body, ready to write.
func rawRequest(u *url.URL, body []byte, idempotent bool) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "POST %s HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n", u.RequestURI(), u.Host, len(body))
	if idempotent {
		b.WriteString("Idempotency-Key: loadgen\r\n")
	}
	b.WriteString("\r\n")
	b.Write(body)
	return b.Bytes()
}

// rawConn is one worker's connection; it dials again after the server
// closes it.
type rawConn struct {
	addr string
	req  []byte
	conn net.Conn
	br   *bufio.Reader
	body []byte
}

func (c *rawConn) close() {
	if c.conn != nil {
		_ = c.conn.Close()
		c.conn = nil
	}
}

// send makes one request and returns the status and the body, which is
// valid until the next call. Its errors are classified as send's are: a
// failure before any response is a *notAcceptedError on a new connection
// and a *noResponseError on a reused one.
func (c *rawConn) send(ctx context.Context) (int, []byte, error) {
	reused := c.conn != nil
	if !reused {
		var d net.Dialer
		conn, err := d.DialContext(ctx, "tcp", c.addr)
		if err != nil {
			return 0, nil, err
		}
		c.conn, c.br = conn, bufio.NewReaderSize(conn, 32<<10)
	}
	deadline := time.Now().Add(30 * time.Second)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	_ = c.conn.SetDeadline(deadline)
	// fail drops the connection; an error caused by the run's end is
	// reported as that, not as the server's fault.
	fail := func(err error) (int, []byte, error) {
		c.close()
		if runOver(ctx) {
			return 0, nil, context.DeadlineExceeded
		}
		return 0, nil, err
	}
	noResponse := func(err error) (int, []byte, error) {
		if !reused {
			return fail(&notAcceptedError{err})
		}
		return fail(&noResponseError{err})
	}
	if _, err := c.conn.Write(c.req); err != nil {
		return noResponse(err)
	}
	line, err := c.br.ReadSlice('\n')
	if err != nil {
		return noResponse(err)
	}
	status, err := parseStatus(line)
	if err != nil {
		return fail(err)
	}
	n, closing, err := c.readHead()
	if err != nil {
		return fail(fmt.Errorf("read head after status %d: %w", status, err))
	}
	if cap(c.body) < n {
		c.body = make([]byte, n)
	}
	c.body = c.body[:n]
	if _, err := io.ReadFull(c.br, c.body); err != nil {
		return fail(fmt.Errorf("read body after status %d: %w", status, err))
	}
	if closing {
		c.close()
	}
	return status, c.body, nil
}

// runOver reports whether the run's deadline has passed, which the
// connection's own deadline may notice a moment before ctx does.
func runOver(ctx context.Context) bool {
	d, ok := ctx.Deadline()
	return ctx.Err() != nil || ok && !time.Now().Before(d)
}

// parseStatus reads the code of an "HTTP/1.1 200 OK" line.
func parseStatus(line []byte) (int, error) {
	const prefix = "HTTP/1.1 "
	if len(line) < len(prefix)+3 || string(line[:len(prefix)]) != prefix {
		return 0, fmt.Errorf("bad status line %q", line)
	}
	code, err := strconv.Atoi(string(line[len(prefix) : len(prefix)+3]))
	if err != nil {
		return 0, fmt.Errorf("bad status line %q", line)
	}
	return code, nil
}

// readHead reads the header lines up to the blank one and returns the
// Content-Length and whether the server closes the connection after this
// response. A response without Content-Length is an error: the server
// under test always sends it.
func (c *rawConn) readHead() (n int, closing bool, err error) {
	n = -1
	for {
		line, err := c.br.ReadSlice('\n')
		if err != nil {
			return 0, false, err
		}
		line = bytes.TrimRight(line, "\r\n")
		if len(line) == 0 {
			break
		}
		name, value, ok := bytes.Cut(line, []byte(":"))
		if !ok {
			return 0, false, fmt.Errorf("bad header line %q", line)
		}
		value = bytes.TrimSpace(value)
		switch {
		case bytes.EqualFold(name, []byte("Content-Length")):
			n, err = strconv.Atoi(string(value))
			if err != nil || n < 0 {
				return 0, false, fmt.Errorf("bad Content-Length %q", value)
			}
		case bytes.EqualFold(name, []byte("Connection")):
			closing = bytes.EqualFold(value, []byte("close"))
		}
	}
	if n < 0 {
		return 0, false, errors.New("response without Content-Length")
	}
	return n, closing, nil
}
