package mcpbridge

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ctxkit/ctxkit/frame"
	"github.com/ctxkit/ctxkit/host"
	"github.com/ctxkit/ctxkit/host/transport"
	"github.com/ctxkit/ctxkit/internal/defaults"
	"github.com/ctxkit/ctxkit/internal/safetext"
	"github.com/ctxkit/ctxkit/wire"
)

// Defaults of the zero Options (documented on its fields).
const (
	defaultMaxResources     = 10000   // resources listed, all pages together
	defaultMaxReads         = 1000    // resources read per query
	defaultMaxResourceBytes = 1 << 20 // bytes of one resource
	defaultMaxBytes         = 8 << 20 // bytes read per query, all resources together
	defaultToolArgument     = "query" // the argument the goal goes in, for Tool
)

// DefaultStartTimeout is a stdio server's start-up allowance: from starting
// its process to its answer to initialize. It is long because a launcher
// such as npx first downloads the package (about 50 s on a machine that
// never ran it), and it costs nothing but waiting: the process is local,
// and nothing has been sent to it but initialize.
const DefaultStartTimeout = 2 * time.Minute

// Options configures a Provider. A nil *Options or zero fields mean the
// defaults.
type Options struct {
	// MaxResources bounds the resources listed (every page together,
	// default 10000); listing stops there and the rest are reported as
	// left out.
	MaxResources int
	// MaxReads bounds the resources read per query (default 1000).
	MaxReads int
	// MaxResourceBytes bounds one resource (default 1 MiB): a larger one
	// (by its declared size or its content) is left out.
	MaxResourceBytes int64
	// MaxBytes bounds the bytes read per query, all resources together
	// (default 8 MiB): once reached, the remaining resources are left out.
	MaxBytes int64
	// Tool names a search-like tool to call with the goal; its text
	// results are ranked with the resources. Empty: no tool is called.
	Tool string
	// ToolArgument is the argument Tool takes the goal in (default
	// "query").
	ToolArgument string
	// StartTimeout is a stdio server's start-up allowance (default two
	// minutes, room for a launcher such as npx to download the package
	// first), separate from the host's query timeout, which runs once the
	// server has answered initialize (host.Starter). A
	// Streamable HTTP server has none: connecting to it is part of the
	// query, under the query timeout.
	StartTimeout time.Duration
	// NoResources skips resources/list (for a server offering tools only).
	NoResources bool
	// Env lists extra KEY=VALUE entries for a stdio child, whose
	// environment is otherwise PATH and HOME only.
	Env []string
	// HTTPClient carries Streamable HTTP requests (default: a client
	// with no proxy). Whichever client, the bridge follows no redirect: one
	// could carry the session, and its credential, where consent never
	// looked.
	HTTPClient *http.Client
	// Credential is sent to a Streamable HTTP server as "Authorization:
	// Bearer …" with every request, under the rules the host applies to
	// its own HTTP providers (C8): it is never printed, it is scrubbed from
	// every error and from the Report, and a query whose frames carry it is
	// discarded, its leg failed. Refused for a stdio target.
	Credential host.Credential
	// Version is the ctxkit version announced to the MCP server.
	Version string
}

func (o *Options) withDefaults() Options {
	var v Options
	if o != nil {
		v = *o
	}
	defaults.IfNotPositive(&v.MaxResources, defaultMaxResources)
	defaults.IfNotPositive(&v.MaxReads, defaultMaxReads)
	defaults.IfNotPositive(&v.MaxResourceBytes, defaultMaxResourceBytes)
	defaults.IfNotPositive(&v.MaxBytes, defaultMaxBytes)
	v.ToolArgument = cmp.Or(v.ToolArgument, defaultToolArgument)
	v.Version = cmp.Or(v.Version, "dev")
	defaults.IfNotPositive(&v.StartTimeout, DefaultStartTimeout)
	return v
}

// Provider is an MCP server seen as a CGP provider (a serve.Server). It is
// safe for concurrent use; queries share one MCP session, opened by the
// first query and reopened after it breaks.
type Provider struct {
	id     string
	target Target
	opts   Options

	mu      sync.Mutex
	session *mcp.ClientSession
	child   *childTransport // the stdio server, once started
	report  Report

	// childStderr is the stderr tail of the latest stdio server, read by
	// errors raised outside mu.
	childStderr atomic.Pointer[transport.Tail]
	// replyCut is set when a reply body passed maxReplyBytes: the SDK
	// reports an event stream cut short only as "terminated without
	// response", so the failure says why itself (tooLarge).
	replyCut atomic.Bool
}

// New returns a Provider for target; id names it in errors and in each
// frame's provenance. A target that is neither a command nor an https://
// (or loopback http://) URL is an error matching ErrBadTarget.
func New(id string, target Target, opts *Options) (*Provider, error) {
	if err := target.check(); err != nil {
		return nil, err
	}
	if opts != nil && !opts.Credential.IsZero() && len(target.Command) > 0 {
		return nil, fmt.Errorf("%w: %s: a bearer credential is for a Streamable HTTP server, not a stdio one", ErrBadTarget, target)
	}
	return &Provider{id: id, target: target, opts: opts.withDefaults()}, nil
}

// Handshake declares what the bridge serves: doc and snippet frames, read
// only, and egress when the MCP server is remote. It opens no connection.
func (p *Provider) Handshake(context.Context, string) (*wire.HandshakeAck, error) {
	flow := frame.DataFlow{Reads: true, EgressScopes: []frame.EgressScope{frame.ScopeLocalOnly}}
	if p.target.remote() {
		flow = frame.DataFlow{Reads: true, Egress: true}
	}
	return &wire.HandshakeAck{
		ProtocolVersion: wire.ProtocolVersion,
		Provider:        frame.ProviderInfo{Name: "ctxkit-mcp-bridge", Version: p.opts.Version, DataFlow: flow},
		Capabilities: frame.Capabilities{
			Query: frame.QueryCapabilities{Kinds: []frame.Kind{frame.KindDoc, frame.KindSnippet}},
		},
	}, nil
}

// Verify answers nothing: MCP has no way to confirm a resource is
// unchanged short of reading it again, so every identity is unknown (V2).
func (p *Provider) Verify(context.Context, []frame.ID) ([]wire.Verdict, error) {
	return []wire.Verdict{}, nil
}

// Shutdown closes the MCP session and stops a stdio child.
func (p *Provider) Shutdown(context.Context) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closeLocked()
	return nil
}

func (p *Provider) closeLocked() {
	if p.session != nil {
		_ = p.session.Close()
		p.session = nil
	}
	if p.child != nil {
		p.child.kill()
		p.child = nil
	}
}

// ID returns the provider's id.
func (p *Provider) ID() string { return p.id }

// String names the provider and its MCP server.
func (p *Provider) String() string { return p.id + " (" + p.target.String() + ")" }

// stderrNote is what a failing stdio server last wrote to its stderr, as
// a suffix for the error ("" when it wrote nothing, or is not a child):
// quoted, since the server's words must not add lines or terminal escapes
// to whatever prints the error.
func (p *Provider) stderrNote() string {
	tail := p.childStderr.Load()
	if tail == nil {
		return ""
	}
	if s := strings.TrimSpace(tail.String()); s != "" {
		return "; its stderr ended: " + safetext.Quote(s)
	}
	return ""
}

// errConnect wraps every failure to start or initialize the MCP session;
// errServer every failed or malformed MCP request after it.
var (
	errConnect = errors.New("mcpbridge: cannot connect to the MCP server")
	errServer  = errors.New("mcpbridge: the MCP server failed a request")
)

// connect returns the open session, opening it first if needed.
func (p *Provider) connect(ctx context.Context) (*mcp.ClientSession, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.session != nil {
		return p.session, nil
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "ctxkit", Version: p.opts.Version}, nil)
	var t mcp.Transport
	if len(p.target.Command) > 0 {
		p.child = &childTransport{command: p.target.Command, env: p.opts.Env, stderr: transport.NewTail(stderrTailBytes)}
		p.childStderr.Store(p.child.stderr)
		t = p.child
	} else {
		t = &mcp.StreamableClientTransport{Endpoint: p.target.URL, HTTPClient: p.httpClient(), MaxRetries: -1, DisableStandaloneSSE: true}
	}
	s, err := client.Connect(ctx, t, nil)
	if err != nil {
		note := p.stderrNote()
		p.closeLocked()
		return nil, fmt.Errorf("%w %s: %w%s", errConnect, p.target, p.tooLarge(err), note)
	}
	p.session = s
	return s, nil
}

// httpClient is the client of a Streamable HTTP session: Options.HTTPClient
// or one with no proxy, refusing redirects, carrying the credential.
func (p *Provider) httpClient() *http.Client {
	var c http.Client
	if p.opts.HTTPClient != nil {
		c = *p.opts.HTTPClient
	}
	if c.Transport == nil {
		c.Transport = &http.Transport{Proxy: nil, ForceAttemptHTTP2: true, MaxIdleConnsPerHost: 4, IdleConnTimeout: 30 * time.Second}
	}
	c.Transport = boundedBodies{next: c.Transport, limit: maxReplyBytes, cut: &p.replyCut}
	if !p.opts.Credential.IsZero() {
		c.Transport = p.opts.Credential.Authorize(c.Transport)
	}
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return &c
}

// maxReplyBytes bounds one HTTP reply body of an MCP server, as the stdio
// transport bounds one message: the SDK reads a reply whole, so without a
// bound one huge reply would take as much memory as the server sends.
const maxReplyBytes = 16 << 20

// boundedBodies is an http.RoundTripper whose reply bodies fail once they
// pass limit bytes, setting cut.
type boundedBodies struct {
	next  http.RoundTripper
	limit int64
	cut   *atomic.Bool
}

func (b boundedBodies) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := b.next.RoundTrip(r)
	if err == nil && resp.Body != nil {
		resp.Body = &boundedBody{rc: resp.Body, left: b.limit, limit: b.limit, cut: b.cut}
	}
	return resp, err
}

// boundedBody reads rc until limit bytes have passed, then fails.
type boundedBody struct {
	rc    io.ReadCloser
	left  int64
	limit int64
	cut   *atomic.Bool // may be nil
}

// tooLarge names err's cause when a reply was cut at maxReplyBytes since
// the last failure, whatever the SDK made of the cut.
func (p *Provider) tooLarge(err error) error {
	if p.replyCut.Swap(false) && !errors.Is(err, errReplyTooLarge) {
		return fmt.Errorf("%w: over %d bytes (%w)", errReplyTooLarge, maxReplyBytes, err)
	}
	return err
}

// errReplyTooLarge is the error of a reply body over maxReplyBytes.
var errReplyTooLarge = errors.New("mcpbridge: the MCP server's reply is too large")

func (b *boundedBody) Read(p []byte) (int, error) {
	if b.left <= 0 {
		// One byte more tells a body of exactly limit bytes from a longer one.
		var one [1]byte
		n, err := b.rc.Read(one[:])
		if n > 0 {
			if b.cut != nil {
				b.cut.Store(true)
			}
			return 0, fmt.Errorf("%w: over %d bytes", errReplyTooLarge, b.limit)
		}
		return 0, err
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.rc.Read(p)
	b.left -= int64(n)
	return n, err
}

func (b *boundedBody) Close() error { return b.rc.Close() }

// Credentials returns the bearer credential, so that a host scrubs it from
// the bridge's errors and refuses frames that carry it
// (host.CredentialHolder).
func (p *Provider) Credentials() []host.Credential {
	if p.opts.Credential.IsZero() {
		return nil
	}
	return []host.Credential{p.opts.Credential}
}

// StartTimeout is the start-up allowance of a stdio server, 0 for a
// Streamable HTTP one (host.Starter).
func (p *Provider) StartTimeout() time.Duration {
	if len(p.target.Command) == 0 {
		return 0
	}
	return p.opts.StartTimeout
}

// Start starts a stdio server and opens its session, unless it is open
// already (host.Starter): the host runs it under StartTimeout before the
// query's own timeout starts.
func (p *Provider) Start(ctx context.Context) error {
	if len(p.target.Command) == 0 {
		return nil
	}
	_, err := p.connect(ctx)
	return err
}

// drop closes s if it is still the provider's session, so the next query
// reconnects.
func (p *Provider) drop(s *mcp.ClientSession) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.session == s {
		p.closeLocked()
	}
}

// serverName is the MCP server's declared name, or the target.
func serverName(s *mcp.ClientSession, t Target) string {
	if r := s.InitializeResult(); r != nil && r.ServerInfo != nil && r.ServerInfo.Name != "" {
		return r.ServerInfo.Name
	}
	return t.String()
}
