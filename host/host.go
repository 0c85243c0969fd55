package host

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ctxkit/ctxkit/frame"
	"github.com/ctxkit/ctxkit/host/consent"
	"github.com/ctxkit/ctxkit/host/serve"
	"github.com/ctxkit/ctxkit/internal/defaults"
	"github.com/ctxkit/ctxkit/rule"
	"github.com/ctxkit/ctxkit/trust"
	"github.com/ctxkit/ctxkit/wire"
)

// AuditPolicy says what the per-leg audit does with a frame that breaks a
// per-frame rule (Q1 kind filter, B3 honesty, the frame validity rules).
// Budget lies (B2) and frame floods (B4) always drop the whole leg.
type AuditPolicy int

const (
	// ExcludeFrames (the default) removes each offending frame from the leg
	// and reports it with its rule; the leg's other frames are accepted.
	ExcludeFrames AuditPolicy = iota
	// DropLeg drops the provider's whole reply when any frame breaks a rule,
	// reporting every offending frame.
	DropLeg
)

var policyNames = [...]string{"exclude-frames", "drop-leg"}

// String returns "exclude-frames" or "drop-leg".
func (p AuditPolicy) String() string { return spell(policyNames[:], int(p), "policy") }

// MarshalText spells the policy for JSON.
func (p AuditPolicy) MarshalText() ([]byte, error) { return []byte(p.String()), nil }

// UnmarshalText parses a spelling produced by MarshalText.
func (p *AuditPolicy) UnmarshalText(b []byte) error {
	return unspell(p, policyNames[:], b, "audit policy")
}

// Options configures a Host. A nil *Options or zero fields mean the defaults.
type Options struct {
	// Version is the protocol version the host speaks (default
	// wire.ProtocolVersion).
	Version string
	// HandshakeTimeout bounds each provider's handshake. Default: the
	// QueryTimeout, so that one timeout bounds a whole leg's waits. A
	// deadline on the caller's context bounds the handshake too, when it
	// comes first.
	HandshakeTimeout time.Duration
	// QueryTimeout bounds each leg's query and each verify (default 30 s).
	QueryTimeout time.Duration
	// ShutdownGrace is how long Close lets each stdio child exit by itself
	// before killing its process group (default 2 s).
	ShutdownGrace time.Duration
	// Consent is the consent store the gate consults (default: an empty
	// in-memory store, so every egress provider is refused).
	Consent *consent.Store
	// EmbeddingsFingerprint names the model behind query embeddings
	// ("<model-id>/<dims>[/<norm>]"). A query's embedding is sent only to
	// providers declaring exactly this fingerprint (E1); with none set, no
	// embedding is ever sent.
	EmbeddingsFingerprint string
	// Trust holds the operator's attester keys; FanOut.Compose checks
	// attestations against it (nil: no key is trusted).
	Trust *trust.Store
	// Policy is the per-frame audit policy (default ExcludeFrames).
	Policy AuditPolicy
}

// entry is one registered provider.
type entry struct {
	id        string
	p         provider
	forceEgr  bool   // C4: a non-loopback HTTP provider is egress whatever it claims
	endpoint  string // URL or command line, what consent is bound to ("" when unnamed)
	secrets   secrets
	once      sync.Once
	ack       *wire.HandshakeAck
	info      frame.ProviderInfo // ack.Provider with C4 applied
	handErr   error
	handshook atomic.Bool // set (after the fields above) once the handshake ran
}

// Host talks to CGP providers: it handshakes, gates payloads on consent, fans
// queries out concurrently with per-leg audits, verifies held frames and
// accounts for what was served. A Host is safe for concurrent use.
type Host struct {
	opts Options

	mu        sync.Mutex
	providers []*entry
	byID      map[string]*entry
	closed    bool
}

// New returns a Host with the given options (nil for the defaults).
func New(opts *Options) *Host {
	var o Options
	if opts != nil {
		o = *opts
	}
	o.Version = cmp.Or(o.Version, wire.ProtocolVersion)
	defaults.IfNotPositive(&o.QueryTimeout, defaultRequestTimeout)
	defaults.IfNotPositive(&o.HandshakeTimeout, o.QueryTimeout)
	if o.Consent == nil {
		o.Consent = consent.NewStore()
	}
	return &Host{opts: o, byID: make(map[string]*entry)}
}

// Consent returns the host's consent store.
func (h *Host) Consent() *consent.Store { return h.opts.Consent }

// Register adds p under the host-side id (the routing and consent key, and
// the provider part of every FrameID it serves). The handshake happens on
// first use (or Connect), so a provider that fails it shows up as a typed
// leg outcome rather than aborting a fan-out. The host owns p from here on
// and shuts it down in Close.
func (h *Host) add(id string, p provider) error {
	return h.register(id, p, "", false)
}

// registerAt is Register for a provider reached at endpoint (its URL or
// command line): consent bound to an endpoint covers the provider only
// when the endpoints are equal.
func (h *Host) registerAt(id, endpoint string, p provider) error {
	return h.register(id, p, endpoint, false)
}

func (h *Host) register(id string, p provider, endpoint string, forceEgress bool) error {
	if strings.TrimSpace(id) == "" {
		return errors.New("host: register: empty provider id")
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return newErr(id, "register", ErrClosed, "", nil)
	}
	if _, dup := h.byID[id]; dup {
		return fmt.Errorf("host: register %q: id already registered", id)
	}
	e := &entry{id: id, p: p, forceEgr: forceEgress, endpoint: endpoint, secrets: secretsOfProvider(p)}
	h.providers = append(h.providers, e)
	h.byID[id] = e
	return nil
}

// AddInProcess registers a Go value serving CGP in the host's process.
func (h *Host) AddInProcess(id string, s serve.Server) error {
	return h.add(id, newInProcess(id, s))
}

// AddInProcessAt is AddInProcess for a Go value that stands for a provider
// reached elsewhere (a bridge to a remote server): endpoint names that
// server, its URL or command line, and consent bound to an endpoint covers
// it only at that endpoint, as for AddHTTP and AddStdio.
func (h *Host) AddInProcessAt(id, endpoint string, s serve.Server) error {
	return h.registerAt(id, endpoint, newInProcess(id, s))
}

// AddStdio spawns a child provider and registers it.
func (h *Host) AddStdio(id, program string, args []string, opts *StdioOptions) error {
	o := opts.withDefaults()
	if opts == nil || opts.HandshakeTimeout <= 0 {
		o.HandshakeTimeout = h.opts.HandshakeTimeout
	}
	if opts == nil || opts.RequestTimeout <= 0 {
		o.RequestTimeout = h.opts.QueryTimeout
	}
	if (opts == nil || opts.ShutdownGrace <= 0) && h.opts.ShutdownGrace > 0 {
		o.ShutdownGrace = h.opts.ShutdownGrace
	}
	p, err := startStdio(id, program, args, &o)
	if err != nil {
		return err
	}
	if err := h.registerAt(id, commandEndpoint(program, args), p); err != nil {
		_ = p.Shutdown(context.Background())
		return err
	}
	return nil
}

// AddUnstarted registers, under id, a provider that could not be set up,
// typically a stdio provider whose AddStdio failed with ErrNotStarted. Every
// fan-out then reports its leg as failed with err (StatusNotStarted for
// ErrNotStarted) beside the other providers' answers, rather than the
// provider silently missing from the audit.
func (h *Host) AddUnstarted(id string, err error) error {
	if err == nil {
		return fmt.Errorf("host: register %q: AddUnstarted needs the error that kept the provider from starting", id)
	}
	return h.add(id, unstarted{err: err})
}

// unstarted is the Provider of AddUnstarted: every call fails with err.
type unstarted struct{ err error }

func (u unstarted) Handshake(context.Context, string) (*wire.HandshakeAck, error) { return nil, u.err }
func (u unstarted) Query(context.Context, *frame.Query) (*wire.Result, error)     { return nil, u.err }
func (u unstarted) Verify(context.Context, []frame.ID) ([]wire.Verdict, error)    { return nil, u.err }
func (u unstarted) Shutdown(context.Context) error                                { return nil }

// AddHTTP registers an HTTP provider at url. Plain http:// to anything but a
// loopback address is refused before any connection is attempted (C7); a
// non-loopback provider is treated as egress whatever it declares (C4).
func (h *Host) AddHTTP(id, url string, opts *HTTPOptions) error {
	o := HTTPOptions{}
	if opts != nil {
		o = *opts
	}
	defaults.IfNotPositive(&o.Timeout, h.opts.QueryTimeout)
	p, loopback, err := newHTTPProvider(id, url, &o)
	if err != nil {
		return err
	}
	return h.register(id, p, p.url, !loopback)
}

// commandEndpoint is how a stdio provider's endpoint is named for consent:
// the program and its arguments joined by single spaces.
func commandEndpoint(program string, args []string) string {
	return strings.Join(append([]string{program}, args...), " ")
}

// IDs returns the registered provider ids in registration order.
func (h *Host) IDs() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make([]string, len(h.providers))
	for i, e := range h.providers {
		out[i] = e.id
	}
	return out
}

func (h *Host) entries() []*entry {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]*entry(nil), h.providers...)
}

func (h *Host) lookup(id string) (*entry, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return nil, newErr(id, "query", ErrClosed, "", nil)
	}
	e, ok := h.byID[id]
	if !ok {
		return nil, newErr(id, "query", errUnknownProvider, "", nil)
	}
	return e, nil
}

// Connect handshakes with provider id now (if it has not already) and
// returns its checked acknowledgement.
func (h *Host) Connect(ctx context.Context, id string) (*wire.HandshakeAck, error) {
	e, err := h.connected(ctx, id)
	if err != nil {
		return nil, err
	}
	return e.ack, nil
}

// connected returns provider id's entry once its handshake has succeeded,
// handshaking now if no one has yet.
func (h *Host) connected(ctx context.Context, id string) (*entry, error) {
	e, err := h.lookup(id)
	if err != nil {
		return nil, err
	}
	if err := h.handshake(ctx, e); err != nil {
		return nil, err
	}
	return e, nil
}

// Info returns the provider's declared info as the host treats it (C4
// applied) once it has handshaken.
func (h *Host) info(id string) (frame.ProviderInfo, frame.Capabilities, bool) {
	e, err := h.lookup(id)
	if err != nil || !e.handshook.Load() || e.handErr != nil {
		return frame.ProviderInfo{}, frame.Capabilities{}, false
	}
	return e.info, e.ack.Capabilities, true
}

// handshake runs the provider's handshake once and caches the outcome; every
// later caller gets the same result (a failed handshake, a timeout included,
// is final: register the provider again under a new id to retry).
//
// A provider that is egress whatever it declares (C4) is first admitted by
// the consent store: without consent covering its endpoint, no connection
// is opened. That check is not cached, so consent granted later is honoured.
func (h *Host) handshake(ctx context.Context, e *entry) error {
	if e.forceEgr && !e.handshook.Load() {
		if d := h.opts.Consent.Admit(consent.Subject{ID: e.id, Endpoint: e.endpoint}); !d.Permitted {
			return &ConsentError{Provider: e.id, Reason: d.Reason, Endpoint: e.endpoint, BeforeConnect: true}
		}
	}
	e.once.Do(func() {
		start := time.Now()
		hctx, cancel := context.WithTimeout(ctx, h.opts.HandshakeTimeout)
		defer cancel()
		ack, err, late := awaitCall(hctx, func(ctx context.Context) (*wire.HandshakeAck, error) {
			return e.p.Handshake(ctx, h.opts.Version)
		})
		if late {
			// The transport did not honour the deadline (an in-process
			// provider ignoring ctx): the handshake fails regardless.
			err = newErr(e.id, "handshake", ErrTimeout, "no handshake_ack within "+waited(start, h.opts.HandshakeTimeout), nil)
		}
		if err == nil {
			err = h.checkAck(e.id, ack)
		}
		e.handErr = e.secrets.scrubError(err)
		if err == nil {
			e.ack = ack
			e.info = ack.Provider
			if e.forceEgr {
				e.info.DataFlow.Egress = true
			}
		}
		e.handshook.Store(true)
	})
	return e.handErr
}

// waited says how long a wait that ran out lasted: the configured timeout,
// or the shorter time the caller's deadline left.
func waited(start time.Time, timeout time.Duration) string {
	if d := time.Since(start); d < timeout {
		return d.Round(time.Millisecond).String() + " (the caller's deadline)"
	}
	return timeout.String()
}

// checkAck applies the host's handshake rules: the version family (H1/H3),
// non-blank name and version (H2), scope consistency (C5), and that a
// provider advertising compact or reference representations declares resolve.
func (h *Host) checkAck(id string, ack *wire.HandshakeAck) error {
	if !wire.Compatible(h.opts.Version, ack.ProtocolVersion) {
		return &VersionMismatchError{Provider: id, HostVersion: h.opts.Version, ProviderVersion: ack.ProtocolVersion, ProviderName: ack.Provider.Name}
	}
	var rules []string
	if strings.TrimSpace(ack.Provider.Name) == "" {
		rules = append(rules, string(rule.H2)+" provider.name is blank")
	}
	if strings.TrimSpace(ack.Provider.Version) == "" {
		rules = append(rules, string(rule.H2)+" provider.version is blank")
	}
	if !ack.Provider.DataFlow.ScopesConsistent() {
		rules = append(rules, string(rule.C5)+" egress_scopes are invalid or declare an off-machine scope with egress false")
	}
	for _, r := range ack.Capabilities.Representations {
		if r.Effective() != frame.RepresentationFull && !ack.Capabilities.Resolve {
			rules = append(rules, fmt.Sprintf("P-rep capabilities advertise representation %q without resolve", r))
			break
		}
	}
	if len(rules) > 0 {
		return newErr(id, "handshake", errHandshake, strings.Join(rules, "; "), nil)
	}
	return nil
}

// gate applies the consent rules to a handshaken provider.
func (h *Host) gate(e *entry) error {
	d := h.opts.Consent.Evaluate(consent.Subject{ID: e.id, Endpoint: e.endpoint, Name: e.info.Name}, e.info)
	if d.Permitted {
		return nil
	}
	return &ConsentError{Provider: e.id, Missing: d.Missing, Reason: d.Reason, Endpoint: e.endpoint, Name: e.info.Name}
}

// QueryProvider queries one provider directly: handshake if needed, consent
// gate, the per-request timeout. It returns typed errors (errUnknownProvider,
// *ConsentError, ErrTimeout, provider errors ...) and does not audit the
// reply; use QueryAll for audited results.
func (h *Host) QueryProvider(ctx context.Context, id string, q *frame.Query) (*wire.Result, error) {
	e, err := h.connected(ctx, id)
	if err != nil {
		return nil, err
	}
	if err := h.gate(e); err != nil {
		return nil, err
	}
	qc := *q
	h.tailor(e, &qc)
	return h.query(ctx, e, &qc)
}

// query runs one query under the per-request timeout, whatever the
// transport does with ctx, after the provider's own start-up (Starter)
// under its allowance.
func (h *Host) query(ctx context.Context, e *entry, q *frame.Query) (*wire.Result, error) {
	if err := h.start(ctx, e); err != nil {
		return nil, err
	}
	qctx, cancel := context.WithTimeout(ctx, h.opts.QueryTimeout)
	defer cancel()
	r, err, late := awaitCall(qctx, func(ctx context.Context) (*wire.Result, error) { return e.p.Query(ctx, q) })
	switch {
	case !late:
		return r, e.secrets.scrubError(err)
	case ctx.Err() != nil:
		return nil, newErr(e.id, "query", ErrTimeout, "canceled by caller", ctx.Err())
	default:
		return nil, newErr(e.id, "query", ErrTimeout, "no reply within "+h.opts.QueryTimeout.String(), nil)
	}
}

// awaitCall runs f and waits for it until ctx ends, whatever f does with ctx;
// late reports that ctx ended first (f's goroutine then finishes alone).
func awaitCall[T any](ctx context.Context, f func(context.Context) (T, error)) (v T, err error, late bool) {
	type res struct {
		v   T
		err error
	}
	ch := make(chan res, 1)
	go func() {
		v, err := f(ctx)
		ch <- res{v, err}
	}()
	select {
	case r := <-ch:
		return r.v, r.err, false
	case <-ctx.Done():
		return v, nil, true
	}
}

// Close shuts every provider down (concurrently; each stdio child gets its
// grace period, then its process group is killed) and returns their errors
// joined. After Close the host refuses new work.
func (h *Host) Close(ctx context.Context) error {
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		return nil
	}
	h.closed = true
	ps := append([]*entry(nil), h.providers...)
	h.mu.Unlock()
	errs := make([]error, len(ps))
	var wg sync.WaitGroup
	for i, e := range ps {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := e.p.Shutdown(ctx); err != nil {
				errs[i] = fmt.Errorf("host: shutdown %q: %w", e.id, err)
			}
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}
