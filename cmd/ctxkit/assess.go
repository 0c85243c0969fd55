package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/ctxkit/ctxkit/window"
)

// maxRequestBytes bounds what assess reads (a request with a few large
// images fits easily).
const maxRequestBytes = 512 << 20

func assessCommand() command {
	return command{name: "assess", summary: "assess a provider request against the model's context window", run: runAssess}
}

func runAssess(ctx context.Context, args []string, s stdio) int {
	fs := flag.NewFlagSet("assess", flag.ContinueOnError)
	fs.SetOutput(s.err)
	model := fs.String("model", "", "model name (default: the request's \"model\" member)")
	win := fs.Int("window", 0, "context window in tokens (default: the model catalog's)")
	wireName := fs.String("wire", "", "request shape: anthropic, openai or gemini (default: detected)")
	format := fs.String("format", "text", "output format: text or json")
	imageTokens := fs.Int("image-tokens", 0, "flat charge per base64 image (default: the model's wire default)")
	pageTokens := fs.Int("page-tokens", 0, "charge per estimated page of a base64 PDF document (default: the catalog's, else 3000)")
	toolBytes := fs.Int("tool-result-bytes", 0, "byte cap of the next tool result to reserve for")
	fs.Usage = func() {
		w := fs.Output()
		fmt.Fprintf(w, "usage: %s assess [FILE|-] [--model M] [--window N] [--wire W] [--format text|json]\n\n", programName)
		fmt.Fprintln(w, "Reads a provider request body (Anthropic Messages, OpenAI Chat/Responses or Gemini")
		fmt.Fprintln(w, "generateContent) and prints the usage breakdown, reserves, budget, remaining and the")
		fmt.Fprintln(w, "compaction decision. Base64 images are charged a flat per-image figure and base64")
		fmt.Fprintln(w, "PDF documents a per-page figure times the pages estimated from the PDF.")
		fmt.Fprintln(w, "\nflags:")
		fs.PrintDefaults()
		fmt.Fprintln(w, "\nexamples:")
		fmt.Fprintln(w, "  ctxkit assess docs/examples/anthropic-request.json")
		fmt.Fprintln(w, "  ctxkit assess --model gpt-4o --format json - < request.json")
		fmt.Fprintln(w, "  ctxkit assess --remote http://127.0.0.1:8787 docs/examples/anthropic-request.json")
		fmt.Fprintln(w, "\nexit codes: 0 assessed; 2 usage error, or a body that cannot be read or parsed.")
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
	if len(files) > 1 {
		fmt.Fprintln(s.err, "assess: at most one FILE")
		return exitUsage
	}
	if *format != "text" && *format != "json" {
		fmt.Fprintf(s.err, "assess: unknown format %q (want text or json)\n", *format)
		return exitUsage
	}
	if *win < 0 || *imageTokens < 0 || *pageTokens < 0 || *toolBytes < 0 {
		fmt.Fprintln(s.err, "assess: --window, --image-tokens, --page-tokens and --tool-result-bytes must not be negative")
		return exitUsage
	}
	wire, err := window.ParseWire(*wireName)
	if err != nil {
		fmt.Fprintf(s.err, "assess: %v\n", err)
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
	if err := ctx.Err(); err != nil {
		fmt.Fprintf(s.err, "assess: %v\n", err)
		return exitUsage
	}
	req, err := parseRequest(body, wire, *model)
	if err != nil {
		fmt.Fprintf(s.err, "assess: %v\n", err)
		return exitUsage
	}
	a := window.Assess(window.Inputs{
		Model:               req.model,
		Window:              *win,
		System:              req.system,
		Tools:               req.tools,
		Messages:            req.messages,
		ThinkingBudget:      req.thinking,
		NextToolResultBytes: *toolBytes,
		OutputReserve:       req.output,
		Wire:                req.wire,
		ImageTokens:         *imageTokens,
		PageTokens:          *pageTokens,
	})
	if *format == "json" {
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
	var r io.Reader = stdin
	if path != "" && path != "-" {
		f, err := os.Open(path)
		if err != nil {
			return nil, fmt.Errorf("read request: %w", err)
		}
		defer f.Close()
		r = f
	}
	if r == nil {
		return nil, errors.New("read request: no input")
	}
	b, err := io.ReadAll(io.LimitReader(r, maxRequestBytes+1))
	if err != nil {
		return nil, fmt.Errorf("read request: %w", err)
	}
	if len(b) > maxRequestBytes {
		return nil, fmt.Errorf("read request: larger than %d bytes", maxRequestBytes)
	}
	return b, nil
}

// request is a provider request body reduced to the assessment's inputs.
type request struct {
	wire     window.Wire
	model    string
	system   string
	tools    []json.RawMessage
	messages []json.RawMessage
	thinking int
	output   int
}

// parseRequest reads a request body. The wire is the flag's, else the
// catalog's for the model, else detected from the body's members.
func parseRequest(body []byte, wire window.Wire, model string) (request, error) {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(body, &top); err != nil {
		return request{}, fmt.Errorf("request body is not a JSON object: %w", err)
	}
	req := request{model: model}
	if req.model == "" {
		_ = json.Unmarshal(top["model"], &req.model)
	}
	if wire == window.WireUnknown {
		if m, ok := window.DefaultCatalog().Lookup(req.model); ok {
			wire = m.Wire
		}
	}
	if wire == window.WireUnknown {
		wire = detectWire(top)
	}
	if wire == window.WireUnknown {
		return request{}, errors.New("cannot tell the request's shape: no messages, input or contents member (use --wire)")
	}
	req.wire = wire
	var err error
	switch wire {
	case window.WireAnthropic:
		err = req.anthropic(top)
	case window.WireOpenAI:
		err = req.openai(top)
	case window.WireGemini:
		err = req.gemini(top)
	}
	return req, err
}

func detectWire(top map[string]json.RawMessage) window.Wire {
	_, hasContents := top["contents"]
	_, hasInput := top["input"]
	msgs, hasMessages := top["messages"]
	switch {
	case hasContents:
		return window.WireGemini
	case hasInput && !hasMessages:
		return window.WireOpenAI
	case !hasMessages:
		return window.WireUnknown
	}
	for _, k := range []string{"system", "anthropic_version", "thinking", "stop_sequences"} {
		if _, ok := top[k]; ok {
			return window.WireAnthropic
		}
	}
	for _, k := range []string{"max_completion_tokens", "reasoning_effort", "response_format", "n"} {
		if _, ok := top[k]; ok {
			return window.WireOpenAI
		}
	}
	var list []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	}
	_ = json.Unmarshal(msgs, &list)
	for _, m := range list {
		switch m.Role {
		case "system", "developer", "tool", "function":
			return window.WireOpenAI
		}
		var blocks []struct {
			Type string `json:"type"`
		}
		_ = json.Unmarshal(m.Content, &blocks)
		for _, b := range blocks {
			switch b.Type {
			case "tool_use", "tool_result", "image", "thinking", "document":
				return window.WireAnthropic
			case "image_url", "input_audio", "refusal":
				return window.WireOpenAI
			}
		}
	}
	return window.WireAnthropic
}

// rawList decodes a JSON array member into its elements; absent is empty.
func rawList(top map[string]json.RawMessage, key string) ([]json.RawMessage, error) {
	v, ok := top[key]
	if !ok || string(v) == "null" {
		return nil, nil
	}
	var list []json.RawMessage
	if err := json.Unmarshal(v, &list); err != nil {
		return nil, fmt.Errorf("member %q is not an array: %w", key, err)
	}
	return list, nil
}

// intMember reads a non-negative integer member; absent is 0.
func intMember(top map[string]json.RawMessage, keys ...string) (int, error) {
	for _, k := range keys {
		v, ok := top[k]
		if !ok || string(v) == "null" {
			continue
		}
		var n int
		if err := json.Unmarshal(v, &n); err != nil || n < 0 {
			return 0, fmt.Errorf("member %q must be a non-negative integer", k)
		}
		return n, nil
	}
	return 0, nil
}

func object(v json.RawMessage) map[string]json.RawMessage {
	var m map[string]json.RawMessage
	_ = json.Unmarshal(v, &m)
	return m
}

// textOf returns a string member's value, or the text parts of an array of
// blocks/parts ({"text": ...}) joined by blank lines.
func textOf(v json.RawMessage) string {
	var s string
	if json.Unmarshal(v, &s) == nil {
		return s
	}
	var parts []struct {
		Text string `json:"text"`
	}
	if json.Unmarshal(v, &parts) != nil {
		var holder struct {
			Parts []struct {
				Text string `json:"text"`
			} `json:"parts"`
		}
		if json.Unmarshal(v, &holder) != nil {
			return string(v) // unknown shape: charge it as sent
		}
		parts = holder.Parts
	}
	texts := make([]string, 0, len(parts))
	for _, p := range parts {
		texts = append(texts, p.Text)
	}
	return strings.Join(texts, "\n\n")
}

func (r *request) anthropic(top map[string]json.RawMessage) error {
	var err error
	if v, ok := top["system"]; ok {
		r.system = textOf(v)
	}
	if r.tools, err = rawList(top, "tools"); err != nil {
		return err
	}
	if r.messages, err = rawList(top, "messages"); err != nil {
		return err
	}
	if r.output, err = intMember(top, "max_tokens"); err != nil {
		return err
	}
	if th := object(top["thinking"]); th != nil {
		if r.thinking, err = intMember(th, "budget_tokens"); err != nil {
			return err
		}
	}
	return nil
}

func (r *request) openai(top map[string]json.RawMessage) error {
	var err error
	if r.tools, err = rawList(top, "tools"); err != nil {
		return err
	}
	if v, ok := top["instructions"]; ok {
		r.system = textOf(v)
	}
	if v, ok := top["input"]; ok { // Responses API
		var s string
		if json.Unmarshal(v, &s) == nil {
			msg, _ := json.Marshal(map[string]string{"role": "user", "content": s})
			r.messages = []json.RawMessage{msg}
		} else if r.messages, err = rawList(top, "input"); err != nil {
			return err
		}
	} else if r.messages, err = rawList(top, "messages"); err != nil {
		return err
	}
	r.output, err = intMember(top, "max_output_tokens", "max_completion_tokens", "max_tokens")
	return err
}

func (r *request) gemini(top map[string]json.RawMessage) error {
	var err error
	for _, k := range []string{"systemInstruction", "system_instruction"} {
		if v, ok := top[k]; ok {
			r.system = textOf(v)
		}
	}
	if r.tools, err = rawList(top, "tools"); err != nil {
		return err
	}
	if r.messages, err = rawList(top, "contents"); err != nil {
		return err
	}
	for _, k := range []string{"generationConfig", "generation_config"} {
		gc := object(top[k])
		if gc == nil {
			continue
		}
		if r.output, err = intMember(gc, "maxOutputTokens", "max_output_tokens"); err != nil {
			return err
		}
		for _, tk := range []string{"thinkingConfig", "thinking_config"} {
			if tc := object(gc[tk]); tc != nil {
				// -1 asks for a dynamic budget: reserve nothing extra, the
				// output envelope already covers thinking on this wire.
				if v, ok := tc["thinkingBudget"]; ok && bytes.Equal(bytes.TrimSpace(v), []byte("-1")) {
					continue
				}
				if r.thinking, err = intMember(tc, "thinkingBudget", "thinking_budget"); err != nil {
					return err
				}
			}
		}
	}
	return nil
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
	if a.Documents > 0 {
		note += fmt.Sprintf(", %d documents (%d pages at %s each)", a.Documents, a.Pages, group(a.PageTokens))
	}
	row("history", a.Breakdown.History, note)
	row("framing", a.Breakdown.Framing, fmt.Sprintf("%d per message", window.FramingTokensPerMessage))
	row("skills", a.Breakdown.Skills, "")
	row("memory", a.Breakdown.Memory, "")
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
