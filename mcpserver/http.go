package mcpserver

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"time"

	"github.com/ctxkit/ctxkit/host/transport"
	"github.com/ctxkit/ctxkit/internal/defaults"
	"github.com/ctxkit/ctxkit/internal/netlimit"
	"github.com/ctxkit/ctxkit/server"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Path is where HTTPHandler serves MCP Streamable HTTP.
const Path = "/mcp"

// HTTPOptions bounds what clients can make an HTTPHandler hold. The zero
// value gives the defaults below.
type HTTPOptions struct {
	// MaxSessions bounds the sessions open at once (default 256). A new
	// session at the limit closes the one idle longest to make room; when
	// every session has a request in flight, the new one is refused (503).
	MaxSessions int
	// MaxBodyBytes bounds one request body (default 4 MiB, 413 over it).
	MaxBodyBytes int64
	// MaxBodyBytesInFlight bounds the bytes of request bodies held at once
	// across all requests (default 16 MiB; 503 when spent). Bodies are read
	// as they arrive, never sized from the Content-Length they announce. A
	// body is held until its answer is written, and a tool's answer is up to
	// about five times its arguments (the text, its structured copy and the
	// SDK's encodings), so this bound also bounds the answers in memory: 16
	// MiB is four calls of the largest body at once, about 100 MB of answers.
	MaxBodyBytesInFlight int64
	// BodyTimeout bounds how long a request body may take to arrive
	// (default 30 s; 408 after it), and how long each write of an answer
	// may take; a stream may stay quiet between writes for any time.
	BodyTimeout time.Duration
	// SessionIdle closes a session idle this long (default 30 minutes).
	SessionIdle time.Duration
	// MaxFrames is the API's limit of offers per request that the tools
	// behind the handler take (ServerOptions.API; default the API's
	// default): no array of a message may be longer, nor hold more than 32
	// values an offer in all (toolShape), checked before the SDK decodes it.
	MaxFrames int
}

// Defaults for the zero HTTPOptions.
const (
	defaultMaxSessions          = 256
	defaultMaxBodyBytes         = 4 << 20
	defaultMaxBodyBytesInFlight = 16 << 20
	defaultBodyTimeout          = 30 * time.Second
	defaultSessionIdle          = 30 * time.Minute
)

// httpHandler is HTTPHandler's handler: the checks and limits in front of
// the SDK's Streamable HTTP handler.
type httpHandler struct {
	sdk      http.Handler
	sessions *sessionTable
	bodies   *netlimit.Budget
	maxBody  int64
	timeout  time.Duration
	shape    shapeLimits // of one message
	held     *heldRequests
}

// HTTPHandler serves s over MCP Streamable HTTP at Path, within the limits
// of o (nil: the defaults). Requests whose Host header is not a loopback
// name while they arrive on a loopback address are refused by the SDK
// (403); requests carrying an Origin that is not a loopback origin are
// refused here (403), so that a web page the user visits cannot drive the
// server (DNS rebinding, cross-site POSTs). Any other path is 404.
//
// It adds a receiving middleware to s, through which ctxkit's tools hand
// their answers to the handler's writer instead of to the SDK's encoders.
func HTTPHandler(s *mcp.Server, o *HTTPOptions) http.Handler {
	var opt HTTPOptions
	if o != nil {
		opt = *o
	}
	defaults.IfNotPositive(&opt.MaxSessions, defaultMaxSessions)
	defaults.IfNotPositive(&opt.MaxBodyBytes, defaultMaxBodyBytes)
	defaults.IfNotPositive(&opt.MaxBodyBytesInFlight, defaultMaxBodyBytesInFlight)
	defaults.IfNotPositive(&opt.BodyTimeout, defaultBodyTimeout)
	defaults.IfNotPositive(&opt.SessionIdle, defaultSessionIdle)
	defaults.IfNotPositive(&opt.MaxFrames, server.Options{}.WithDefaults().MaxFrames)
	shape := toolShape(opt.MaxFrames)
	shape.top, shape.values = maxBatch, shape.values+messageMembers
	held := newHeldRequests()
	s.AddReceivingMiddleware(held.middleware)
	return &httpHandler{
		held: held,
		// The body is read here, against the budget (the SDK's own limit
		// would only cut what is already held). A call whose client went
		// away is cancelled (protocol 2026-07-28 on; before it, the POST
		// is not the call's life).
		sdk: mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s },
			&mcp.StreamableHTTPOptions{SessionTimeout: opt.SessionIdle, MaxRequestBodyBytes: opt.MaxBodyBytes + 1,
				PropagateRequestCancellation: true}),
		sessions: newSessionTable(s, opt.MaxSessions),
		bodies:   netlimit.NewBudget(max(opt.MaxBodyBytesInFlight, opt.MaxBodyBytes+1)), // one body of the limit always fits
		maxBody:  opt.MaxBodyBytes,
		timeout:  opt.BodyTimeout,
		shape:    shape,
	}
}

// maxBatch is the most messages a JSON-RPC batch (protocol versions
// before 2025-06-18) may hold.
const maxBatch = 64

// messageMembers is room in a message's value bound for its own members
// around a tool's arguments.
const messageMembers = 64

// sessionHeader carries a Streamable HTTP session's id.
const sessionHeader = "Mcp-Session-Id"

func (h *httpHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != Path {
		http.Error(w, "not found: MCP is served at "+Path, http.StatusNotFound)
		return
	}
	if o := r.Header.Get("Origin"); o != "" && !loopbackOrigin(o) {
		http.Error(w, "forbidden: origin "+strconv.Quote(o)+" is not a loopback origin", http.StatusForbidden)
		return
	}
	id := r.Header.Get(sessionHeader)
	if id != "" {
		// Before the body is read: a session whose request is still
		// arriving is in use. A stream (GET) only listens, and does not
		// keep its session from being closed for a newcomer.
		busy := r.Method != http.MethodGet
		if h.sessions.begin(id, busy) {
			defer h.sessions.end(id, busy)
		}
	}
	dw := &deadlineWriter{ResponseWriter: w, rc: http.NewResponseController(w), timeout: h.timeout}
	r.Header.Del(heldHeader)
	if r.Method == http.MethodPost {
		held, ok := h.readBody(w, dw.rc, r)
		defer h.bodies.Give(held)
		if !ok {
			return
		}
		key, results, closeHeld := h.held.open()
		defer closeHeld()
		r.Header.Set(heldHeader, key)
		dw.held = results
	}
	if id != "" {
		h.sdk.ServeHTTP(dw, r)
		return
	}
	admitted := r.Method == http.MethodPost
	if admitted && !h.sessions.admit() {
		w.Header().Set("Retry-After", "1")
		http.Error(w, fmt.Sprintf("busy: all %d sessions have a request in flight; retry shortly", h.sessions.max), http.StatusServiceUnavailable)
		return
	}
	// A response that opens a session names it in its header: the table
	// learns it as the header goes out, before the client can use it (or
	// at the end, when no header went out).
	dw.onHeader = func() { h.sessions.opened(w.Header().Get(sessionHeader), admitted) }
	defer dw.header()
	h.sdk.ServeHTTP(dw, r)
}

// deadlineWriter gives each write of a response the body timeout to
// complete, so that a client that stops reading its answer frees the
// handler (and what it holds) instead of keeping it forever. The deadline
// is lifted between writes: a stream may stay quiet for long.
type deadlineWriter struct {
	http.ResponseWriter
	rc       *http.ResponseController
	timeout  time.Duration
	onHeader func()       // run once, before the header is written
	held     *heldResults // this POST's tool answers, written where their tokens stand
}

func (d *deadlineWriter) header() {
	if d.onHeader != nil {
		f := d.onHeader
		d.onHeader = nil
		f()
	}
}

// WriteHeader records a session the header opens, then writes it.
func (d *deadlineWriter) WriteHeader(code int) {
	d.header()
	d.ResponseWriter.WriteHeader(code)
}

// Write writes p within the timeout, with any held tool answer in place
// of its token (the SDK writes an event or a JSON answer in one Write).
func (d *deadlineWriter) Write(p []byte) (int, error) {
	d.header()
	if d.held == nil {
		return d.write(p)
	}
	err := d.held.splice(p, func(b []byte) error {
		_, err := d.write(b)
		return err
	})
	if err != nil {
		return 0, err
	}
	return len(p), nil
}

func (d *deadlineWriter) write(p []byte) (int, error) {
	_ = d.rc.SetWriteDeadline(time.Now().Add(d.timeout))
	n, err := d.ResponseWriter.Write(p)
	_ = d.rc.SetWriteDeadline(time.Time{})
	return n, err
}

// Flush sends what is buffered, within the timeout.
func (d *deadlineWriter) Flush() {
	d.header()
	_ = d.rc.SetWriteDeadline(time.Now().Add(d.timeout))
	_ = d.rc.Flush()
	_ = d.rc.SetWriteDeadline(time.Time{})
}

// Unwrap lets http.ResponseController reach the connection.
func (d *deadlineWriter) Unwrap() http.ResponseWriter { return d.ResponseWriter }

// readBody reads a POST's body within the size limit, the budget of bytes
// in flight and the body deadline, and hands it to the SDK from memory. It
// answers the client itself and reports false when the body cannot be
// read. The caller gives held back to the budget when the request ends.
func (h *httpHandler) readBody(w http.ResponseWriter, rc *http.ResponseController, r *http.Request) (held int64, ok bool) {
	// Without a way to set the deadline (a test's recorder), the body is
	// still bounded in size and budget.
	deadline := rc.SetReadDeadline(time.Now().Add(h.timeout)) == nil
	body, held, err := netlimit.ReadBody(r.Body, h.maxBody, r.ContentLength, h.bodies)
	if err != nil {
		// The rest of the body is not worth waiting for: net/http would
		// read some of it before answering (under the deadline, which
		// stays), unless the connection is to close.
		w.Header().Set("Connection", "close")
	}
	switch {
	case errors.Is(err, netlimit.ErrTooLarge):
		http.Error(w, fmt.Sprintf("request body exceeds %d bytes", h.maxBody), http.StatusRequestEntityTooLarge)
	case errors.Is(err, netlimit.ErrBusy):
		w.Header().Set("Retry-After", "1")
		http.Error(w, fmt.Sprintf("busy: the server is holding its limit of %d bytes of request bodies in flight; retry shortly", h.bodies.Limit()), http.StatusServiceUnavailable)
	case errors.Is(err, os.ErrDeadlineExceeded):
		http.Error(w, fmt.Sprintf("the request body did not arrive within %s", h.timeout), http.StatusRequestTimeout)
	case err != nil:
		http.Error(w, "failed to read body", http.StatusBadRequest)
	default:
		// The SDK decodes a message at about twenty times its size when
		// it is made of tiny values, before any tool sees it: its shape is
		// bounded as a tool's arguments are (plus a batch, answered whole,
		// to maxBatch messages).
		if err := checkShape(body, h.shape); err != nil {
			http.Error(w, "bad request: "+err.Error(), http.StatusBadRequest)
			return held, false
		}
		if deadline {
			// The response may be a long stream; it is not the body's read.
			_ = rc.SetReadDeadline(time.Time{})
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		r.ContentLength = int64(len(body))
		return held, true
	}
	return held, false
}

// loopbackOrigin reports whether origin is http(s)://localhost,
// 127.0.0.1 or [::1], any port.
func loopbackOrigin(origin string) bool {
	u, err := url.Parse(origin)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") {
		return false
	}
	return transport.IsLoopback(u.Hostname())
}
