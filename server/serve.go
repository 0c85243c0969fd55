package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/ctxkit/ctxkit/internal/netlimit"
)

// defaultShutdownTimeout bounds how long Serve waits for in-flight requests
// after its context is cancelled.
const defaultShutdownTimeout = 30 * time.Second

// defaultDrainDelay is the longest drain phase of a shutdown; see
// Options.DrainDelay.
const defaultDrainDelay = time.Second

// newHTTPServer returns an http.Server for h with timeouts that protect it
// from slow or idle clients: headers must arrive within 10 s, idle
// keep-alive connections are closed after 2 minutes, and headers are capped
// at 64 KiB. The body read and the response write are bounded per request
// by h's own timeout.
func newHTTPServer(h *Handler) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(h.log.Handler(), slog.LevelWarn),
	}
}

// Serve answers requests on ln with h until ctx is done, then shuts down
// gracefully: the listener stops accepting and /healthz answers 503; during
// the drain phase (Options.DrainDelay) connections are closed after
// their next response; then in-flight requests finish (up to
// ShutdownTimeout), idle connections close, and OnShutdown runs. The
// connection limits and shutdown timings are the ones h was made with. It
// returns nil after a clean shutdown.
func Serve(ctx context.Context, ln net.Listener, h *Handler) error {
	o := h.serve // New filled in the defaults
	limitHook := func(net.Conn, http.ConnState) {}
	if o.MaxConnections > 0 {
		ln, limitHook = netlimit.Listener(ln, o.MaxConnections)
	}
	srv := newHTTPServer(h)
	var conns atomic.Int64 // open connections
	srv.ConnState = func(c net.Conn, st http.ConnState) {
		limitHook(c, st)
		switch st {
		case http.StateNew:
			conns.Add(1)
		case http.StateClosed, http.StateHijacked:
			conns.Add(-1)
		}
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()

	var serveErr error
	select {
	case serveErr = <-errc: // the listener failed before any shutdown
	case <-ctx.Done():
	}
	h.Drain()
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), o.ShutdownTimeout)
	defer cancel()
	var errs []error
	if serveErr != nil && !errors.Is(serveErr, http.ErrServerClosed) {
		errs = append(errs, fmt.Errorf("serve: %w", serveErr))
	}
	if serveErr == nil {
		// Stop accepting now; connections already open keep being served.
		_ = ln.Close()
		if err := <-errc; err != nil && !errors.Is(err, net.ErrClosed) && !errors.Is(err, http.ErrServerClosed) {
			errs = append(errs, fmt.Errorf("serve: %w", err))
		}
		if o.DrainDelay > 0 {
			// The handler is draining: each response now carries
			// "Connection: close". (SetKeepAlivesEnabled(false) would
			// close idle connections at once, racing the clients.)
			deadline := time.NewTimer(o.DrainDelay)
			tick := time.NewTicker(5 * time.Millisecond)
		drain:
			for conns.Load() > 0 {
				select {
				case <-deadline.C:
					break drain
				case <-sctx.Done():
					break drain
				case <-tick.C:
				}
			}
			deadline.Stop()
			tick.Stop()
		}
	}
	if err := srv.Shutdown(sctx); err != nil {
		errs = append(errs, fmt.Errorf("serve: shutdown: %w", err))
		_ = srv.Close()
	}
	if o.OnShutdown != nil {
		if err := o.OnShutdown(sctx); err != nil {
			errs = append(errs, fmt.Errorf("serve: shutdown providers: %w", err))
		}
	}
	return errors.Join(errs...)
}
