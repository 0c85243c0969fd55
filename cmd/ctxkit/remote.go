package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"

	"github.com/ctxkit/ctxkit/frame"
	"github.com/ctxkit/ctxkit/host"
	"github.com/ctxkit/ctxkit/internal/safetext"
	"github.com/ctxkit/ctxkit/server"
	"github.com/ctxkit/ctxkit/server/client"
	"github.com/ctxkit/ctxkit/window"
	"github.com/ctxkit/ctxkit/wire"
)

// remoteCommands run a command on a ctxkit service instead of in-process:
// `ctxkit CMD --remote URL ...` takes the command's usual flags and input
// and prints what the local command prints (the same prompt bytes), with
// the same exit codes.
func remoteCommands() map[string]func(ctx context.Context, c *client.Client, args []string, s stdio) int {
	return map[string]func(ctx context.Context, c *client.Client, args []string, s stdio) int{
		"compose": remoteCompose,
		"assess":  remoteAssess,
		"query":   remoteQuery,
	}
}

// dispatchRemote runs args on a service when they hold --remote URL; ok is
// false when they do not.
func dispatchRemote(ctx context.Context, args []string, s stdio) (code int, ok bool) {
	if len(args) == 0 {
		return 0, false
	}
	url, rest, found := cutRemote(args[1:])
	if !found {
		return 0, false
	}
	runRemote, supported := remoteCommands()[args[0]]
	if !supported {
		fmt.Fprintf(s.err, "%s: --remote works with compose, assess and query, not %q\n", args[0], args[0])
		return exitUsage, true
	}
	if url == "" {
		fmt.Fprintf(s.err, "%s: --remote needs a URL, for example --remote http://127.0.0.1:8787\n", args[0])
		return exitUsage, true
	}
	c, err := client.New(url, nil)
	if err != nil {
		fmt.Fprintf(s.err, "%s: --remote: %v\n", args[0], err)
		return exitUsage, true
	}
	return runRemote(ctx, c, rest, s), true
}

// cutRemote removes --remote URL (or --remote=URL, one or two dashes) from
// args, before any "--".
func cutRemote(args []string) (url string, rest []string, found bool) {
	for i, a := range args {
		if a == "--" {
			break
		}
		name, val, hasVal := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if !strings.HasPrefix(a, "-") || name != "remote" {
			continue
		}
		rest = append(append(rest, args[:i]...), args[i+1:]...)
		if hasVal {
			return val, rest, true
		}
		if i+1 < len(args) {
			rest = append(append([]string(nil), args[:i]...), args[i+2:]...)
			return args[i+1], rest, true
		}
		return "", rest, true
	}
	return "", args, false
}

// remoteFail prints a service or transport error and maps it to an exit
// code: 1 for a protocol rule violation (422), 2 for anything else.
func remoteFail(cmd string, s stdio, err error) int {
	var e *server.Error
	if errors.As(err, &e) {
		where := ""
		if e.Field != "" {
			where = " (" + e.Field + ")"
		}
		fmt.Fprintf(s.err, "%s: remote: %d %s%s: %s\n", cmd, e.Status, safetext.Quote(string(e.Code)), safetext.Escape(where), safetext.Escape(e.Message))
		if e.Status == http.StatusUnprocessableEntity {
			return exitFailed
		}
		return exitUsage
	}
	fmt.Fprintf(s.err, "%s: remote: %v\n", cmd, err)
	return exitUsage
}

// readArgInput reads the FILE argument, or stdin for "-" or none.
func readArgInput(path string, stdin io.Reader) (io.Reader, func(), error) {
	if path == "" || path == "-" {
		return stdin, func() {}, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	return f, func() { f.Close() }, nil
}

func remoteCompose(ctx context.Context, c *client.Client, args []string, s stdio) int {
	fs := flag.NewFlagSet("compose", flag.ContinueOnError)
	budget := fs.Int("budget", -1, "")
	strategy := fs.String("strategy", "", "")
	packer := fs.String("packer", "", "")
	format := fs.String("format", "text", "")
	skip := fs.Bool("skip-invalid", false, "")
	files, code, done := parseRemoteFlags(fs, args, s, "compose")
	if done {
		return code
	}
	switch {
	case *budget < 0:
		fmt.Fprintln(s.err, "compose: --budget N is required (see ctxkit help compose)")
		return exitUsage
	case *format != "text" && *format != "json":
		fmt.Fprintf(s.err, "compose: unknown format %q (text, json)\n", *format)
		return exitUsage
	case len(files) > 1:
		fmt.Fprintf(s.err, "compose: one input at a time, got %d\n", len(files))
		return exitUsage
	}
	req := &server.ComposeRequest{Budget: budget, Packer: *packer, SkipInvalid: *skip}
	req.Strategy, req.Quota = *strategy, 0
	if name, k, ok := strings.Cut(*strategy, ":"); ok {
		n, err := strconv.Atoi(k)
		if err != nil || n < 0 {
			fmt.Fprintf(s.err, "compose: per-provider-quota:K wants a non-negative integer K, got %q\n", k)
			return exitUsage
		}
		req.Strategy, req.Quota = name, max(n, 1) // K=0 means 1, as in the composer
	}
	path := ""
	if len(files) == 1 {
		path = files[0]
	}
	in, closeIn, err := readArgInput(path, s.in)
	if err != nil {
		fmt.Fprintf(s.err, "compose: %v\n", err)
		return exitUsage
	}
	offers, err := wire.ReadOffers(in, nil)
	closeIn()
	if err != nil {
		fmt.Fprintf(s.err, "compose: %v\n", err)
		return exitUsage
	}
	for i := range offers {
		req.Offers = append(req.Offers, server.Offer{Provider: offers[i].Provider, Frame: &offers[i].Frame})
	}
	var raw json.RawMessage
	if err := c.Do(ctx, server.PathCompose, req, &raw); err != nil {
		return remoteFail("compose", s, err)
	}
	var res server.ComposeResult
	if err := json.Unmarshal(raw, &res); err != nil {
		fmt.Fprintf(s.err, "compose: remote: %v\n", err)
		return exitUsage
	}
	if *format == "json" {
		_, _ = s.out.Write(append(raw, '\n'))
		if msg := emptyRemoteCompose(&res); msg != "" {
			fmt.Fprintf(s.err, "compose: %s: %s\n", inputName(path), msg)
			return exitFailed
		}
		return exitOK
	}
	_, _ = io.WriteString(s.out, res.Prompt)
	writeRemoteAudit(s.err, &res)
	for _, sk := range res.Skipped {
		fmt.Fprintf(s.err, "compose: skipped offer %d: %s\n", sk.Index+1, safetext.Escape(sk.Message))
	}
	if msg := emptyRemoteCompose(&res); msg != "" {
		fmt.Fprintf(s.err, "compose: %s: %s\n", inputName(path), msg)
		return exitFailed
	}
	return exitOK
}

// inputName is how compose names its input in messages: the path, or "-"
// for standard input.
func inputName(path string) string {
	if path == "" {
		return "-"
	}
	return path
}

// emptyRemoteCompose says why a remote composition holds no frame, or ""
// when it holds one (emptyCompose on the service's answer).
func emptyRemoteCompose(res *server.ComposeResult) string {
	if len(res.Audit.Entries) == 0 {
		return "nothing to compose: the input holds no valid offer"
	}
	return emptyRemoteQuery(&server.QueryResult{Composition: *res})
}

// writeRemoteAudit prints the audit as `ctxkit compose` does: one line
// per entry and a summary.
func writeRemoteAudit(w io.Writer, res *server.ComposeResult) {
	inc := 0
	for _, e := range res.Audit.Entries {
		var b strings.Builder
		b.WriteString(safetext.Quote(e.Disposition))
		if e.Disposition == "included" {
			inc++
			b.WriteString(" " + safetext.Quote(e.Verification) + " " + quoteIdentity(e.Frame))
		} else if e.Reason != nil {
			b.WriteString(" " + safetext.Quote(e.Reason.Kind) + " " + quoteIdentity(e.Frame))
			switch {
			case e.Reason.Kept != nil:
				b.WriteString(" kept=" + quoteIdentity(*e.Reason.Kept))
			case e.Reason.Cost != nil && e.Reason.Remaining != nil:
				fmt.Fprintf(&b, " cost=%d remaining=%d", *e.Reason.Cost, *e.Reason.Remaining)
			}
		}
		var st struct {
			State string `json:"state"`
		}
		_ = json.Unmarshal(e.Attestation, &st)
		b.WriteString(" attestation=" + safetext.Quote(st.State))
		fmt.Fprintln(w, b.String())
	}
	a := res.Audit
	fmt.Fprintf(w, "budget=%d tokens_used=%d strategy=%s packer=%s included=%d excluded=%d\n",
		a.Budget, a.TokensUsed, safetext.Quote(a.Strategy), safetext.Quote(a.Packer), inc, len(a.Entries)-inc)
}

// quoteIdentity prints an identity on one line, Go-quoted when it holds
// spaces, quotes or non-printable runes (as the composer's audit text does).
func quoteIdentity(id frame.ID) string { return safetext.Quote(id.String()) }

func remoteAssess(ctx context.Context, c *client.Client, args []string, s stdio) int {
	fs := flag.NewFlagSet("assess", flag.ContinueOnError)
	f := defineAssessFlags(fs)
	files, code, done := parseRemoteFlags(fs, args, s, "assess")
	if done {
		return code
	}
	if _, ok := f.check(files, s); !ok {
		return exitUsage
	}
	path := ""
	if len(files) == 1 {
		path = files[0]
	}
	body, err := readInput(path, s.in)
	if err != nil {
		fmt.Fprintf(s.err, "assess: %v\n", err)
		return exitUsage
	}
	if !json.Valid(body) {
		fmt.Fprintln(s.err, "assess: request body is not a JSON object")
		return exitUsage
	}
	req := &server.AssessRequest{Request: body, Model: *f.model, Wire: *f.wire, Window: *f.window,
		ImageTokens: *f.imageTokens, PageTokens: *f.pageTokens, ToolResultBytes: *f.toolBytes}
	var a window.Assessment
	if err := c.Do(ctx, server.PathAssess, req, &a); err != nil {
		return remoteFail("assess", s, err)
	}
	return printAssessment(s, a, *f.format)
}

func remoteQuery(ctx context.Context, c *client.Client, args []string, s stdio) int {
	fs := flag.NewFlagSet("query", flag.ContinueOnError)
	goal := fs.String("goal", "", "")
	qtext := fs.String("query-text", "", "")
	budget := fs.Int("budget", 2000, "")
	maxFrames := fs.Int("max-frames", 16, "")
	format := fs.String("format", "text", "")
	strategy := fs.String("strategy", "", "")
	packer := fs.String("packer", "", "")
	var kinds repeated
	fs.Var(&kinds, "kind", "")
	dirs, code, done := parseRemoteFlags(fs, args, s, "query")
	if done {
		return code
	}
	switch {
	case len(dirs) > 0:
		fmt.Fprintln(s.err, "query: with --remote the service queries the providers it was started with; DIR arguments are local only")
		return exitUsage
	case strings.TrimSpace(*goal) == "":
		fmt.Fprintln(s.err, "query: --goal is required (see ctxkit help query)")
		return exitUsage
	case *format != "text" && *format != "json":
		fmt.Fprintln(s.err, "query: --format must be text or json")
		return exitUsage
	}
	req := &server.QueryRequest{Goal: *goal, QueryText: *qtext, Budget: *budget, MaxFrames: *maxFrames, Strategy: *strategy, Packer: *packer}
	if name, k, ok := strings.Cut(*strategy, ":"); ok {
		n, err := strconv.Atoi(k)
		if err != nil || n < 0 {
			fmt.Fprintf(s.err, "query: per-provider-quota:K wants a non-negative integer K, got %q\n", k)
			return exitUsage
		}
		req.Strategy, req.Quota = name, max(n, 1)
	}
	for _, k := range kinds {
		if msg := checkKindName(k); msg != "" {
			fmt.Fprintf(s.err, "query: %s\n", msg)
			return exitUsage
		}
		req.Kinds = append(req.Kinds, frame.Kind(k))
	}
	var raw json.RawMessage
	if err := c.Do(ctx, server.PathQuery, req, &raw); err != nil {
		return remoteFail("query", s, err)
	}
	var res server.QueryResult
	if err := json.Unmarshal(raw, &res); err != nil {
		fmt.Fprintf(s.err, "query: remote: %v\n", err)
		return exitUsage
	}
	code = exitOK
	for _, o := range res.FanOut.Outcomes {
		if (o.Status != "frames" && !skippedStatus(o.Status)) || len(o.Excluded) > 0 {
			code = exitFailed
		}
	}
	empty := emptyRemoteQuery(&res)
	if empty != "" {
		code = exitFailed
	}
	if *format == "json" {
		_, _ = s.out.Write(append(raw, '\n'))
		if empty != "" {
			fmt.Fprintf(s.err, "query: %s\n", empty)
		}
		return code
	}
	_, _ = io.WriteString(s.out, res.Composition.Prompt)
	for _, o := range res.FanOut.Outcomes {
		// The service relays what each provider said: every field is
		// quoted or escaped so that none can add a line or drive the terminal.
		line := fmt.Sprintf("provider %s: %s, %d frames", safetext.Quote(o.Provider), safetext.Quote(o.Status), len(o.Frames))
		if n := refusedFrames(o.Excluded); n > 0 {
			line += fmt.Sprintf(", %d excluded by the audit", n)
		}
		if o.Error != "" {
			line += ": " + safetext.Escape(o.Error)
		}
		fmt.Fprintln(s.err, line)
	}
	writeRemoteAudit(s.err, &res.Composition)
	if empty != "" {
		fmt.Fprintf(s.err, "query: %s\n", empty)
	}
	return code
}

// skippedStatus reports whether a leg status names a provider the host did
// not query (host.Status.Skipped).
func skippedStatus(st string) bool {
	var s host.Status
	return s.UnmarshalText([]byte(st)) == nil && s.Skipped()
}

// refusedFrames counts the distinct frames in a leg's exclusion list (one
// frame breaking two rules has two entries).
func refusedFrames(ex []json.RawMessage) int {
	seen := map[string]bool{}
	for _, e := range ex {
		var x struct {
			Frame json.RawMessage `json:"frame"`
		}
		_ = json.Unmarshal(e, &x)
		seen[string(x.Frame)] = true
	}
	return len(seen)
}

// emptyRemoteQuery says why a remote query composed nothing, or "" when
// it composed a frame: the service's answer read as emptyQuery reads a
// local one.
func emptyRemoteQuery(res *server.QueryResult) string {
	counts := map[string]int{}
	cheapest, n := -1, 0
	for _, e := range res.Composition.Audit.Entries {
		if e.Disposition == "included" {
			return ""
		}
		if e.Reason == nil {
			continue
		}
		n++
		counts[e.Reason.Kind]++
		if e.Reason.Cost != nil && (cheapest < 0 || *e.Reason.Cost < cheapest) {
			cheapest = *e.Reason.Cost
		}
	}
	if n > 0 {
		return "nothing composed: " + reasonSummary(n, counts, res.Composition.Audit.Budget, cheapest)
	}
	var notes []string
	for _, o := range res.FanOut.Outcomes {
		switch {
		case o.Error != "":
			notes = append(notes, o.Provider+": "+o.Error)
		case len(o.Excluded) > 0:
			notes = append(notes, fmt.Sprintf("%s: the audit refused all %d frame(s) it returned", o.Provider, refusedFrames(o.Excluded)))
		}
	}
	if len(notes) == 0 {
		return "nothing composed: no provider returned a frame for this goal"
	}
	return "nothing composed: " + strings.Join(notes, "; ")
}

// parseRemoteFlags parses flags interleaved with positional arguments.
// Help goes to the local command's usage (same flags, plus --remote).
func parseRemoteFlags(fs *flag.FlagSet, args []string, s stdio, cmd string) (pos []string, code int, done bool) {
	fs.SetOutput(io.Discard)
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, run(context.Background(), []string{cmd, "--help"}, s), true
			}
			fmt.Fprintf(s.err, "%s: %v (see ctxkit help %s)\n", cmd, err, cmd)
			return nil, exitUsage, true
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return pos, 0, false
		}
		if rest[0] == "--" {
			return append(pos, rest[1:]...), 0, false
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}
