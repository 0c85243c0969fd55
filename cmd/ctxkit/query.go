package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/ctxkit/ctxkit/compose"
	"github.com/ctxkit/ctxkit/frame"
	"github.com/ctxkit/ctxkit/host"
	"github.com/ctxkit/ctxkit/host/consent"
	"github.com/ctxkit/ctxkit/host/files"
	"github.com/ctxkit/ctxkit/internal/safetext"
	"github.com/ctxkit/ctxkit/mcpbridge"
	"github.com/ctxkit/ctxkit/server/api"
	"github.com/ctxkit/ctxkit/trust"
)

const queryUsage = `usage: ctxkit query --goal G [flags] [DIR...]

Queries context providers concurrently, audits each reply, composes the
accepted frames under one budget and prints the fenced prompt on stdout and
the audit (every provider leg, every frame kept or dropped) on stderr.

The DIRs are served in-process by one built-in files provider (BM25F over
chunks that follow each file's structure: Markdown and HTML sections, Go
declarations, code blocks), with one share of the budget. Each DIR's index
is kept on disk and refreshed from what changed; paths are shown relative
to their DIR, and with several DIRs each path begins with its DIR.

flags:
  --goal G              what the evidence is for (required)
  --query-text T        extra ranking text
  --budget N            global budget in CGP budget tokens (default 2000); the
                        providers share it equally and the composer packs the
                        rendered frames into it
  --max-frames N        max frames per provider (default 16)
  --kind K              request only frames of kind K (repeatable)
  --provider SPEC       add a provider (repeatable):
                          ID=stdio:CMD [ARGS...]   a child process (args split on spaces)
                          ID=https://HOST/PATH     an HTTP provider (http:// only to loopback)
                          ID=mcp:stdio:CMD [ARGS...] an MCP server's resources (see ctxkit help mcp)
                          ID=mcp:https://HOST/PATH an MCP server over Streamable HTTP (egress)
  --mcp-tool ID=NAME[:ARG]  also call MCP provider ID's tool NAME with the goal in
                        argument ARG (default query); its text results are ranked too
  --bearer-env ID=VAR   the token in environment variable VAR is provider ID's
                        credential: sent as a bearer token to an HTTP provider,
                        passed as VAR to a stdio child; scrubbed from all output
  --consent-store PATH  consent journal (default: %s)
  --store URL           the consent store: postgres://... for the shared
                        database (see docs/deploy.md), file:PATH or a path
                        for a journal; overrides --consent-store, and is
                        the trust store too unless --trust-store is given
  --trust-store PATH    attestation trust store (default: the trust command's)
  --policy P            exclude-frames (default) or drop-leg: what the audit does
                        with a frame breaking Q1, B3 or a validity rule
  --timeout D           per-provider timeout, for the handshake and for the
                        query each (default 30s); a local MCP server's start-up
                        has its own allowance before it (docs/mcp.md)
  --mcp-start-timeout D a local (mcp:stdio:) MCP server's start-up allowance,
                        from starting it to its answer to initialize (default 2m)
  --format F            text (default) or json (the whole result and fan-out report)
  --strategy S          ranking across providers, as in ctxkit compose: score-descending
                        (default), round-robin-by-rank, per-provider-quota[:K]
  --packer P            first-fit (default) or stop-at-first-miss
  --remote URL          run on a ctxkit serve instead (its configured providers; no DIR)
%s
examples:
  ctxkit query --goal "how is the budget split between providers" --budget 1500 ./docs
  ctxkit query --goal "retry policy" --format json --provider 'wiki=https://wiki.example/cgp' ./docs
  ctxkit query --goal "retry policy" --remote http://127.0.0.1:8787   # on a ctxkit serve

--kind takes a kind name: a lower-case letter, then lower-case letters,
digits, '_', '-', '.' or ':'. A provider declaring none of the asked kinds
is not queried and shows as kinds_not_served in the fan-out report.

exit codes: 0 every provider answered and passed its audit, and at least one
frame was composed; 1 a provider was refused (consent), could not be
started, failed or was dropped by the audit (the prompt is still printed
from the others), or nothing was composed (no provider serves the asked
kinds, none returned a frame, or none fits the budget; stderr says which);
2 usage error, unreadable DIR, a --kind that is not a kind name, or a
--budget over the limit of 1073741824.
`

// repeated is a repeatable string flag.
type repeated []string

func (r *repeated) String() string     { return strings.Join(*r, ",") }
func (r *repeated) Set(v string) error { *r = append(*r, v); return nil }

func defaultConsentShown() string {
	p, err := consent.DefaultPath()
	if err != nil {
		return "<user config dir>/ctxkit/consent.ndjson"
	}
	return p
}

// openConsent opens the journal at path (or the default). A missing default
// journal is an empty store (nothing granted), not an error.
//
// A postgres:// URL opens the shared store instead (closed when the
// process exits: the CLI's commands are short-lived); file:PATH is PATH.
func openConsent(path string, create bool) (*consent.Store, string, error) {
	local, ok, err := isLocalStore(path)
	if err != nil {
		return nil, "", err
	}
	if !ok {
		sc, err := openSharedConsent(context.Background(), path, false)
		if err != nil {
			return nil, "", err
		}
		return sc.consent, sc.store.Where(), nil
	}
	path = local
	explicit := path != ""
	if !explicit {
		p, err := consent.DefaultPath()
		if err != nil {
			return nil, "", err
		}
		path = p
	}
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) && !create {
		return consent.NewStore(), path, nil
	}
	if create {
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			return nil, path, err
		}
	}
	st, err := consent.Open(path)
	return st, path, err
}

func runQuery(ctx context.Context, args []string, s stdio) int {
	return queryWith(ctx, localRunner{}, args, s)
}

// remoteQueryFlags are the query flags a service takes in its request; the
// others configure the local host and are refused with --remote.
var remoteQueryFlags = map[string]bool{"goal": true, "query-text": true, "budget": true, "max-frames": true,
	"kind": true, "format": true, "strategy": true, "packer": true}

// localOnly names the first flag set in fs that a service does not take.
func localOnly(fs *flag.FlagSet) string {
	name := ""
	fs.Visit(func(f *flag.Flag) {
		if name == "" && !remoteQueryFlags[f.Name] {
			name = f.Name
		}
	})
	return name
}

func queryWith(ctx context.Context, r runner, args []string, s stdio) int {
	usage := func(w io.Writer) {
		fmt.Fprintf(w, queryUsage, defaultConsentShown(), fmt.Sprintf(filesFlagsUsage, files.DefaultMaxFileSize))
	}
	fs := flag.NewFlagSet("query", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	goal := fs.String("goal", "", "")
	qtext := fs.String("query-text", "", "")
	budget := fs.Int("budget", api.DefaultQueryBudget, "")
	maxFrames := fs.Int("max-frames", api.DefaultQueryMaxFrames, "")
	trustPath := fs.String("trust-store", "", "")
	policy := fs.String("policy", "exclude-frames", "")
	format := fs.String("format", "text", "")
	strategyName := fs.String("strategy", compose.NameScoreDescending, "")
	packerName := fs.String("packer", "first-fit", "")
	var pf hostFlags
	pf.register(fs)
	var kinds repeated
	fs.Var(&kinds, "kind", "")
	dirs, code, ok := parseCommand(fs, args, s, usage)
	if !ok {
		return code
	}
	fail := func(format string, a ...any) int {
		fmt.Fprintf(s.err, "query: "+format+"\n", a...)
		return exitUsage
	}
	if msg := checkQueryFlags(*goal, *budget, *maxFrames, kinds); msg != "" {
		return fail("%s", msg)
	}
	switch {
	case *format != "text" && *format != "json":
		return fail("--format must be text or json")
	case r.remote() && len(dirs) > 0:
		return fail("with --remote the service queries the providers it was started with; DIR arguments are local only")
	case r.remote() && localOnly(fs) != "":
		return fail("--%s configures the local host; with --remote the service's own configuration applies", localOnly(fs))
	case *policy != "exclude-frames" && *policy != "drop-leg":
		return fail("--policy must be exclude-frames or drop-leg")
	case len(dirs) == 0 && len(pf.providers) == 0 && !r.remote():
		return fail("give at least one DIR or --provider")
	}
	if err := pf.check(); err != nil {
		return fail("%v", err)
	}
	strategy, quota, err := parseStrategy(*strategyName)
	if err != nil {
		return fail("--strategy: %v", err)
	}
	if _, ok := compose.ParsePacker(*packerName); !ok {
		return fail("--packer must be first-fit or stop-at-first-miss")
	}
	req := &api.QueryRequest{Goal: *goal, QueryText: *qtext, Budget: *budget, MaxFrames: *maxFrames, Packer: *packerName}
	req.Strategy, req.Quota = strategy, quota
	for _, k := range kinds {
		req.Kinds = append(req.Kinds, frame.Kind(k))
	}
	if r.remote() {
		res, fo, err := r.query(ctx, nil, req)
		if err != nil {
			return requestFailed("query", s, err)
		}
		return writeQueryResult(s, *format == "json", nil, fo, res)
	}
	if pf.storeURL != "" {
		pf.consentPath = pf.storeURL
		if *trustPath == "" {
			*trustPath = pf.storeURL
		}
	}
	consent, _, err := openConsent(pf.consentPath, false)
	if err != nil {
		return fail("%v", err)
	}
	opts := &host.Options{Consent: consent, QueryTimeout: pf.timeout}
	if *policy == "drop-leg" {
		opts.Policy = host.DropLeg
	}
	if ts, err := loadTrust(ctx, *trustPath); err != nil {
		return fail("%v", err)
	} else {
		opts.Trust = ts
	}
	h := host.New(opts)
	defer h.Close(context.Background())

	progress := io.Writer(nil)
	if isTerminal(s.err) {
		progress = s.err
	}
	fp, err := addDirs(ctx, h, &pf.files, dirs, progress, s.err)
	if err != nil {
		return fail("%v", err)
	}
	bridges, err := pf.add(h)
	if err != nil {
		return fail("%v", err)
	}
	res, fo, err := r.query(ctx, h, req)
	if err != nil {
		return requestFailed("query", s, err)
	}
	code = writeQueryResult(s, *format == "json", fp, fo, res)
	writeBridgeReports(s.err, bridges)
	return code
}

// hostFlags are the flags that build a local host: its consent store, its
// per-leg timeout, the files provider's options and the other providers.
type hostFlags struct {
	consentPath, storeURL        string
	timeout, mcpStart            time.Duration
	files                        filesFlags
	providers, bearers, mcpTools repeated
}

func (f *hostFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.consentPath, "consent-store", "", "")
	fs.StringVar(&f.storeURL, "store", "", "")
	fs.DurationVar(&f.timeout, "timeout", 30*time.Second, "")
	fs.DurationVar(&f.mcpStart, "mcp-start-timeout", mcpbridge.DefaultStartTimeout, "")
	f.files.register(fs)
	fs.Var(&f.providers, "provider", "")
	fs.Var(&f.bearers, "bearer-env", "")
	fs.Var(&f.mcpTools, "mcp-tool", "")
}

// check refuses negative timeouts (0 is the default) and bad files flags.
func (f *hostFlags) check() error {
	if f.timeout < 0 {
		return fmt.Errorf("--timeout must not be negative, got %v", f.timeout)
	}
	if f.mcpStart < 0 {
		return fmt.Errorf("--mcp-start-timeout must not be negative, got %v", f.mcpStart)
	}
	return f.files.check()
}

// add registers every --provider of f with h.
func (f *hostFlags) add(h *host.Host) ([]*mcpbridge.Provider, error) {
	return addProviders(h, f.providers, f.bearers, f.mcpTools, f.mcpStart)
}

// addDirs indexes the DIRs and registers them with the host as one built-in
// files provider, "files" (nil and nothing registered without DIRs).
func addDirs(ctx context.Context, h *host.Host, ff *filesFlags, dirs []string, progress, log io.Writer) (*files.Provider, error) {
	if len(dirs) == 0 {
		return nil, nil
	}
	fp, err := ff.build(ctx, dirs, progress, log)
	if err != nil {
		return nil, err
	}
	return fp, h.AddInProcess("files", fp)
}

// checkQueryFlags says what is wrong with the query's goal, budget, frame
// limit or kinds, or "" when nothing is.
func checkQueryFlags(goal string, budget, maxFrames int, kinds []string) string {
	switch {
	case strings.TrimSpace(goal) == "":
		return "--goal is required (see ctxkit help query)"
	case budget <= 0:
		return "--budget must be a positive number of budget tokens"
	case budget > maxQueryBudget:
		return fmt.Sprintf("--budget %d is over the limit of %d budget tokens", budget, maxQueryBudget)
	case maxFrames <= 0:
		return "--max-frames must be positive"
	case maxFrames > maxQueryFrames:
		return fmt.Sprintf("--max-frames %d is over the limit of %d", maxFrames, maxQueryFrames)
	}
	for _, k := range kinds {
		if msg := checkKindName(k); msg != "" {
			return msg
		}
	}
	return ""
}

// writeQueryResult prints the prompt and report (or the JSON document) and
// returns the exit code: 1 when a leg failed or a frame was refused, or
// when nothing was composed, which it says on stderr. fp, the files
// provider if any, adds its index lines to the report.
func writeQueryResult(s stdio, asJSON bool, fp *files.Provider, fo *host.FanOut, res *compose.Result) int {
	code := exitOK
	if len(fo.Failures()) > 0 || len(fo.Excluded()) > 0 {
		code = exitFailed
	}
	empty := emptyQuery(fo, res)
	if empty != "" {
		code = exitFailed
	}
	if asJSON {
		out := struct {
			Index       []files.Stats    `json:"index,omitempty"`
			FanOut      *host.FanOut     `json:"fanout"`
			Composition *compose.Result  `json:"composition"`
			Usage       host.UsageReport `json:"usage"`
		}{indexStats(fp), fo, res, fo.UsageReport(time.Now().UTC().Format("2006-01-02T15:04:05Z"))}
		enc := json.NewEncoder(s.out)
		enc.SetEscapeHTML(false)
		enc.SetIndent("", "  ")
		if err := enc.Encode(out); err != nil {
			fmt.Fprintf(s.err, "query: %v\n", err)
			return exitFailed
		}
	} else {
		if err := writePrompt(s.out, res.Prompt); err != nil {
			return exitFailed
		}
		if fp != nil {
			fmt.Fprintln(s.err)
			writeIndexReport(s.err, fp)
		}
		writeFanOutReport(s.err, fo)
		_ = res.Audit.WriteText(s.err)
	}
	if empty != "" {
		if asJSON { // no report was printed on stderr: point at its JSON
			empty = strings.ReplaceAll(empty, "the fan-out report above", "fanout in the JSON on stdout")
		}
		fmt.Fprintf(s.err, "query: %s\n", empty)
	}
	return code
}

// addProviders registers each --provider SPEC, giving the provider named in
// a --bearer-env ID=VAR its credential: a bearer token for HTTP, the
// environment variable VAR for a stdio child.
func addProviders(h *host.Host, providers, bearers, mcpTools []string, mcpStart time.Duration) ([]*mcpbridge.Provider, error) {
	toolOf, err := parseMCPTools(mcpTools)
	if err != nil {
		return nil, err
	}
	var bridges []*mcpbridge.Provider
	creds := map[string]host.Credential{}
	credVar := map[string]string{}
	for _, b := range bearers {
		id, v, ok := strings.Cut(b, "=")
		if !ok || id == "" || v == "" {
			return nil, fmt.Errorf("--bearer-env wants ID=VAR, got %q", b)
		}
		tok, set := os.LookupEnv(v)
		if !set {
			return nil, fmt.Errorf("--bearer-env %s: environment variable %s is not set", id, v)
		}
		creds[id], credVar[id] = host.NewCredential(tok), v
	}
	for _, spec := range providers {
		id, target, ok := strings.Cut(spec, "=")
		if !ok || id == "" || target == "" {
			return nil, fmt.Errorf("--provider wants ID=stdio:CMD or ID=https://URL, got %q", spec)
		}
		switch {
		case strings.HasPrefix(target, mcpbridge.Prefix):
			b, err := addBridge(h, id, target, toolOf, creds[id], mcpStart)
			if err != nil {
				return nil, err
			}
			bridges = append(bridges, b)
		case strings.HasPrefix(target, "stdio:"):
			argv := strings.Fields(strings.TrimPrefix(target, "stdio:"))
			if len(argv) == 0 {
				return nil, fmt.Errorf("--provider %s: empty command", id)
			}
			var so *host.StdioOptions
			if v, ok := credVar[id]; ok {
				so = &host.StdioOptions{SecretEnv: map[string]host.Credential{v: creds[id]}}
			}
			if err := h.AddStdio(id, argv[0], argv[1:], so); err != nil {
				// A command that cannot start fails its own leg; the
				// other providers are still served.
				if !errors.Is(err, host.ErrNotStarted) || h.AddUnstarted(id, err) != nil {
					return nil, err
				}
			}
		case strings.HasPrefix(target, "https://"), strings.HasPrefix(target, "http://"):
			if err := h.AddHTTP(id, target, &host.HTTPOptions{Credential: creds[id]}); err != nil {
				return nil, err
			}
		default:
			return nil, fmt.Errorf("--provider %s: unknown transport in %q (want stdio:, https:// or mcp:)", id, target)
		}
	}
	if err := checkMCPTools(h, toolOf); err != nil {
		return nil, err
	}
	return bridges, nil
}

// writeFanOutReport prints one line per provider leg, then each frame the
// per-leg audit refused. Everything a provider chose (its error messages and
// stderr inside o.Error, its frame ids, the details quoting its frames) is
// quoted or escaped by safetext, so no provider can add a line to this
// report or send the terminal an escape sequence.
func writeFanOutReport(w io.Writer, fo *host.FanOut) {
	fmt.Fprintf(w, "\n# fan-out: %d provider(s), %s\n", len(fo.Outcomes), fo.Elapsed.Round(time.Millisecond))
	for _, o := range fo.Outcomes {
		line := fmt.Sprintf("%-16s %-22s", safetext.Quote(o.Provider), o.Status)
		if o.Status != host.StatusKindsNotServed {
			line += legLimits(fo, &o)
		}
		if o.Status == host.StatusFrames {
			line += fmt.Sprintf(" accepted=%d", len(o.Frames))
		}
		if n := o.RefusedFrames(); n > 0 {
			line += fmt.Sprintf(" refused=%d", n)
		}
		line += " " + o.Elapsed.Round(time.Millisecond).String()
		fmt.Fprintln(w, line)
		label := "error"
		if o.Status.Skipped() {
			label = "skipped"
		}
		if msg := o.Error(); msg != "" {
			fmt.Fprintf(w, "  %s: %s\n", label, safetext.Escape(msg))
		}
		for _, e := range o.Excluded {
			detail := e.Detail
			if !strings.HasPrefix(detail, string(e.Rule)+" ") {
				detail = string(e.Rule) + " " + detail
			}
			fmt.Fprintf(w, "  refused %s: %s\n", safetext.Quote(e.Frame.String()), safetext.Escape(detail))
		}
	}
	fmt.Fprintf(w, "# composition: %s\n", fo.ComposeElapsed.Round(time.Microsecond))
}

// legLimits spells what a leg was given: its share of the global budget
// and, when the host reserved fences out of it, the max_tokens and
// max_frames the provider was asked for.
func legLimits(fo *host.FanOut, o *host.Outcome) string {
	if !fo.Budgeted {
		return fmt.Sprintf(" max_tokens=%d", o.Query.MaxTokens)
	}
	if o.Share == o.Query.MaxTokens {
		return fmt.Sprintf(" share=%d", o.Share)
	}
	return fmt.Sprintf(" share=%d max_tokens=%d max_frames=%d", o.Share, o.Query.MaxTokens, o.Query.MaxFrames)
}

// loadTrust loads the trust store at path (or the trust command's default);
// a missing default store is empty.
// A postgres:// URL loads the shared store's keys.
func loadTrust(ctx context.Context, path string) (*trust.Store, error) {
	local, ok, err := isLocalStore(path)
	if err != nil {
		return nil, err
	}
	if !ok {
		ks, closeKeys, err := openKeyStore(ctx, path)
		if err != nil {
			return nil, err
		}
		defer closeKeys()
		return ks.Load(ctx)
	}
	path = local
	explicit := path != ""
	if !explicit {
		p, err := defaultStorePath()
		if err != nil {
			return trust.NewStore(), nil
		}
		path = p
	}
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) && !explicit {
		return trust.NewStore(), nil
	}
	return trust.LoadStore(ctx, path)
}

// isTerminal reports whether w is a character device (a terminal).
// writePrompt writes a composed prompt to w: byte for byte, unless w is a
// terminal, where a person reads it and a provider's carriage returns,
// escape sequences and bidirectional overrides would hide or rewrite what
// they see; there those are shown escaped (safetext.ForTerminal).
func writePrompt(w io.Writer, prompt string) error {
	if isTerminal(w) {
		prompt = safetext.ForTerminal(prompt)
	}
	_, err := io.WriteString(w, prompt)
	return err
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
