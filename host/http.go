package host

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/ctxkit/ctxkit/frame"
	"github.com/ctxkit/ctxkit/host/transport"
	"github.com/ctxkit/ctxkit/internal/defaults"
	"github.com/ctxkit/ctxkit/wire"
)

// redacted is what a Credential prints as, whatever the verb or encoding.
const redacted = "Credential(<redacted>)"

// Credential is a bearer token the host attaches to HTTP requests. Its value
// never appears in output: every fmt verb (%#v included), String, JSON and text
// encoding print "Credential(<redacted>)" (C8). The secret lives behind a
// pointer, so even a reflective dump of a struct holding a Credential in an
// unexported field prints an address, not the token.
type Credential struct{ s *secret }

type secret struct{ v string }

// NewCredential wraps a bearer token.
func NewCredential(token string) Credential { return Credential{s: &secret{v: token}} }

// IsZero reports whether no token is held.
func (c Credential) IsZero() bool { return c.s == nil || c.s.v == "" }

func (c Credential) value() string {
	if c.s == nil {
		return ""
	}
	return c.s.v
}

// String returns the redacted form.
func (c Credential) String() string { return redacted }

// Format prints the redacted form for every verb.
func (c Credential) Format(f fmt.State, _ rune) { _, _ = io.WriteString(f, redacted) }

// MarshalText encodes the redacted form (in JSON too: a JSON string).
func (c Credential) MarshalText() ([]byte, error) { return []byte(redacted), nil }

// Authorize returns an http.RoundTripper that sends c as "Authorization:
// Bearer …" with every request it carries through base (a proxy-less
// http.Transport when nil), for an HTTP client the host does not build
// itself, such as an MCP bridge's Streamable HTTP session. A zero c adds
// nothing. The value stays inside: printing the RoundTripper prints the
// redacted form.
func (c Credential) Authorize(base http.RoundTripper) http.RoundTripper {
	if base == nil {
		base = &http.Transport{Proxy: nil, ForceAttemptHTTP2: true, MaxIdleConnsPerHost: 4, IdleConnTimeout: 30 * time.Second}
	}
	return &bearer{cred: c, base: base}
}

// Redact returns s with c's value replaced by the redacted form, for text
// a provider wrote that reaches output by a path the host does not see.
func (c Credential) Redact(s string) string { return secretsOf(c).scrubString(s) }

// bearer is Authorize's RoundTripper.
type bearer struct {
	cred Credential
	base http.RoundTripper
}

// RoundTrip sends a copy of req with the Authorization header set (a
// RoundTripper must not change the request it is given).
func (b *bearer) RoundTrip(req *http.Request) (*http.Response, error) {
	if b.cred.IsZero() {
		return b.base.RoundTrip(req)
	}
	r := req.Clone(req.Context())
	r.Header.Set("Authorization", "Bearer "+b.cred.value())
	return b.base.RoundTrip(r)
}

// HTTPOptions configures an HTTP provider. Zero fields mean the defaults.
type HTTPOptions struct {
	// Credential is sent as "Authorization: Bearer …" when set.
	Credential Credential
	// Timeout bounds each request (default: the host's QueryTimeout, 30 s).
	Timeout time.Duration
	// Transport carries the requests (default: a fresh http.Transport).
	// Tests use it to observe that no connection is attempted.
	Transport http.RoundTripper
	// MaxBody is the largest response body read (default wire.DefaultMaxLineBytes).
	MaxBody int64
}

// httpProvider speaks CGP with one envelope per POST.
type httpProvider struct {
	id   string
	url  string
	cred Credential
	tr   transport.HTTP

	correlated atomic.Bool // the provider declared correlation
	next       atomic.Uint64
	contacted  atomic.Bool // a request was sent (Shutdown has someone to tell)
}

// HTTP returns a Provider at rawURL. Plain http:// is accepted only for a
// loopback host; anything else is refused with ErrInsecureTransport before a
// client exists, so no byte is sent (C7). Credentials inside the URL are
// refused (they would be printed wherever the URL is).
func dialHTTP(id, rawURL string, opts *HTTPOptions) (provider, error) {
	p, _, err := newHTTPProvider(id, rawURL, opts)
	return p, err
}

func newHTTPProvider(id, rawURL string, opts *HTTPOptions) (*httpProvider, bool, error) {
	var o HTTPOptions
	if opts != nil {
		o = *opts
	}
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, false, newErr(id, "connect", errTransport, "unparsable provider URL", nil)
	}
	if u.User != nil {
		return nil, false, newErr(id, "connect", ErrInsecureTransport, "credentials in the URL are refused; pass a Credential", nil)
	}
	loopback := transport.IsLoopback(u.Hostname())
	switch u.Scheme {
	case "https":
	case "http":
		if !loopback {
			return nil, false, newErr(id, "connect", ErrInsecureTransport, "plain http to non-loopback host "+strconv.Quote(u.Hostname())+" (C7); use https", nil)
		}
	default:
		return nil, false, newErr(id, "connect", errTransport, "unsupported URL scheme "+strconv.Quote(u.Scheme), nil)
	}
	defaults.IfNotPositive(&o.Timeout, defaultRequestTimeout)
	defaults.IfNotPositive(&o.MaxBody, wire.DefaultMaxLineBytes)
	rt := o.Transport
	if rt == nil {
		// No proxy: a proxy would carry the request off the machine by a
		// path the consent and loopback checks never saw (HTTP_PROXY and
		// HTTPS_PROXY are ignored; a caller who needs one passes Transport).
		rt = &http.Transport{Proxy: nil, ForceAttemptHTTP2: true, MaxIdleConnsPerHost: 4, IdleConnTimeout: 30 * time.Second}
	}
	client := &http.Client{
		Transport: rt,
		Timeout:   o.Timeout,
		// A redirect could carry the request (and its bearer) somewhere
		// the consent and C7 checks never saw.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	tr := transport.HTTP{URL: u.String(), Client: client, MaxBody: o.MaxBody}
	if cred := o.Credential; !cred.IsZero() {
		tr.Prepare = func(r *http.Request) { r.Header.Set("Authorization", "Bearer "+cred.value()) }
	}
	return &httpProvider{id: id, url: tr.URL, cred: o.Credential, tr: tr}, loopback, nil
}

// post sends one envelope and returns the reply envelope (nil for an empty
// 2xx body).
func (p *httpProvider) post(ctx context.Context, op string, env wire.Envelope) (wire.Envelope, error) {
	body, err := encodeEnvelope(env)
	if err != nil {
		return nil, fmt.Errorf("host: %s %q: encode: %w", op, p.id, err)
	}
	if env.Type() != "shutdown" {
		p.contacted.Store(true)
	}
	x, _ := p.tr.Dial(ctx)
	if err := x.Write(ctx, body); err != nil {
		kind := errTransport
		if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
			kind = ErrTimeout
		} else {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				kind = ErrTimeout
			}
		}
		return nil, newErr(p.id, op, kind, "", scrub(err, p.cred))
	}
	data, err := x.Read()
	sec := p.secrets()
	var se *transport.StatusError
	switch {
	case errors.Is(err, io.EOF):
		return nil, nil
	case errors.As(err, new(*wire.TooLongError)):
		return nil, newErr(p.id, op, errMalformed, fmt.Sprintf("response body longer than the %d-byte limit", p.tr.MaxBody), nil)
	case errors.As(err, &se) && se.Code == http.StatusUnauthorized:
		return nil, newErr(p.id, op, errUnauthorized, "HTTP 401", nil)
	case se != nil:
		if e, derr := decodeEnvelope(bytes.TrimSpace(se.Body)); derr == nil {
			if we, ok := e.(*wire.Error); ok {
				return nil, sec.scrubError(newErr(p.id, op, errProviderError, "HTTP "+strconv.Itoa(se.Code), we))
			}
		}
		// Scrubbed before it is cut short, so no part of a credential
		// survives the cut.
		text := sec.scrubString(string(se.Body))
		return nil, newErr(p.id, op, errTransport, "HTTP "+strconv.Itoa(se.Code)+": "+strconv.Quote(truncateForError(text, 200)), nil)
	case err != nil:
		return nil, newErr(p.id, op, errTransport, "reading body", scrub(err, p.cred))
	}

	e, err := decodeEnvelope(data)
	if err != nil {
		return nil, newErr(p.id, op, errMalformed, "response body is not a CGP envelope", sec.scrubError(err))
	}
	if we, ok := e.(*wire.Error); ok {
		return nil, sec.scrubError(newErr(p.id, op, errProviderError, "", we))
	}
	if sec.echoed(data, e) {
		return nil, newErr(p.id, op, errCredentialEchoed, "the "+e.Type()+" reply was discarded (C8)", nil)
	}
	return e, nil
}

// secrets returns the provider's bearer token as a scrubbable value.
func (p *httpProvider) secrets() secrets { return secretsOf(p.cred) }

// scrub removes the credential's value from an error's text, in case a
// transport ever echoes request headers.
func scrub(err error, c Credential) error { return secretsOf(c).scrubError(err) }

func (p *httpProvider) Handshake(ctx context.Context, version string) (*wire.HandshakeAck, error) {
	ack, err := expect[*wire.HandshakeAck](p.post(ctx, "handshake", &wire.Handshake{ProtocolVersion: version}))(p.id, "handshake")
	if err == nil {
		p.correlated.Store(ack.Capabilities.Correlation)
	}
	return ack, err
}

func (p *httpProvider) Query(ctx context.Context, q *frame.Query) (*wire.Result, error) {
	corr := p.correlated.Load()
	var id string
	if corr {
		id = "q" + strconv.FormatUint(p.next.Add(1), 10)
	}
	f, err := expect[*wire.Frames](p.post(ctx, "query", &wire.Query{ID: id, Query: *q}))(p.id, "query")
	if err != nil {
		return nil, err
	}
	if corr && f.ID != id {
		got := f.ID
		if got == "" {
			got = "<absent>"
		}
		return nil, &correlationError{Provider: p.id, Expected: id, Got: got}
	}
	return &f.Result, nil
}

func (p *httpProvider) Verify(ctx context.Context, ids []frame.ID) ([]wire.Verdict, error) {
	v, err := expect[*wire.Verified](p.post(ctx, "verify", &wire.Verify{Request: wire.VerifyRequest{Frames: ids}}))(p.id, "verify")
	if err != nil {
		return nil, err
	}
	return v.Response.Verdicts, nil
}

// Shutdown posts a shutdown envelope; any answer (204 included) or failure
// is fine: the host is done with the provider either way. A provider never
// contacted is not contacted now: one the consent gate kept the host from
// dialling stays undialled.
func (p *httpProvider) Shutdown(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	if p.contacted.Load() {
		_, _ = p.post(ctx, "shutdown", &wire.Shutdown{})
	}
	p.tr.Client.CloseIdleConnections()
	return nil
}
