package transport

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"

	"github.com/ctxkit/ctxkit/wire"
)

// HTTP is the transport to a provider taking one envelope per POST. Each
// Dial yields a Connection for one exchange: Write posts the envelope and
// reads the response, Read returns the response's envelope and then io.EOF.
// Connections to the same URL share the Client's pooled connections.
type HTTP struct {
	URL    string
	Client *http.Client // default: http.DefaultClient
	// Prepare, when set, is called on every request before it is sent
	// (to add an Authorization header, say). A func, not a header map,
	// so that a dump of the transport never prints a credential.
	Prepare func(*http.Request)
	// MaxBody bounds the response body (default wire.DefaultMaxLineBytes).
	MaxBody int64
}

// StatusError is what Read returns for a response outside 2xx: the status
// and the body, which may hold an error envelope.
type StatusError struct {
	Code int
	Body []byte
}

// Error names the status.
func (e *StatusError) Error() string { return fmt.Sprintf("HTTP %d", e.Code) }

// Dial returns a Connection for one exchange; it sends nothing yet.
func (t HTTP) Dial(context.Context) (Connection, error) { return &exchange{t: t}, nil }

type exchange struct {
	t    HTTP
	body []byte
	err  error
	done bool // the reply was read
}

// Write posts env; a failure to reach the provider is returned here, what it
// answered by Read.
func (x *exchange) Write(ctx context.Context, env []byte) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, x.t.URL, bytes.NewReader(env))
	if err != nil {
		return fmt.Errorf("build request: %w", err)
	}
	req.Header.Set("Content-Type", wire.ContentType)
	req.Header.Set("Accept", wire.ContentType)
	if x.t.Prepare != nil {
		x.t.Prepare(req)
	}
	c := x.t.Client
	if c == nil {
		c = http.DefaultClient
	}
	resp, err := c.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	limit := x.t.MaxBody
	if limit <= 0 {
		limit = wire.DefaultMaxLineBytes
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, limit+1))
	switch {
	case err != nil:
		return fmt.Errorf("read response body: %w", err)
	case int64(len(data)) > limit:
		x.err = &wire.DecodeError{Err: &wire.TooLongError{What: "body", Limit: limit}}
	case resp.StatusCode < 200 || resp.StatusCode > 299:
		x.err = &StatusError{Code: resp.StatusCode, Body: data}
	default:
		x.body = bytes.TrimSpace(data)
	}
	return nil
}

// Read returns the response envelope once; an empty 2xx body is io.EOF.
func (x *exchange) Read() ([]byte, error) {
	if x.done {
		return nil, io.EOF
	}
	x.done = true
	if x.err != nil {
		return nil, x.err
	}
	if len(x.body) == 0 {
		return nil, io.EOF
	}
	return x.body, nil
}

func (x *exchange) Close() error { return nil }

// IsLoopback reports whether host (a URL host without port, brackets
// allowed) is loopback: "localhost" in any case, 127.0.0.0/8 or ::1.
func IsLoopback(host string) bool {
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
