// Package loadgen drives a ctxkit HTTP service on loopback with concurrent
// keep-alive connections and reports throughput and latency percentiles.
// A run is closed-loop (each connection sends as soon as its answer is in)
// or, with Options.Rate, open-loop on a fixed schedule; it sends through
// net/http's client or, with Options.Raw, a minimal HTTP/1.1 client that
// leaves more of the machine to the server. It refuses any host but
// loopback and always stops by itself: after Options.Duration or
// Options.MaxRequests, whichever comes first.
package loadgen

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"slices"
	"sync"
	"syscall"
	"time"

	"github.com/ctxkit/ctxkit/host/transport"
	"github.com/ctxkit/ctxkit/internal/defaults"
)

// maxDuration bounds Options.Duration.
const maxDuration = 10 * time.Minute

// Options configures Run. Zero fields mean the documented defaults.
type Options struct {
	// URL is the loopback URL every request is POSTed to.
	URL string
	// Body is sent with Content-Type application/json.
	Body []byte
	// Conns is the number of concurrent connections (workers). Default 64.
	Conns int
	// Duration bounds the run. Default 10 s; at most maxDuration.
	Duration time.Duration
	// MaxRequests, when positive, stops the run after that many requests.
	MaxRequests int64
	// Check, when set, inspects each 2xx body; an error counts the response
	// as broken.
	Check func(body []byte) error
	// Idempotent sends an Idempotency-Key header, which lets Go's transport
	// retry a request whose keep-alive connection the server closed before
	// reading it (as a server does when it shuts down). Use it only for
	// routes without side effects, such as /v1/compose.
	Idempotent bool
	// Rate, when positive, makes the run open-loop: request k (from 0) is
	// due Rate-th of a second apart, k/Rate seconds after the start, and a
	// free worker waits for its due time instead of sending at once. Its
	// latency is timed from the due time, not from the send, so a server
	// that falls behind is charged for the wait it caused (no coordinated
	// omission). Conns must be large enough to keep up; the report's RPS
	// shows whether it did. Zero sends back to back on every connection.
	Rate float64
	// Raw sends with a minimal HTTP/1.1 client on one connection per worker
	// (see rawConn) instead of net/http's, which costs several times more
	// CPU per request. It does not retry: a request on a keep-alive
	// connection the server closed counts as dropped even with Idempotent.
	Raw bool
}

// Report is the outcome of a run.
type Report struct {
	Requests int64         // responses read completely (any status)
	OK       int64         // 2xx responses that passed Check
	Statuses map[int]int64 // responses by status
	Broken   int64         // responses cut off, unreadable, or failing Check
	Dropped  int64         // requests that got no response at all (connection closed before it)
	Refused  int64         // requests that never reached the server (connection refused, or not accepted before the listener closed)
	// Elapsed is the wall-clock time from starting the workers until the
	// last one stopped; RPS divides Requests by it.
	Elapsed time.Duration
	// P50 and P90 are nearest-rank percentiles of the latency of the
	// requests counted in Requests, each timed from sending the request
	// (from its due time, with Options.Rate) until its whole body was read. All four are zero when Requests is 0.
	P50, P90 time.Duration
	// P99 is the 99th percentile of the same latencies, Max the slowest.
	P99, Max time.Duration
	FirstErr error // the first broken response's error, if any
	// FirstDropped is the first error of a request that got no response.
	FirstDropped error
}

// RPS is completed requests per second.
func (r *Report) RPS() float64 {
	if r.Elapsed <= 0 {
		return 0
	}
	return float64(r.Requests) / r.Elapsed.Seconds()
}

// String renders the report on one line.
func (r *Report) String() string {
	return fmt.Sprintf("requests=%d ok=%d broken=%d dropped=%d refused=%d elapsed=%.2fs rps=%.0f p50=%v p90=%v p99=%v max=%v statuses=%v",
		r.Requests, r.OK, r.Broken, r.Dropped, r.Refused, r.Elapsed.Seconds(), r.RPS(),
		r.P50.Round(time.Microsecond), r.P90.Round(time.Microsecond), r.P99.Round(time.Microsecond), r.Max.Round(time.Microsecond), r.Statuses)
}

// Run sends requests until the duration passes, MaxRequests is reached or
// ctx is done, and reports what it saw.
func Run(ctx context.Context, o Options) (*Report, error) {
	u, err := o.check()
	if err != nil {
		return nil, err
	}
	tr := &http.Transport{
		MaxIdleConns:        o.Conns,
		MaxIdleConnsPerHost: o.Conns,
		MaxConnsPerHost:     o.Conns,
		DisableCompression:  true,
	}
	defer tr.CloseIdleConnections()
	ctx, cancel := context.WithTimeout(ctx, o.Duration)
	defer cancel()
	r := &run{o: o, u: u, hc: &http.Client{Transport: tr, Timeout: 30 * time.Second},
		rep: &Report{Statuses: map[int]int64{}}, started: time.Now()}
	if o.Rate > 0 {
		r.due = make(chan time.Time)
		go r.pace(ctx)
	}
	var wg sync.WaitGroup
	for range o.Conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r.work(ctx)
		}()
	}
	wg.Wait()
	rep := r.rep
	rep.Elapsed = time.Since(r.started)
	slices.Sort(r.lat)
	rep.P50, rep.P90, rep.P99 = pct(r.lat, 50), pct(r.lat, 90), pct(r.lat, 99)
	if len(r.lat) > 0 {
		rep.Max = r.lat[len(r.lat)-1]
	}
	return rep, nil
}

// check validates o, fills in its defaults and returns the parsed URL.
func (o *Options) check() (*url.URL, error) {
	u, err := url.Parse(o.URL)
	if err != nil {
		return nil, fmt.Errorf("loadgen: url: %w", err)
	}
	if !transport.IsLoopback(u.Hostname()) {
		return nil, fmt.Errorf("loadgen: url %q: only loopback hosts are allowed", o.URL)
	}
	if o.Raw && u.Scheme != "http" {
		return nil, fmt.Errorf("loadgen: url %q: the raw client speaks plain http only", o.URL)
	}
	defaults.IfNotPositive(&o.Conns, 64)
	defaults.IfNotPositive(&o.Duration, 10*time.Second)
	if o.Duration > maxDuration {
		return nil, fmt.Errorf("loadgen: duration %v exceeds %v", o.Duration, maxDuration)
	}
	return u, nil
}

// run is one Run's shared state: the workers' tally and the pacing.
type run struct {
	o       Options
	u       *url.URL
	hc      *http.Client
	started time.Time
	due     chan time.Time // with a rate: each request's due time

	mu     sync.Mutex
	rep    *Report
	lat    []time.Duration
	issued int64
}

// take claims the next request: its sequence number (from 0), or false
// when the run has sent all it may.
func (r *run) take() (int64, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.o.MaxRequests > 0 && r.issued >= r.o.MaxRequests {
		return 0, false
	}
	r.issued++
	return r.issued - 1, true
}

// pace hands each request's due time to the first free worker: one timer
// for the run instead of one per request, so the generator's own wake-ups
// add less to the latencies it reports.
func (r *run) pace(ctx context.Context) {
	defer close(r.due)
	for {
		k, ok := r.take()
		if !ok {
			return
		}
		t := r.started.Add(time.Duration(float64(k) / r.o.Rate * float64(time.Second)))
		if end, ok := ctx.Deadline(); ok && !t.Before(end) {
			return // due after the run ends
		}
		if !sleepUntil(ctx, t) {
			return
		}
		select {
		case r.due <- t:
		case <-ctx.Done():
			return
		}
	}
}

// next waits for the worker's next request and returns the time its
// latency counts from, or false when the run is over.
func (r *run) next() (time.Time, bool) {
	if r.due != nil {
		t, ok := <-r.due
		return t, ok
	}
	_, ok := r.take()
	return time.Now(), ok
}

// work is one worker: it sends until the run is over.
func (r *run) work(ctx context.Context) {
	var local []time.Duration
	buf := new(bytes.Buffer)
	var raw *rawConn
	if r.o.Raw {
		raw = &rawConn{addr: hostPort(r.u), req: rawRequest(r.u, r.o.Body, r.o.Idempotent)}
		defer raw.close()
	}
	for ctx.Err() == nil {
		t0, ok := r.next()
		if !ok {
			break
		}
		var status int
		var body []byte
		var err error
		if raw != nil {
			status, body, err = raw.send(ctx)
		} else {
			status, err = send(ctx, r.hc, r.o.URL, r.o.Body, buf, r.o.Idempotent)
			body = buf.Bytes()
		}
		d := time.Since(t0)
		if err != nil && (ctx.Err() != nil || errors.Is(err, context.DeadlineExceeded)) {
			break // the run ended mid-request: not the server's fault
		}
		if err == nil && status/100 == 2 && r.o.Check != nil {
			if cerr := r.o.Check(body); cerr != nil {
				err = fmt.Errorf("status %d: %w", status, cerr)
			}
		}
		r.record(status, err)
		switch {
		case err == nil:
			local = append(local, d)
		case isRefused(err):
			time.Sleep(5 * time.Millisecond)
		}
	}
	r.mu.Lock()
	r.lat = append(r.lat, local...)
	r.mu.Unlock()
}

// record counts one request's outcome.
func (r *run) record(status int, err error) {
	var noResp *noResponseError
	r.mu.Lock()
	defer r.mu.Unlock()
	rep := r.rep
	switch {
	case isRefused(err):
		rep.Refused++
	case errors.As(err, &noResp):
		rep.Dropped++
		if rep.FirstDropped == nil {
			rep.FirstDropped = err
		}
	case err != nil:
		rep.Broken++
		if rep.FirstErr == nil {
			rep.FirstErr = err
		}
	default:
		rep.Requests++
		rep.Statuses[status]++
		if status/100 == 2 {
			rep.OK++
		}
	}
}

// sleepUntil waits until t, or reports false when ctx ends first.
func sleepUntil(ctx context.Context, t time.Time) bool {
	d := time.Until(t)
	if d <= 0 {
		return ctx.Err() == nil
	}
	tm := time.NewTimer(d)
	defer tm.Stop()
	select {
	case <-tm.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// noResponseError is a request that got no response: the connection
// failed or closed before any status line arrived.
type noResponseError struct{ err error }

// Error says the request got no response, and why.
func (e *noResponseError) Error() string { return "no response: " + e.err.Error() }

// Unwrap returns the transport error.
func (e *noResponseError) Unwrap() error { return e.err }

func send(ctx context.Context, hc *http.Client, u string, body []byte, buf *bytes.Buffer, idempotent bool) (int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, bytes.NewReader(body))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	if idempotent {
		req.Header.Set("Idempotency-Key", "loadgen")
	}
	// A fresh connection that fails before any response never reached the
	// server's handler: the listener closed with it still in its accept
	// backlog, as a shutdown does. Only a reused connection can drop a
	// request the server had agreed to read.
	var reused bool
	req = req.WithContext(httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{
		GotConn: func(info httptrace.GotConnInfo) { reused = info.Reused },
	}))
	resp, err := hc.Do(req)
	if err != nil {
		if isRefused(err) {
			return 0, err
		}
		if !reused {
			return 0, &notAcceptedError{err}
		}
		return 0, &noResponseError{err}
	}
	defer resp.Body.Close()
	buf.Reset()
	if _, err := buf.ReadFrom(resp.Body); err != nil {
		return 0, fmt.Errorf("read body after status %d: %w", resp.StatusCode, err)
	}
	if resp.ContentLength >= 0 && int64(buf.Len()) != resp.ContentLength {
		return 0, fmt.Errorf("body of %d bytes, Content-Length %d: %w", buf.Len(), resp.ContentLength, io.ErrUnexpectedEOF)
	}
	return resp.StatusCode, nil
}

// notAcceptedError is a request on a new connection that failed before any
// response: the server never accepted the connection.
type notAcceptedError struct{ err error }

// Error says the connection was not accepted, and why.
func (e *notAcceptedError) Error() string { return "connection not accepted: " + e.err.Error() }

// Unwrap returns the transport error.
func (e *notAcceptedError) Unwrap() error { return e.err }

// isRefused reports an error that kept the request from reaching the
// server: the connection could not be established (refused), was reset
// while still in a closed listener's backlog, or failed on its first use
// before any response.
func isRefused(err error) bool {
	var op *net.OpError
	var na *notAcceptedError
	return err != nil && (errors.Is(err, syscall.ECONNREFUSED) || errors.As(err, &op) && op.Op == "dial" || errors.As(err, &na))
}

// pct returns the p-th percentile of sorted (nearest rank).
func pct(sorted []time.Duration, p int) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := (len(sorted)*p + 99) / 100
	return sorted[max(i-1, 0)]
}

// hostPort is u's host with its port, 80 when the URL has none.
func hostPort(u *url.URL) string {
	if u.Port() == "" {
		return net.JoinHostPort(u.Hostname(), "80")
	}
	return u.Host
}
