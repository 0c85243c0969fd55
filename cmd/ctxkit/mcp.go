package main

import (
	"cmp"
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ctxkit/ctxkit/host"
	"github.com/ctxkit/ctxkit/host/files"
	"github.com/ctxkit/ctxkit/internal/netlimit"
	"github.com/ctxkit/ctxkit/internal/safetext"
	"github.com/ctxkit/ctxkit/mcpbridge"
	"github.com/ctxkit/ctxkit/mcpserver"
)

func mcpCommand() command {
	return command{name: "mcp", summary: "serve ctxkit's tools to MCP clients (agents) over stdio or Streamable HTTP", run: runMCP}
}

const mcpUsage = `usage: ctxkit mcp [--http ADDR] [--provider SPEC]... [--budget N] [flags] [DIR...]

Serves ctxkit as a Model Context Protocol server: on stdin/stdout by
default (what an MCP client's "command" entry runs), or over Streamable
HTTP at http://ADDR/mcp with --http (loopback unless told otherwise;
requests whose Host or Origin is not loopback are refused with 403).

Tools: query_context (budgeted, fenced, audited evidence for a goal from
the DIRs and providers), compose_frames, assess_request, quote_untrusted.
The files under each DIR are also MCP resources. See docs/mcp.md.

flags:
  --http ADDR           serve Streamable HTTP on ADDR (e.g. 127.0.0.1:7701)
  --provider SPEC       add a provider, as in ctxkit query (repeatable):
                          ID=stdio:CMD, ID=https://URL, ID=mcp:stdio:CMD, ID=mcp:https://URL
  --mcp-tool ID=NAME[:ARG]  call MCP provider ID's tool NAME with the goal (as in ctxkit query)
  --bearer-env ID=VAR   provider ID's credential, as in ctxkit query
  --budget N            query_context's budget when a call gives none (default 2000)
  --consent-store PATH  consent journal for egress providers (default: the consent command's)
  --store URL           the consent store: postgres://... for the shared database
                        (docs/deploy.md), file:PATH or a path for a journal;
                        overrides --consent-store
  --timeout D           per-provider query timeout (default 30s); a local MCP
                        server's start-up has its own allowance before it
  --mcp-start-timeout D a local MCP server's start-up allowance (default 2m)
  --max-sessions N      with --http: sessions open at once; a new one closes the
                        one idle longest, or is refused (503) if all are busy
                        (default 256)
  --max-conns N         with --http: connections open at once; more wait to be
                        accepted (default 1024)
  --max-body-in-flight BYTES
                        with --http: bytes of request bodies held at once
                        across requests; beyond, 503 (default 16 MiB)
%s
examples:
  ctxkit mcp ./docs                          # what an mcpServers entry runs
  ctxkit mcp --http 127.0.0.1:7701 ./docs    # Streamable HTTP at /mcp
  ctxkit mcp --provider 'kb=mcp:stdio:npx -y @modelcontextprotocol/server-everything' ./docs

Unless GOGC is set, the garbage collector runs at GOGC=400, as in
ctxkit serve: about a third less CPU per query_context call for about
10 MB more memory (see BENCHMARKS.md); unless GOMEMLIMIT is set, the heap
has a soft limit of 256 MiB, as in ctxkit serve.

exit codes: 0 the client closed the session (or SIGTERM); 1 serving failed;
2 usage error or unreadable DIR.
`

// mcpUsageText is mcpUsage with the files provider's flags filled in.
func mcpUsageText() string {
	return fmt.Sprintf(mcpUsage, fmt.Sprintf(filesFlagsUsage, files.DefaultMaxFileSize))
}

func runMCP(ctx context.Context, args []string, s stdio) int {
	fs := flag.NewFlagSet("mcp", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	addr := fs.String("http", "", "")
	budget := fs.Int("budget", 2000, "")
	var lim httpLimits
	fs.IntVar(&lim.sessions, "max-sessions", 0, "")
	fs.IntVar(&lim.conns, "max-conns", 0, "")
	fs.Int64Var(&lim.inFlight, "max-body-in-flight", 0, "")
	var hf hostFlags
	hf.register(fs)
	dirs, code, ok := parseCommand(fs, args, s, func(w io.Writer) { fmt.Fprint(w, mcpUsageText()) })
	if !ok {
		return code
	}
	fail := func(format string, a ...any) int {
		fmt.Fprintf(s.err, "mcp: "+format+"\n", a...)
		return exitUsage
	}
	if err := hf.check(); err != nil {
		return fail("%v", err)
	}
	if *budget <= 0 || *budget > maxQueryBudget {
		return fail("--budget must be in 1..%d", maxQueryBudget)
	}
	if err := lim.check(fs, *addr != ""); err != nil {
		return fail("%v", err)
	}
	consentPath := hf.consentPath
	if hf.storeURL != "" {
		consentPath = hf.storeURL
	}
	consent, _, err := openConsent(consentPath, false)
	if err != nil {
		return fail("%v", err)
	}
	h := host.New(&host.Options{Consent: consent, QueryTimeout: hf.timeout})
	defer h.Close(context.Background())
	if _, err := addDirs(ctx, h, &hf.files, dirs, nil, s.err); err != nil {
		return fail("%v", err)
	}
	if _, err := hf.add(h); err != nil {
		return fail("%v", err)
	}
	serverGC()
	// Warnings and errors (a tool call that panicked) go to stderr, which
	// MCP hosts keep as the server's log; stdout is the protocol's.
	logger := slog.New(slog.NewTextHandler(s.err, &slog.HandlerOptions{Level: slog.LevelWarn}))
	srv, err := mcpserver.NewServer(h, &mcpserver.ServerOptions{Budget: *budget, Roots: dirs, Version: "dev", Logger: logger})
	if err != nil {
		return fail("%v", err)
	}
	if *addr == "" {
		if err := mcpserver.ServeStdio(ctx, srv, s.in, s.out); err != nil && ctx.Err() == nil {
			fmt.Fprintf(s.err, "mcp: %v\n", err)
			return exitFailed
		}
		return exitOK
	}
	return serveMCPHTTP(ctx, *addr, srv, lim, s)
}

// httpLimits are ctxkit mcp's limits for --http; zero is the default.
type httpLimits struct {
	sessions, conns int
	inFlight        int64
}

// defaultMaxMCPConns is --max-conns's default, as ctxkit serve's.
const defaultMaxMCPConns = 1024

// check refuses a negative limit by name, and a limit given without
// --http, where it would mean nothing.
func (l httpLimits) check(fs *flag.FlagSet, overHTTP bool) error {
	for _, f := range []struct {
		name string
		v    int64
	}{{"max-sessions", int64(l.sessions)}, {"max-conns", int64(l.conns)}, {"max-body-in-flight", l.inFlight}} {
		name := f.name
		set := false
		fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
		switch {
		case f.v < 0:
			return fmt.Errorf("--%s must not be negative (0 or absent: the default)", name)
		case set && !overHTTP:
			return fmt.Errorf("--%s applies to --http only", name)
		}
	}
	return nil
}

// serveMCPHTTP serves srv at http://addr/mcp until ctx is done.
func serveMCPHTTP(ctx context.Context, addr string, srv *mcp.Server, lim httpLimits, s stdio) int {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		fmt.Fprintf(s.err, "mcp: %v\n", err)
		return exitUsage
	}
	if tcp, ok := ln.Addr().(*net.TCPAddr); ok && !tcp.IP.IsLoopback() {
		fmt.Fprintf(s.err, "mcp: warning: listening on the non-loopback address %s: anyone who can reach it can query your providers\n", ln.Addr())
	}
	ln, limitHook := netlimit.Listener(ln, cmp.Or(lim.conns, defaultMaxMCPConns))
	h := mcpserver.HTTPHandler(srv, &mcpserver.HTTPOptions{MaxSessions: lim.sessions, MaxBodyBytesInFlight: lim.inFlight})
	hs := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 2 * time.Minute, MaxHeaderBytes: 64 << 10, ConnState: limitHook}
	fmt.Fprintf(s.err, "ctxkit mcp: listening on http://%s%s\n", ln.Addr(), mcpserver.Path)
	if err := serveUntilDone(ctx, hs, ln, 5*time.Second); err != nil {
		fmt.Fprintf(s.err, "mcp: %v\n", err)
		return exitFailed
	}
	return exitOK
}

// parseMCPTools reads each --mcp-tool ID=NAME[:ARG] into a map by id.
func parseMCPTools(tools []string) (map[string]string, error) {
	toolOf := map[string]string{}
	for _, t := range tools {
		id, spec, ok := strings.Cut(t, "=")
		if !ok || id == "" {
			return nil, fmt.Errorf("--mcp-tool wants ID=NAME[:ARG], got %q", t)
		}
		toolOf[id] = spec
	}
	return toolOf, nil
}

// checkMCPTools refuses an --mcp-tool naming no registered provider.
func checkMCPTools(h *host.Host, toolOf map[string]string) error {
	for id := range toolOf {
		if !slices.Contains(h.IDs(), id) {
			return fmt.Errorf("--mcp-tool %s: no --provider %s=mcp:... is given", id, id)
		}
	}
	return nil
}

// addBridge registers the MCP provider id at target, with its --mcp-tool
// and its --bearer-env credential (for a Streamable HTTP server only).
func addBridge(h *host.Host, id, target string, toolOf map[string]string, cred host.Credential, start time.Duration) (*mcpbridge.Provider, error) {
	t, err := mcpbridge.ParseTarget(target)
	if err != nil {
		return nil, fmt.Errorf("--provider %s: %w", id, err)
	}
	if !cred.IsZero() && len(t.Command) > 0 {
		return nil, fmt.Errorf("--bearer-env %s: an MCP stdio server takes no bearer token (only ID=mcp:https://... does)", id)
	}
	o := &mcpbridge.Options{Version: "dev", Credential: cred, StartTimeout: start}
	if spec, ok := toolOf[id]; ok {
		if o.Tool, o.ToolArgument, err = mcpbridge.ParseTool(spec); err != nil {
			return nil, fmt.Errorf("--mcp-tool %s: %w", id, err)
		}
	}
	return mcpbridge.Register(h, id, t, o)
}

// writeBridgeReports prints, for each MCP provider, the resources its last
// query left out and why.
func writeBridgeReports(w io.Writer, bridges []*mcpbridge.Provider) {
	for _, b := range bridges {
		r := b.Report()
		if r.Listed == 0 && len(r.Left) == 0 {
			continue
		}
		fmt.Fprintf(w, "# mcp %s: listed=%d read=%d bytes=%d left_out=%d\n", safetext.Quote(b.ID()), r.Listed, r.Read, r.Bytes, len(r.Left))
		for _, l := range r.Left {
			// The URIs and the server's errors are the MCP server's words:
			// quoted, so they cannot add a line or a terminal escape.
			fmt.Fprintf(w, "  left out %s: %s %s\n", safetext.Quote(l.URI), l.Reason, safetext.Quote(l.Detail))
		}
	}
}
