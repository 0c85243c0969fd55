package host

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime/debug"
	"sort"
	"sync/atomic"
	"time"

	"github.com/ctxkit/ctxkit/frame"
	"github.com/ctxkit/ctxkit/host/serve"
	"github.com/ctxkit/ctxkit/host/transport"
	"github.com/ctxkit/ctxkit/internal/defaults"
	"github.com/ctxkit/ctxkit/wire"
)

// provider is the host's connection to one CGP provider, whatever carries
// it (in-process, stdio, HTTP): the calls of a serve.Server, unchecked and
// unaudited (the Host checks and audits), plus Shutdown, which ends the
// session and releases the transport (a child process is stopped with its
// whole tree) and is safe to call twice. Implementations are safe for
// concurrent use; Handshake is called once, before any Query or Verify.
// Errors are typed (see the Err* kinds); a provider's own error envelope is
// reachable with errors.As as *wire.Error.
type provider interface {
	serve.Server
	Shutdown(ctx context.Context) error
}

// inProcess adapts a serve.Server to Provider. Requests and replies are copied
// through their JSON encoding, so the provider and the host never share
// memory (a provider cannot change a frame after the host audited it), and a
// panic in the provider becomes ErrProviderCrashed for that call only.
type inProcess struct {
	id string
	s  serve.Server
}

// InProcess returns a Provider serving s in the host's own process. id names
// the provider in errors. The host stops waiting for a call at its deadline
// whatever s does; a Server that ignores ctx keeps its own goroutine until it
// returns, so in-process providers should honour ctx.
func newInProcess(id string, s serve.Server) provider { return &inProcess{id: id, s: s} }

// CredentialHolder is implemented by a Server that sends credentials of its
// own (an MCP bridge's bearer token). The host treats them as it treats its
// own transports' (C8): every error the Server returns is scrubbed of them,
// and a reply that carries one is discarded.
type CredentialHolder interface {
	Credentials() []Credential
}

// secrets are the credentials s holds, if it says so.
func (p *inProcess) secrets() secrets {
	if c, ok := p.s.(CredentialHolder); ok {
		return secretsOf(c.Credentials()...)
	}
	return nil
}

func (p *inProcess) guard(op string, err *error) {
	if r := recover(); r != nil {
		*err = newErr(p.id, op, ErrProviderCrashed, fmt.Sprintf("panic: %v\n%s", r, debug.Stack()), nil)
	}
}

// copied deep-copies v through its JSON encoding: what the provider holds
// and what the host audits never share memory. A nil v is what's named
// "nil" in the error.
func copied[T any](v *T, what string) (*T, error) {
	if v == nil {
		return nil, errors.New("nil " + what)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	out := new(T)
	return out, json.Unmarshal(b, out)
}

// call runs one call of the served value: a panic becomes
// ErrProviderCrashed for that call only, the request is copied in and the
// reply copied out.
func call[In, Out any](p *inProcess, op string, in *In, f func(*In) (*Out, error)) (out *Out, err error) {
	defer p.guard(op, &err)
	inc, err := copied(in, "request")
	if err != nil {
		return nil, fmt.Errorf("host: %s %q: encode: %w", op, p.id, err)
	}
	r, err := f(inc)
	if err != nil {
		return nil, p.wrap(op, err)
	}
	if out, err = copied(r, "reply"); err != nil {
		return nil, newErr(p.id, op, errMalformed, "", err)
	}
	return out, nil
}

func (p *inProcess) Handshake(ctx context.Context, version string) (*wire.HandshakeAck, error) {
	return call(p, "handshake", &version, func(v *string) (*wire.HandshakeAck, error) { return p.s.Handshake(ctx, *v) })
}

func (p *inProcess) Query(ctx context.Context, q *frame.Query) (*wire.Result, error) {
	res, err := call(p, "query", q, func(q *frame.Query) (*wire.Result, error) { return p.s.Query(ctx, q) })
	if sec := p.secrets(); err == nil && len(sec) > 0 {
		b, merr := json.Marshal(res)
		if merr != nil || sec.echoed(b, &wire.Frames{Result: *res}) {
			return nil, newErr(p.id, "query", errCredentialEchoed, "the frames reply was discarded (C8)", nil)
		}
	}
	return res, err
}

func (p *inProcess) Verify(ctx context.Context, ids []frame.ID) ([]wire.Verdict, error) {
	out, err := call(p, "verify", &ids, func(ids *[]frame.ID) (*[]wire.Verdict, error) {
		vs, err := p.s.Verify(ctx, *ids)
		return &vs, err
	})
	if err != nil {
		return nil, err
	}
	return *out, nil
}

func (p *inProcess) Shutdown(ctx context.Context) (err error) {
	defer p.guard("shutdown", &err)
	if c, ok := p.s.(interface{ Shutdown(context.Context) error }); ok {
		return c.Shutdown(ctx)
	}
	return nil
}

func (p *inProcess) wrap(op string, err error) error {
	var we *wire.Error
	if errors.As(err, &we) {
		return newErr(p.id, op, errProviderError, "", we)
	}
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		return newErr(p.id, op, ErrTimeout, "", err)
	}
	return newErr(p.id, op, errProviderError, "", err)
}

// StdioOptions configures a stdio provider. Nil or zero fields mean the
// defaults.
type StdioOptions struct {
	// Env lists extra KEY=VALUE entries for the child. The child's
	// environment is cleared: it gets PATH and HOME from the host and these
	// entries, nothing else.
	Env []string
	// SecretEnv lists environment entries whose values are credentials
	// (a token the child presents to its own backend): the child gets
	// NAME=value, and every value is scrubbed from whatever the host
	// derives from the child (error envelopes, its stderr) and a reply
	// that carries one is discarded (C8).
	SecretEnv map[string]Credential
	// Dir is the child's working directory (default: the host's).
	Dir string
	// HandshakeTimeout bounds the handshake (default: RequestTimeout). A
	// deadline on the caller's context bounds it too, when it comes first.
	HandshakeTimeout time.Duration
	// RequestTimeout bounds each query and verify (default defaultRequestTimeout).
	RequestTimeout time.Duration
	// ShutdownGrace is how long Shutdown waits for the child to exit after
	// the shutdown envelope before killing its process group (default 2 s).
	ShutdownGrace time.Duration
	// StderrLimit is how many trailing bytes of the child's stderr are kept
	// for diagnostics (default 64 KiB).
	StderrLimit int
	// MaxLine is the longest reply line accepted (default wire.DefaultMaxLineBytes).
	MaxLine int

	noCgroup bool // tests: end the tree without a cgroup (the fallback)
}

// Transport defaults.
const (
	defaultRequestTimeout = 30 * time.Second
	defaultShutdownGrace  = 2 * time.Second
)

func (o *StdioOptions) withDefaults() StdioOptions {
	var v StdioOptions
	if o != nil {
		v = *o
	}
	defaults.IfNotPositive(&v.RequestTimeout, defaultRequestTimeout)
	defaults.IfNotPositive(&v.HandshakeTimeout, v.RequestTimeout)
	defaults.IfNotPositive(&v.ShutdownGrace, defaultShutdownGrace)
	return v
}

// stdioProvider speaks NDJSON to a child process.
type stdioProvider struct {
	id   string
	opts StdioOptions
	c    *conn

	correlated atomic.Bool // the provider declared correlation
}

// Stdio spawns program with args as a CGP provider speaking NDJSON on its
// stdin and stdout. The child runs in its own process group with a cleared
// environment; Shutdown (or Host.Close) stops it and kills its group. id
// names the provider in errors.
func startStdio(id, program string, args []string, opts *StdioOptions) (provider, error) {
	o := opts.withDefaults()
	env := append([]string(nil), o.Env...)
	names := make([]string, 0, len(o.SecretEnv))
	for name := range o.SecretEnv {
		names = append(names, name)
	}
	sort.Strings(names)
	var sec secrets
	for _, name := range names {
		c := o.SecretEnv[name]
		env = append(env, name+"="+c.value())
		sec = append(sec, secretsOf(c)...)
	}
	tr := transport.Stdio{Program: program, Args: args, Env: env, Dir: o.Dir,
		StderrLimit: o.StderrLimit, MaxLine: o.MaxLine, ShutdownGrace: o.ShutdownGrace, NoCgroup: o.noCgroup}
	p, err := tr.Start()
	if err != nil {
		return nil, newErr(id, "spawn", ErrNotStarted, program, err)
	}
	c := newConn(id, p, sec)
	return &stdioProvider{id: id, opts: o, c: c}, nil
}

// Stderr returns the captured tail of a stdio provider's stderr ("" for other
// transports), scrubbed of the provider's credentials.
func stderrOf(p provider) string {
	if s, ok := p.(*stdioProvider); ok {
		return s.c.secrets.scrubTail(s.c.stderrTail())
	}
	return ""
}

// secrets returns the values of the child's secret environment entries.
func (p *stdioProvider) secrets() secrets { return p.c.secrets }

func (p *stdioProvider) decode(op string, r rawReply) (wire.Envelope, error) {
	env, err := decodeEnvelope(r.line)
	if err != nil {
		// The line was framed and routed correctly, so the stream stays
		// usable; only this request fails.
		return nil, newErr(p.id, op, errMalformed, "undecodable "+r.typ+" envelope", p.c.secrets.scrubError(err))
	}
	if we, ok := env.(*wire.Error); ok {
		return nil, p.c.secrets.scrubError(newErr(p.id, op, errProviderError, "", we))
	}
	if p.c.secrets.echoed(r.line, env) {
		return nil, newErr(p.id, op, errCredentialEchoed, "the "+env.Type()+" reply was discarded (C8)", nil)
	}
	return env, nil
}

// call sends the envelope mk builds (with the correlation id, when corr)
// and returns the decoded reply.
func (p *stdioProvider) call(ctx context.Context, op string, timeout time.Duration, corr bool, mk func(id string) wire.Envelope) (wire.Envelope, error) {
	r, err := p.c.roundTrip(ctx, op, timeout, corr, func(id string) ([]byte, error) { return encodeEnvelope(mk(id)) })
	if err != nil {
		return nil, relabel(err, op)
	}
	return p.decode(op, r)
}

func (p *stdioProvider) Handshake(ctx context.Context, version string) (*wire.HandshakeAck, error) {
	ack, err := expect[*wire.HandshakeAck](p.call(ctx, "handshake", p.opts.HandshakeTimeout, false, func(string) wire.Envelope {
		return &wire.Handshake{ProtocolVersion: version}
	}))(p.id, "handshake")
	if err == nil {
		p.correlated.Store(ack.Capabilities.Correlation)
	}
	return ack, err
}

func (p *stdioProvider) Query(ctx context.Context, q *frame.Query) (*wire.Result, error) {
	corr := p.correlated.Load()
	f, err := expect[*wire.Frames](p.call(ctx, "query", p.opts.RequestTimeout, corr, func(id string) wire.Envelope {
		return &wire.Query{ID: id, Query: *q}
	}))(p.id, "query")
	if err != nil {
		return nil, err
	}
	return &f.Result, nil
}

func (p *stdioProvider) Verify(ctx context.Context, ids []frame.ID) ([]wire.Verdict, error) {
	v, err := expect[*wire.Verified](p.call(ctx, "verify", p.opts.RequestTimeout, false, func(string) wire.Envelope {
		return &wire.Verify{Request: wire.VerifyRequest{Frames: ids}}
	}))(p.id, "verify")
	if err != nil {
		return nil, err
	}
	return v.Response.Verdicts, nil
}

// expect checks that a request's reply is the envelope type T it awaits
// (the call is expect[T](reply, err)(provider, op)); a failed request's
// error passes through.
func expect[T wire.Envelope](env wire.Envelope, err error) func(id, op string) (T, error) {
	return func(id, op string) (T, error) {
		var zero T
		if err != nil {
			return zero, err
		}
		t, ok := env.(T)
		if !ok {
			got := "an empty body"
			if env != nil {
				got = env.Type()
			}
			return zero, newErr(id, op, errUnexpectedEnvelope, "got "+got+", want "+zero.Type(), nil)
		}
		return t, nil
	}
}

func (p *stdioProvider) Shutdown(ctx context.Context) error {
	line, _ := encodeEnvelope(&wire.Shutdown{})
	_ = p.c.notify("shutdown", line, time.Now().Add(500*time.Millisecond))
	grace := p.opts.ShutdownGrace
	if d, ok := ctx.Deadline(); ok && time.Until(d) < grace {
		grace = max(time.Until(d), 0)
	}
	return p.c.close(grace)
}

// relabel returns err with its Op set to op when it is a host *Error raised by
// the shared reader (whose op is "read").
func relabel(err error, op string) error {
	var e *Error
	if errors.As(err, &e) && e.Op != op {
		c := *e
		c.Op = op
		return &c
	}
	return err
}
