package server

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ctxkit/ctxkit/internal/defaults"
	"github.com/ctxkit/ctxkit/internal/netlimit"
	"github.com/ctxkit/ctxkit/server/api"
)

// Defaults for the zero Options.
const (
	defaultMaxBodyBytes = 8 << 20 // 8 MiB
	// defaultMaxBodyBytesInFlight bounds the request bodies held at once:
	// sixteen bodies of the default maximum size.
	defaultMaxBodyBytesInFlight = 16 * defaultMaxBodyBytes
	defaultMaxFrames            = 5000             // offers per request
	defaultTimeout              = 30 * time.Second // per request, body read included
	defaultMaxConnections       = 1024             // open at once (Options.MaxConnections)
)

// routeOther names, in the metrics, every path the Handler does not serve.
const routeOther = "other"

// Options configures a Handler and, through Serve, the server around it.
// A nil *Options or a zero field means the documented default.
type Options struct {
	// MaxBodyBytes bounds a request body; a larger body is refused with 413
	// without being read past the limit. Default 8 MiB.
	MaxBodyBytes int64
	// MaxBodyBytesInFlight bounds the bytes of request bodies all requests
	// hold at once. A body reserves its buffer as it grows with the bytes
	// that arrived (never from a declared Content-Length), and a request
	// that would pass the bound is answered 503 unavailable with
	// Retry-After, so that many slow or large uploads cannot exhaust the
	// server's memory. Default 128 MiB (sixteen bodies of the default
	// MaxBodyBytes); it is raised to MaxBodyBytes+1 when smaller, so one body of the limit always fits.
	MaxBodyBytesInFlight int64
	// MaxFrames bounds the offers (frames) in one request; more is refused
	// with 413 and code too_many_frames. Default 5000.
	MaxFrames int
	// Timeout bounds each request from routing to response, including the
	// time to receive the body; a body still arriving is answered 408, work
	// still running 504. Default 30 s.
	Timeout time.Duration
	// Logger receives the handler's errors and, with LogRequests, one line
	// per request; never the request or response content unless
	// LogContent is set. Default: no logging.
	Logger *slog.Logger
	// LogRequests logs one line per request at Info level: method, route,
	// status, duration and sizes. It is off by default because at
	// thousands of requests a second each line is a write to the log under
	// the slog handler's lock, which every request then queues for;
	// GET /metrics has the same counts and latencies.
	LogRequests bool
	// LogContent adds request bodies to the log at debug level. They can
	// hold frame content and keys: use it only to debug.
	LogContent bool
	// Query serves POST /v1/query. Nil: the route answers 503 unavailable.
	Query Querier
	// Usage records every frame /v1/query serves and answers GET
	// /v1/usage. Nil: this process's most recent 100,000 served frames,
	// lost on exit; a report reaching back past the oldest one held is
	// refused with 400 rather than undercounted.
	Usage UsageRecorder

	// The fields below configure Serve; a handler mounted in another
	// server ignores them.

	// ShutdownTimeout bounds the wait for in-flight requests once Serve's
	// context is done; requests still running after it are cut off.
	// Default 30 s.
	ShutdownTimeout time.Duration
	// DrainDelay bounds the drain phase of a shutdown: the listener is
	// closed at once, and for up to DrainDelay every response carries
	// "Connection: close" so that clients stop reusing their connections
	// cleanly, before the remaining idle connections are closed. Without
	// it, a client that sends a request on a keep-alive connection just as
	// the server closes it gets no answer. The phase ends early when no
	// connection is left. Default 1 s; negative: none.
	DrainDelay time.Duration
	// OnShutdown, when set, runs after the last in-flight request has
	// finished (or the shutdown timeout passed), for example to shut
	// providers down. Its error is returned by Serve.
	OnShutdown func(context.Context) error
	// MaxConnections bounds the connections Serve keeps open at once.
	// When all are open, a new client takes the place of the one waiting
	// longest with no request in flight (idle keep-alive at once, silent
	// since connecting after a second); while all are serving requests,
	// further clients wait in the listen backlog. Each
	// costs a goroutine and its read and write buffers (about 16 KiB when
	// idle), so the default of 1024 holds the memory for connections to a
	// few tens of megabytes. Negative: no bound.
	MaxConnections int
}

// Handler is the ctxkit HTTP API as an http.Handler; mount it in any Go
// server or run it with `ctxkit serve`. It keeps no state between requests
// except its metrics and the configured Querier. Safe for concurrent use.
type Handler struct {
	maxBody   int64
	bodies    *netlimit.Budget
	maxFrames int
	timeout   time.Duration
	log       *slog.Logger
	logReqs   bool
	logBody   bool
	query     Querier
	usage     UsageRecorder

	serve Options // the fields Serve reads

	routes   map[string]route
	metrics  *metrics
	draining atomic.Bool
}

type route struct {
	method string
	serve  func(w http.ResponseWriter, r *http.Request)
}

// WithDefaults returns o with every limit and timing it leaves zero (or,
// where the field says so, negative) set to its documented default: the
// values a Handler and Serve use. Logger, Query and Usage stay as they are.
func (o Options) WithDefaults() Options {
	defaults.IfNotPositive(&o.MaxBodyBytes, defaultMaxBodyBytes)
	defaults.IfNotPositive(&o.MaxBodyBytesInFlight, defaultMaxBodyBytesInFlight)
	defaults.IfNotPositive(&o.MaxFrames, defaultMaxFrames)
	defaults.IfNotPositive(&o.Timeout, defaultTimeout)
	defaults.IfNotPositive(&o.ShutdownTimeout, defaultShutdownTimeout)
	o.DrainDelay = cmp.Or(o.DrainDelay, defaultDrainDelay)
	o.MaxConnections = cmp.Or(o.MaxConnections, defaultMaxConnections)
	return o
}

// New returns a Handler configured by opts (nil for defaults).
func New(opts *Options) *Handler {
	var o Options
	if opts != nil {
		o = *opts
	}
	o = o.WithDefaults()
	h := &Handler{
		maxBody:   o.MaxBodyBytes,
		maxFrames: o.MaxFrames,
		timeout:   o.Timeout,
		log:       o.Logger,
		logReqs:   o.LogRequests,
		logBody:   o.LogContent,
		query:     o.Query,
		usage:     o.Usage,
		serve:     o,
	}
	h.bodies = netlimit.NewBudget(max(o.MaxBodyBytesInFlight, h.maxBody+1)) // one body of the limit always fits
	if h.log == nil {
		h.log = slog.New(slog.DiscardHandler)
	}
	if h.usage == nil {
		h.usage = &memoryUsage{}
	}
	h.routes = map[string]route{
		api.PathHealth:  {http.MethodGet, h.serveHealth},
		api.PathMetrics: {http.MethodGet, h.serveMetrics},
		api.PathUsage:   {http.MethodGet, h.serveUsage},
	}
	h.addRoutes()
	names := []string{routeOther}
	for p := range h.routes {
		names = append(names, p)
	}
	h.metrics = newMetrics(names)
	return h
}

// Drain makes GET /healthz answer 503 {"status":"draining"} so that a load
// balancer stops sending new requests, and closes each connection after its
// next response ("Connection: close"); other routes keep working. Serve
// calls it when a shutdown begins; call it before http.Server.Shutdown when
// running the handler yourself.
func (h *Handler) Drain() { h.draining.Store(true) }

// ServeHTTP routes the request, enforcing the limits and recording metrics.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	sw := &statusWriter{ResponseWriter: w}
	name := routeOther
	defer func() {
		if v := recover(); v != nil {
			if v == http.ErrAbortHandler {
				panic(v)
			}
			h.log.Error("handler panic", "route", name, "panic", fmt.Sprint(v))
			if !sw.wrote {
				writeError(sw, &api.Error{Status: http.StatusInternalServerError, Code: api.CodeInternal, Message: "internal error"})
			}
		}
		d := time.Since(start)
		h.metrics.observe(name, sw.status(), d)
		if !h.logReqs {
			return
		}
		h.log.LogAttrs(r.Context(), slog.LevelInfo, "request",
			slog.String("method", r.Method), slog.String("route", name),
			slog.Int("status", sw.status()), slog.Duration("duration", d),
			slog.Int64("request_bytes", max(r.ContentLength, 0)), slog.Int64("response_bytes", sw.n))
	}()

	if h.draining.Load() {
		// Let the client know not to reuse the connection, so that a
		// shutdown never closes it under a request being sent.
		sw.Header().Set("Connection", "close")
	}
	rt, ok := h.routes[r.URL.Path]
	switch {
	case !ok:
		writeError(sw, &api.Error{Status: http.StatusNotFound, Code: api.CodeNotFound,
			Message: fmt.Sprintf("route: no route %q; see /v1/compose, /v1/context, /v1/assess, /v1/prompt, /v1/query, /v1/usage, /healthz, /metrics", r.URL.Path)})
		return
	case r.Method != rt.method && !(r.Method == http.MethodHead && rt.method == http.MethodGet):
		name = r.URL.Path
		sw.Header().Set("Allow", rt.method)
		writeError(sw, &api.Error{Status: http.StatusMethodNotAllowed, Code: api.CodeMethodNotAllowed,
			Message: fmt.Sprintf("route: %s %s is not served; use %s", r.Method, r.URL.Path, rt.method)})
		return
	}
	name = r.URL.Path
	ctx, cancel := context.WithTimeout(r.Context(), h.timeout)
	defer cancel()
	// Bound the body read and the response write on the connection itself,
	// so a client trickling bytes cannot hold a goroutine longer than the
	// timeout. Servers that do not support deadlines just skip this.
	rc := http.NewResponseController(w)
	_ = rc.SetReadDeadline(start.Add(h.timeout))
	_ = rc.SetWriteDeadline(start.Add(2 * h.timeout))
	rt.serve(sw, r.WithContext(ctx))
}

// jsonHandler adapts fn, which receives the decoded request body, to a
// route: it reads the body within the limits, decodes it, and writes fn's
// answer as JSON or the error envelope.
func jsonHandler[Req any](h *Handler, fn func(ctx context.Context, req *Req) (any, error)) func(http.ResponseWriter, *http.Request) {
	return func(w http.ResponseWriter, r *http.Request) {
		b, e := h.readBody(w, r)
		defer b.release() // decoding copies what it keeps; the body is not used after
		if e != nil {
			writeError(w, e)
			return
		}
		body := b.bytes()
		if h.logBody {
			h.log.Debug("request body", "route", r.URL.Path, "body", string(body))
		}
		req := new(Req)
		if e := decodeJSON(body, req); e != nil {
			writeError(w, e)
			return
		}
		resp, err := fn(r.Context(), req)
		if err != nil {
			writeError(w, h.asError(r.Context(), err))
			return
		}
		writeJSON(w, http.StatusOK, resp)
	}
}

// asError maps an error from a route's work to the error envelope. Typed
// protocol-rule errors become 422 naming the rule; only an error the server
// cannot attribute to the request becomes 500.
func (h *Handler) asError(ctx context.Context, err error) *api.Error {
	var e *api.Error
	if errors.As(err, &e) {
		return e
	}
	if r, field, ok := ruleOf(err); ok {
		return &api.Error{Status: http.StatusUnprocessableEntity, Code: api.CodeRuleViolation, Rule: r, Field: field, Message: err.Error()}
	}
	if errors.Is(err, context.DeadlineExceeded) || ctx.Err() == context.DeadlineExceeded {
		return &api.Error{Status: http.StatusGatewayTimeout, Code: api.CodeTimeout, Message: fmt.Sprintf("the request did not finish within %v", h.timeout)}
	}
	h.log.Error("internal error", "error", err.Error())
	return &api.Error{Status: http.StatusInternalServerError, Code: api.CodeInternal, Message: "internal error"}
}

var bufPool = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// getBuffer returns an empty buffer from the pool.
func getBuffer() *bytes.Buffer {
	b := bufPool.Get().(*bytes.Buffer)
	b.Reset()
	return b
}

// putBuffer returns b to the pool unless it grew past 1 MiB (a rare large
// request should not pin its memory).
func putBuffer(b *bytes.Buffer) {
	if b.Cap() <= 1<<20 {
		bufPool.Put(b)
	}
}

// answer is an encoded answer in a pooled buffer.
type answer struct{ b *[]byte }

var answerPool = sync.Pool{New: func() any { return new([]byte) }}

// getAnswer returns an empty answer buffer from the pool.
func getAnswer() *answer {
	b := answerPool.Get().(*[]byte)
	*b = (*b)[:0]
	return &answer{b: b}
}

// release returns the buffer to the pool unless it grew past 1 MiB.
func (a *answer) release() {
	if cap(*a.b) <= 1<<20 {
		answerPool.Put(a.b)
	}
	a.b = nil
}

// writeJSON encodes v without HTML escaping (prompts keep their '<' bytes)
// and writes it with its length.
func writeJSON(w http.ResponseWriter, status int, v any) {
	if a, ok := v.(*answer); ok { // encoded into a pooled buffer
		b := append(*a.b, '\n')
		hd := w.Header()
		hd.Set("Content-Type", "application/json")
		hd.Set("Content-Length", strconv.Itoa(len(b)))
		w.WriteHeader(status)
		_, _ = w.Write(b)
		*a.b = b
		a.release()
		return
	}
	if raw, ok := v.(json.RawMessage); ok { // already encoded (compose's stable JSON)
		hd := w.Header()
		hd.Set("Content-Type", "application/json")
		hd.Set("Content-Length", strconv.Itoa(len(raw)+1))
		w.WriteHeader(status)
		_, _ = w.Write(raw)
		_, _ = w.Write([]byte{'\n'})
		return
	}
	buf := getBuffer()
	defer putBuffer(buf)
	if err := encodeJSON(buf, v); err != nil {
		writeError(w, &api.Error{Status: http.StatusInternalServerError, Code: api.CodeInternal, Message: "encode response: " + err.Error()})
		return
	}
	hd := w.Header()
	hd.Set("Content-Type", "application/json")
	hd.Set("Content-Length", strconv.Itoa(buf.Len()))
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}

func encodeJSON(buf *bytes.Buffer, v any) error {
	enc := json.NewEncoder(buf)
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

func (h *Handler) serveHealth(w http.ResponseWriter, r *http.Request) {
	if h.draining.Load() {
		writeJSON(w, http.StatusServiceUnavailable, map[string]string{"status": "draining"})
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
}

func (h *Handler) serveMetrics(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
	_, _ = h.metrics.writeTo(w)
}

// statusWriter remembers the status and the bytes written.
type statusWriter struct {
	http.ResponseWriter
	code  int
	wrote bool
	n     int64
}

// WriteHeader records the first status written.
func (s *statusWriter) WriteHeader(code int) {
	if !s.wrote {
		s.code, s.wrote = code, true
	}
	s.ResponseWriter.WriteHeader(code)
}

// Write counts the bytes written; the first write implies status 200.
func (s *statusWriter) Write(p []byte) (int, error) {
	if !s.wrote {
		s.code, s.wrote = http.StatusOK, true
	}
	n, err := s.ResponseWriter.Write(p)
	s.n += int64(n)
	return n, err
}

// Unwrap lets http.ResponseController reach the connection.
func (s *statusWriter) Unwrap() http.ResponseWriter { return s.ResponseWriter }

func (s *statusWriter) status() int {
	if !s.wrote {
		return http.StatusOK
	}
	return s.code
}
