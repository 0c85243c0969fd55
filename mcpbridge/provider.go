package mcpbridge

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ctxkit/ctxkit/frame"
	"github.com/ctxkit/ctxkit/wire"
)

// Defaults of the zero Options.
const (
	DefaultMaxResources     = 10000   // resources listed, all pages together
	DefaultMaxReads         = 1000    // resources read per query
	DefaultMaxResourceBytes = 1 << 20 // bytes of one resource
	DefaultMaxBytes         = 8 << 20 // bytes read per query, all resources together
	DefaultToolArgument     = "query" // the argument the goal goes in, for Tool
)

// Options configures a Provider. A nil *Options or zero fields mean the
// defaults.
type Options struct {
	// MaxResources bounds the resources listed (every page together);
	// listing stops there and the rest are reported as left out.
	MaxResources int
	// MaxReads bounds the resources read per query.
	MaxReads int
	// MaxResourceBytes bounds one resource: a larger one (by its declared
	// size or its content) is left out.
	MaxResourceBytes int64
	// MaxBytes bounds the bytes read per query, all resources together:
	// once reached, the remaining resources are left out.
	MaxBytes int64
	// Tool names a search-like tool to call with the goal; its text
	// results are ranked with the resources. Empty: no tool is called.
	Tool string
	// ToolArgument is the argument Tool takes the goal in (default
	// DefaultToolArgument).
	ToolArgument string
	// NoResources skips resources/list (for a server offering tools only).
	NoResources bool
	// Env lists extra KEY=VALUE entries for a stdio child, whose
	// environment is otherwise PATH and HOME only.
	Env []string
	// HTTPClient carries Streamable HTTP requests (default: a client
	// with the http.DefaultTransport).
	HTTPClient *http.Client
	// Version is the ctxkit version announced to the MCP server.
	Version string
}

func (o *Options) withDefaults() Options {
	var v Options
	if o != nil {
		v = *o
	}
	if v.MaxResources <= 0 {
		v.MaxResources = DefaultMaxResources
	}
	if v.MaxReads <= 0 {
		v.MaxReads = DefaultMaxReads
	}
	if v.MaxResourceBytes <= 0 {
		v.MaxResourceBytes = DefaultMaxResourceBytes
	}
	if v.MaxBytes <= 0 {
		v.MaxBytes = DefaultMaxBytes
	}
	if v.ToolArgument == "" {
		v.ToolArgument = DefaultToolArgument
	}
	if v.Version == "" {
		v.Version = "dev"
	}
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
}

// New returns a Provider for target; id names it in errors and in each
// frame's provenance. A target that is neither a command nor an https://
// (or loopback http://) URL is an error matching ErrBadTarget.
func New(id string, target Target, opts *Options) (*Provider, error) {
	if err := target.check(); err != nil {
		return nil, err
	}
	return &Provider{id: id, target: target, opts: opts.withDefaults()}, nil
}

// Handshake declares what the bridge serves: doc and snippet frames, read
// only, and egress when the MCP server is remote. It opens no connection.
func (p *Provider) Handshake(context.Context, string) (*wire.HandshakeAck, error) {
	flow := frame.DataFlow{Reads: true, EgressScopes: []frame.EgressScope{frame.ScopeLocalOnly}}
	if p.target.Remote() {
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

// ErrConnect is matched by every failure to start or initialize the MCP
// session; ErrServer by every failed or malformed MCP request after it.
var (
	ErrConnect = errors.New("mcpbridge: cannot connect to the MCP server")
	ErrServer  = errors.New("mcpbridge: the MCP server failed a request")
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
		p.child = &childTransport{command: p.target.Command, env: p.opts.Env}
		t = p.child
	} else {
		hc := p.opts.HTTPClient
		if hc == nil {
			hc = &http.Client{}
		}
		t = &mcp.StreamableClientTransport{Endpoint: p.target.URL, HTTPClient: hc, MaxRetries: -1, DisableStandaloneSSE: true}
	}
	s, err := client.Connect(ctx, t, nil)
	if err != nil {
		p.closeLocked()
		return nil, fmt.Errorf("%w %s: %w", ErrConnect, p.target, err)
	}
	p.session = s
	return s, nil
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
