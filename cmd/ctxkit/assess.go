package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/ctxkit/ctxkit/server/api"
	"github.com/ctxkit/ctxkit/window"
)

// maxRequestBytes bounds what assess reads (a request with a few large
// images fits easily).
const maxRequestBytes = 512 << 20

// assessFlags are the flags `assess` takes, locally and with --remote.
type assessFlags struct {
	model, wire, format                        *string
	window, imageTokens, pageTokens, toolBytes *int
}

func defineAssessFlags(fs *flag.FlagSet) *assessFlags {
	return &assessFlags{
		model:       fs.String("model", "", "model name (default: the request's \"model\" member)"),
		window:      fs.Int("window", 0, "context window in tokens (default: the model catalog's)"),
		wire:        fs.String("wire", "", "request shape: anthropic, openai or gemini (default: the catalog's, else detected); a body of another shape is an error"),
		format:      fs.String("format", "text", "output format: text or json"),
		imageTokens: fs.Int("image-tokens", 0, "charge per image (default: the model's catalog figure, else its wire's)"),
		pageTokens:  fs.Int("page-tokens", 0, "charge per PDF page (default: the model's catalog figure, else its wire's)"),
		toolBytes:   fs.Int("tool-result-bytes", 0, "byte cap of the next tool result to reserve for"),
	}
}

// check validates the flags and the FILE arguments, printing what is wrong.
func (f *assessFlags) check(files []string, s stdio) (window.Wire, bool) {
	switch {
	case len(files) > 1:
		fmt.Fprintln(s.err, "assess: at most one FILE")
		return window.WireUnknown, false
	case *f.format != "text" && *f.format != "json":
		fmt.Fprintf(s.err, "assess: unknown format %q (want text or json)\n", *f.format)
		return window.WireUnknown, false
	case *f.window < 0 || *f.imageTokens < 0 || *f.pageTokens < 0 || *f.toolBytes < 0:
		fmt.Fprintln(s.err, "assess: --window, --image-tokens, --page-tokens and --tool-result-bytes must not be negative")
		return window.WireUnknown, false
	}
	wire, err := window.ParseWire(*f.wire)
	if err != nil {
		fmt.Fprintf(s.err, "assess: %v\n", err)
		return window.WireUnknown, false
	}
	return wire, true
}

const assessUsage = `usage: ctxkit assess [FILE|-] [--model M] [--window N] [--wire W] [--format text|json]

Reads a provider request body (Anthropic Messages, OpenAI Chat/Responses or Gemini
generateContent) and prints the usage breakdown, reserves, budget, remaining and the
compaction decision. Text is counted decoded (not as JSON). Images cost the model's
per-image figure and PDF pages its per-page figure, whether sent inline, by URL or by
file id (a document by reference is charged the most pages the model accepts).

flags:
`

const assessExamples = `
examples:
  ctxkit assess docs/examples/anthropic-request.json
  ctxkit assess --model gpt-4o --format json - < request.json
  ctxkit assess --remote http://127.0.0.1:8787 docs/examples/anthropic-request.json

exit codes: 0 assessed; 2 usage error, or a body that cannot be read or parsed or
whose shape is not the wire's.
`

func runAssess(ctx context.Context, args []string, s stdio) int {
	return assessWith(ctx, localRunner{}, args, s)
}

func assessWith(ctx context.Context, r runner, args []string, s stdio) int {
	fs := flag.NewFlagSet("assess", flag.ContinueOnError)
	fs.SetOutput(s.err)
	f := defineAssessFlags(fs)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), assessUsage)
		fs.PrintDefaults()
		fmt.Fprint(fs.Output(), assessExamples)
	}
	if wantsHelp(args) {
		fs.SetOutput(s.out)
		fs.Usage()
		return exitOK
	}
	// Flags may follow FILE, as in the usage line.
	files, err := parseInterleaved(fs, args)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK
		}
		return exitUsage
	}
	if _, ok := f.check(files, s); !ok {
		return exitUsage
	}
	file := ""
	if len(files) == 1 {
		file = files[0]
	}
	body, err := readInput(file, s.in)
	if err != nil {
		fmt.Fprintf(s.err, "assess: %v\n", err)
		return exitUsage
	}
	if !json.Valid(body) {
		// Checked here so that the request can be sent at all.
		fmt.Fprintln(s.err, "assess: request body is not JSON")
		return exitUsage
	}
	req := &api.AssessRequest{Request: body, Model: *f.model, Wire: *f.wire, Window: *f.window,
		ImageTokens: *f.imageTokens, PageTokens: *f.pageTokens, ToolResultBytes: *f.toolBytes}
	a, err := r.assess(ctx, req)
	if err != nil {
		return requestFailed("assess", s, err)
	}
	return printAssessment(s, *a, *f.format)
}

// printAssessment prints an assessment as text or indented JSON; local and
// remote `assess` print through it, so their outputs are the same bytes.
func printAssessment(s stdio, a window.Assessment, format string) int {
	if format == "json" {
		enc := json.NewEncoder(s.out)
		enc.SetIndent("", "  ")
		if err := enc.Encode(a); err != nil {
			fmt.Fprintf(s.err, "assess: %v\n", err)
			return exitUsage
		}
		return exitOK
	}
	writeAssessment(s.out, a)
	return exitOK
}

func readInput(path string, stdin io.Reader) ([]byte, error) {
	if (path == "" || path == "-") && stdin == nil {
		return nil, errors.New("read request: no input")
	}
	_, r, err := openInput(path, stdin)
	if err != nil {
		return nil, fmt.Errorf("read request: %w", err)
	}
	defer r.Close()
	b, err := io.ReadAll(io.LimitReader(r, maxRequestBytes+1))
	if err != nil {
		return nil, fmt.Errorf("read request: %w", err)
	}
	if len(b) > maxRequestBytes {
		return nil, fmt.Errorf("read request: larger than %d bytes", maxRequestBytes)
	}
	return b, nil
}

func writeAssessment(w io.Writer, a window.Assessment) {
	row := func(label string, n int, note string) {
		fmt.Fprintln(w, strings.TrimRight(fmt.Sprintf("  %-14s %11s  %s", label, group(n), note), " "))
	}
	model := a.Model
	if model == "" {
		model = "(none)"
	}
	fmt.Fprintf(w, "model %s, wire %s, counter %s, window %s", model, a.Wire, a.Counter, group(a.Window))
	if a.InputLimit > 0 {
		fmt.Fprintf(w, " (input limit %s)", group(a.InputLimit))
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "usage")
	row("system", a.Breakdown.System, "")
	row("tool schemas", a.Breakdown.ToolSchemas, "")
	note := fmt.Sprintf("%d messages", a.HistoryMessages)
	if a.Images > 0 {
		note += fmt.Sprintf(", %d images at %s each", a.Images, group(a.ImageTokens))
	}
	if a.LowDetailImages > 0 {
		note += fmt.Sprintf(", %d low-detail images at %s each", a.LowDetailImages, group(a.ImageLowTokens))
	}
	if a.Documents > 0 {
		note += fmt.Sprintf(", %d documents (%d pages at %s each)", a.Documents, a.Pages, group(a.PageTokens))
	}
	if a.References > 0 {
		note += fmt.Sprintf(", %d of them by URL or file id (documents at %d pages)", a.References, a.MaxPages)
	}
	if a.ReasoningDropped > 0 {
		note += fmt.Sprintf(", %s tokens of earlier reasoning not charged", group(a.ReasoningDropped))
	}
	row("history", a.Breakdown.History, note)
	row("framing", a.Breakdown.Framing, fmt.Sprintf("%d per message", window.FramingTokensPerMessage))
	row("skills", a.Breakdown.Skills, "")
	row("memory", a.Breakdown.Memory, "")
	if a.Calibration != 1 {
		fmt.Fprintf(w, "  %-14s %11.3g  lanes scaled by reported ÷ estimated\n", "calibration", a.Calibration)
	}
	row("used", a.Used(), "")
	fmt.Fprintln(w, "reserves")
	row("thinking", a.Reserves.Thinking, "thinking "+a.Reserves.Accounting.String())
	row("tool result", a.Reserves.ToolResult, "")
	row("output", a.Reserves.Output, "")
	row("safety margin", a.Reserves.SafetyMargin, fmt.Sprintf("%d%% of the window", window.SafetyMarginPercent))
	row("total", a.Reserves.Total(), "")
	row("budget", a.Budget(), "window minus reserves")
	row("remaining", a.Remaining(), "")
	for _, warning := range a.Warnings {
		fmt.Fprintf(w, "warning: %s\n", warning)
	}
	switch {
	case a.ShouldCompact():
		fmt.Fprintln(w, "decision: compact (usage reached the budget)")
	case a.Used() >= a.Budget():
		fmt.Fprintf(w, "decision: over budget, but only %d messages (compaction needs %d)\n", a.HistoryMessages, window.MinCompactionMessages)
	default:
		fmt.Fprintln(w, "decision: fits")
	}
}

// group formats n with thousands separators: 1,600.
func group(n int) string {
	s := fmt.Sprint(n)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}
