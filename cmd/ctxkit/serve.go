package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	rtdebug "runtime/debug"

	"github.com/ctxkit/ctxkit/internal/announce"
	"github.com/ctxkit/ctxkit/server"
)

const serveUsage = `usage: ctxkit serve [--addr HOST:PORT] [--config FILE] [flags]

Serve the ctxkit HTTP API (JSON): POST /v1/compose, /v1/context, /v1/assess,
/v1/prompt, /v1/query; GET /healthz, /metrics. It binds to loopback unless told
otherwise. SIGTERM or Ctrl-C stops accepting, lets in-flight requests finish,
then shuts the providers down. See docs/http.md and docs/openapi.yaml.

Examples:
  ctxkit serve
  ctxkit serve --addr 127.0.0.1:0 --log-format json --access-log
  ctxkit serve --config docs/examples/ctxkit.json     # providers for /v1/query
  curl -s http://127.0.0.1:8787/healthz

Unless GOGC is set, the garbage collector runs at GOGC=400: about 15% less
CPU per request for about 10 MB more memory (see BENCHMARKS.md). Unless
GOMEMLIMIT is set, the heap has a soft limit of 256 MiB, so that a flood of
large requests cannot grow garbage to four times what is live.

Exit codes: 0 clean shutdown; 1 the providers could not start or the
shutdown failed; 2 usage error, unreadable config or address in use.

Flags:
`

// mib writes a byte count as the help text does: "8388608, 8 MiB".
func mib(n int64) string { return fmt.Sprintf("%d, %d MiB", n, n>>20) }

func runServe(ctx context.Context, args []string, s stdio) int {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(s.err)
	addr := fs.String("addr", "127.0.0.1:8787", "listen `address`; port 0 picks a free port (printed on stderr)")
	config := fs.String("config", "", "JSON config `file`: limits and the providers /v1/query fans out to")
	logFormat := fs.String("log-format", "text", "log format: text or json (logs go to stderr)")
	accessLog := fs.Bool("access-log", false, "log one line per request (method, route, status, duration, sizes; never content)")
	debug := fs.Bool("debug", false, "log at debug level, every request with its body (may contain frame content)")
	def := server.Options{}.WithDefaults()
	maxBody := fs.Int64("max-body", 0, "request body limit in `bytes` (default "+mib(def.MaxBodyBytes)+")")
	maxFrames := fs.Int("max-frames", 0, fmt.Sprintf("offers per request (default %d)", def.MaxFrames))
	timeout := fs.Duration("timeout", 0, "per-request timeout (default "+def.Timeout.String()+")")
	storeURL := fs.String("store", "", "shared state `URL`: postgres://... (docs/deploy.md); file: or absent for the local journal; overrides the config's \"store\"")
	storeMigrate := fs.Bool("store-migrate", false, "apply the store's schema migrations before serving")
	inFlight := fs.Int64("max-body-in-flight", 0, "`bytes` of request bodies held at once across requests; beyond, 503 (default "+mib(def.MaxBodyBytesInFlight)+")")
	maxConns := fs.Int("max-conns", 0, fmt.Sprintf("open connections at once; more wait to be accepted (default %d)", def.MaxConnections))
	shutdown := fs.Duration("shutdown-timeout", def.ShutdownTimeout, "how long to wait for in-flight requests on SIGTERM")
	if code, done := parseFlags(fs, args, s, serveUsage); done {
		return code
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(s.err, "serve: unexpected argument %q\n", fs.Arg(0))
		return exitUsage
	}
	flagLimits := configLimits{MaxBodyBytes: *maxBody, MaxFrames: *maxFrames, Timeout: jsonDuration(*timeout),
		MaxBodyBytesInFlight: *inFlight, MaxConnections: *maxConns}
	if name, _ := flagLimits.negative(); name != "" || *shutdown < 0 {
		if name == "" {
			name = "shutdown-timeout"
		}
		fmt.Fprintf(s.err, "serve: --%s must not be negative (0 or absent: the default)\n", name)
		return exitUsage
	}
	logger, err := newLogger(s.err, *logFormat, *debug)
	if err != nil {
		fmt.Fprintf(s.err, "serve: %v\n", err)
		return exitUsage
	}

	opts := &server.Options{Logger: logger, LogRequests: *accessLog || *debug, LogContent: *debug, ShutdownTimeout: *shutdown}
	var closeProviders func(context.Context) error
	shared, code, ok := serveStore(ctx, s, *config, *storeURL, *storeMigrate)
	if !ok {
		return code
	}
	if shared != nil {
		defer shared.Close()
		opts.Usage = shared.usage
		logger.Info("shared store", "where", shared.store.Where())
	}
	if *config != "" {
		cfg, err := loadServeConfig(*config)
		if err != nil {
			fmt.Fprintf(s.err, "serve: %v\n", err)
			return exitUsage
		}
		cfg.Limits.apply(opts)
		if shared != nil {
			cfg.Consent = shared.consent
		} else if p := localStorePath(*storeURL, cfg.Store); p != "" {
			cfg.ConsentStore = p
		}
		if len(cfg.Providers) > 0 {
			var progress io.Writer
			if isTerminal(s.err) {
				progress = s.err
			}
			h, err := cfg.newHost(ctx, progress)
			if err != nil {
				fmt.Fprintf(s.err, "serve: %v\n", err)
				return exitFailed
			}
			opts.Query, closeProviders = h, h.Close
			logger.Info("providers configured", "ids", h.IDs())
		}
	}
	flagLimits.apply(opts) // flags override the config file
	serverGC()
	opts.OnShutdown = closeProviders
	h := server.New(opts)

	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		if closeProviders != nil {
			_ = closeProviders(context.Background())
		}
		fmt.Fprintf(s.err, "serve: %v\n", err)
		return exitUsage
	}
	if tcp, ok := ln.Addr().(*net.TCPAddr); ok && !tcp.IP.IsLoopback() {
		logger.Warn("listening on a non-loopback address: anyone who can reach it can use the API", "addr", ln.Addr().String())
	}
	fmt.Fprintln(s.err, announce.Line(ln.Addr().String()))
	logger.Info("serving", "addr", ln.Addr().String(), "query_configured", opts.Query != nil)
	err = server.Serve(ctx, ln, h)
	if err != nil {
		logger.Error("shutdown", "error", err.Error())
		return exitFailed
	}
	logger.Info("stopped")
	return exitOK
}

// serverMemoryLimit is the soft heap limit serverGC sets beside GOGC=400
// unless GOMEMLIMIT is set: far above what a server uses for ordinary
// traffic (tens of MB), so it costs nothing there, but under a flood of
// large requests it keeps GOGC=400 from letting garbage grow to four
// times what is live.
const serverMemoryLimit = 256 << 20

// serverGC runs the garbage collector at GOGC=400 unless GOGC is set, for
// the long-running servers (serve, mcp): less CPU a query for some more
// memory (see BENCHMARKS.md); and, unless GOMEMLIMIT is set, with a soft
// limit of serverMemoryLimit on the heap.
func serverGC() {
	if _, set := os.LookupEnv("GOGC"); !set {
		rtdebug.SetGCPercent(400)
	}
	if _, set := os.LookupEnv("GOMEMLIMIT"); !set {
		rtdebug.SetMemoryLimit(serverMemoryLimit)
	}
}

// newLogger builds the slog logger for commands that log (text or json on w).
func newLogger(w io.Writer, format string, debug bool) (*slog.Logger, error) {
	level := slog.LevelInfo
	if debug {
		level = slog.LevelDebug
	}
	ho := &slog.HandlerOptions{Level: level}
	switch format {
	case "text":
		return slog.New(slog.NewTextHandler(w, ho)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(w, ho)), nil
	default:
		return nil, fmt.Errorf("--log-format %q: want text or json", format)
	}
}

// parseFlags parses args with fs. Help (-h, --help) prints usage and the
// flags on stdout and exits 0; a bad flag prints them on stderr and exits 2.
func parseFlags(fs *flag.FlagSet, args []string, s stdio, usage string) (code int, done bool) {
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), usage)
		fs.PrintDefaults()
	}
	for _, a := range args {
		if a == "--" {
			break
		}
		if a == "-h" || a == "-help" || a == "--help" {
			fs.SetOutput(s.out)
			fs.Usage()
			return exitOK, true
		}
	}
	fs.SetOutput(s.err)
	if err := fs.Parse(args); err != nil {
		return exitUsage, true
	}
	return 0, false
}

// wantsHelp reports whether args ask for help (-h, -help or --help) before
// any "--".
func wantsHelp(args []string) bool {
	for _, a := range args {
		if a == "--" {
			return false
		}
		if a == "-h" || a == "-help" || a == "--help" {
			return true
		}
	}
	return false
}
