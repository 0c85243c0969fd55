// Package window decides, before each provider request, how much of the
// model's context window the request will use and whether to compact the
// conversation.
//
// [Assess] is the one calculation: it charges every segment that will be
// sent (system prompt, tool schemas, history with per-message framing,
// skills, memory), carves typed reserves out of the window (thinking, the
// next tool result, output, a safety margin) and returns an [Assessment]
// whose ShouldCompact is the single compaction trigger. [Session] holds the
// per-conversation state (system prompt, tools, memory contribution),
// caches per-message estimates, anchors on the usage the provider reports
// and guards against compaction loops; on the same segments it returns
// exactly what Assess returns.
//
// Model tokens are counted with a [tokens.Counter]: exact where the model's
// encoding is available offline (OpenAI families), [tokens.Safe] otherwise.
// The package does no I/O.
package window

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"

	"github.com/ctxkit/ctxkit/tokens"
)

// Fixed parameters of the calculation (the seed design's values).
const (
	// SafetyMarginPercent of the window is reserved on top of everything
	// else, for what an estimate made before sending cannot know: how the
	// provider renders roles, tools and media around the text, and how far
	// its tokenizer differs from the counter. 5% is the share Codex keeps
	// free of its window (it never fills more than 95%); the seed's 15%
	// stacked on a counter that already over-counts made compaction fire
	// with the content at a quarter to two thirds of the window.
	SafetyMarginPercent = 5
	// defaultOutputCap bounds the output reserve taken from the catalog
	// when the request sets none: a reply is rarely longer, and reserving a
	// model's whole maximum output (100K–128K on reasoning models) would
	// hold half the window back. Claude Code and opencode cap their
	// reserve at the same 20,000. A request's own max_tokens is always
	// reserved in full, since the provider reserves it too.
	defaultOutputCap = 20_000
	// MinCompactionMessages is the shortest history for which compaction
	// is advised: a freshly compacted conversation (summary plus
	// acknowledgement) sits below it.
	MinCompactionMessages = 4
	// FramingTokensPerMessage is charged per message for role tags and
	// message boundaries.
	FramingTokensPerMessage = 4
	// toolResultBytesPerToken converts the next tool result's byte cap to
	// a token reserve, rounding up.
	toolResultBytesPerToken = 3
	// DefaultWindow is the window assumed, with a warning, for a model
	// missing from the catalog when Inputs.Window is 0: the smallest window
	// of the current families of the three wires (GPT-4o's), so that an
	// unknown model compacts early rather than overflows.
	DefaultWindow = 128_000
	// DefaultMaxOutput is the output reserve assumed for a model missing
	// from the catalog when Inputs.OutputReserve is 0.
	DefaultMaxOutput = 16_384
)

// maxTokens bounds every token figure, so sums of a few dozen of them
// cannot overflow an int on any platform Go supports well.
const maxTokens = 1 << 40

// Inputs is everything the calculation needs about the next request.
// Callers pass the segments they will actually send.
type Inputs struct {
	// Model the request targets; selects the catalog entry and counter.
	Model string
	// Window is the effective context window in tokens; 0 means the
	// catalog's (DefaultWindow for an unknown model). An explicit window
	// replaces the catalog's input limit too. A negative window is treated
	// as 0 tokens: nothing fits.
	Window int
	// System is the effective system prompt.
	System string
	// Tools are the exposed tool schemas, one JSON value each.
	Tools []json.RawMessage
	// Messages is the history exactly as it will be sent: one JSON
	// message each, in the shape of the Anthropic Messages, OpenAI
	// Chat/Responses or Gemini generateContent API.
	Messages []json.RawMessage
	// Skills and Memory are bodies loaded into the request outside the
	// system prompt and history.
	Skills []string
	// Memory holds the memory bodies, one string each (see Skills).
	Memory []string
	// ThinkingBudget is the requested thinking budget in tokens.
	ThinkingBudget int
	// NextToolResultBytes caps the next tool result; it is reserved at
	// toolResultBytesPerToken bytes per token.
	NextToolResultBytes int
	// OutputReserve is the requested output (max_tokens); 0 means the
	// model's maximum output in the catalog, capped at 20,000
	// (defaultOutputCap); DefaultMaxOutput, with a warning, if the model is
	// unknown.
	OutputReserve int

	// Catalog resolves the model; nil means DefaultCatalog().
	Catalog *Catalog
	// Counter counts model tokens; nil means the catalog entry's
	// tokenizer, else tokens.ForModel(Model), made anew for the call.
	// Pass one (or use a Session) to keep an exact counter's cache across
	// calls.
	Counter tokens.Counter
	// Wire overrides the catalog's wire when set.
	Wire Wire
	// ImageTokens overrides the charge per image (inline or by reference)
	// when positive; otherwise the catalog entry's image_tokens, else the
	// wire's.
	ImageTokens int
	// PageTokens overrides the charge per PDF page when positive;
	// otherwise the catalog entry's page_tokens, else the wire's.
	PageTokens int
}

// Breakdown is the typed usage per request segment, in tokens.
type Breakdown struct {
	// System is the system prompt's usage.
	System int `json:"system"`
	// ToolSchemas is the usage of the exposed tool schemas.
	ToolSchemas int `json:"tool_schemas"`
	// History is the messages' content usage, images included at their
	// flat charge.
	History int `json:"history"`
	// Framing is the per-message charge for role tags and boundaries,
	// FramingTokensPerMessage for each message.
	Framing int `json:"framing"`
	// Skills is the usage of the loaded skill bodies.
	Skills int `json:"skills"`
	// Memory is the usage of the loaded memory bodies.
	Memory int `json:"memory"`
}

// Total sums the lanes.
func (b Breakdown) Total() int {
	return b.System + b.ToolSchemas + b.History + b.Framing + b.Skills + b.Memory
}

// Reserves are carved out of the window before any context is admitted.
type Reserves struct {
	// thinking is reserved in addition to Output; 0 on wires where
	// thinking spends from the output envelope.
	Thinking int `json:"thinking"`
	// ToolResult is the next tool result's byte cap in tokens.
	ToolResult int `json:"tool_result"`
	// Output is the output envelope: max(output, thinking) on
	// InsideOutput wires.
	Output int `json:"output"`
	// SafetyMargin is SafetyMarginPercent of the window.
	SafetyMargin int `json:"safety_margin"`
	// Accounting is the thinking semantics the split was computed under.
	Accounting ThinkingAccounting `json:"thinking_accounting"`
}

// Total sums the reserves.
func (r Reserves) Total() int { return r.Thinking + r.ToolResult + r.Output + r.SafetyMargin }

// Anchor records that usage was anchored on a figure the provider
// reported (see Session.ObserveUsage).
type Anchor struct {
	// Reported is what the provider billed as input for the request made of
	// the first Messages messages.
	Reported int `json:"reported"`
	// Messages is how many messages that request held.
	Messages int `json:"messages"`
	// Estimated is this assessment's estimate of that same request; Used
	// replaces it by Reported.
	Estimated int `json:"estimated"`
}

// CompactionCheck reports, on the first assessment after the history was
// rewritten following compaction advice, whether the compaction reduced
// the estimate.
type CompactionCheck struct {
	// Before is the usage, in tokens, when compaction was advised.
	Before int `json:"before"`
	// After is the usage, in tokens, of this assessment.
	After int `json:"after"`
	// Reduced is true when After is below Before; when false, a Session
	// withholds compaction advice until the history grows.
	Reduced bool `json:"reduced"`
}

// Assessment is one request-aware budget assessment: pure data, read by
// every frontend, never recomputed by them.
type Assessment struct {
	// Model is the model name the assessment was made for, as given.
	Model string `json:"model"`
	// Wire is the API family the request is shaped for.
	Wire Wire `json:"wire"`
	// Counter names the token counter that produced the figures.
	Counter string `json:"counter"`
	// Window is the effective context window, in tokens.
	Window int `json:"window"`
	// InputLimit is the model's separate cap on input tokens when the
	// catalog gives one and no explicit window was set; 0 (omitted) when
	// there is none.
	InputLimit int `json:"input_limit,omitempty"`
	// Breakdown is the usage per request segment, in tokens.
	Breakdown Breakdown `json:"breakdown"`
	// Reserves are the tokens set aside before any context is admitted.
	Reserves Reserves `json:"reserves"`
	// HistoryMessages is the number of messages in the history.
	HistoryMessages int `json:"history_messages"`
	// Images is the number of images (inline or by reference) charged at
	// ImageTokens each (inside the history lane).
	Images int `json:"images"`
	// ImageTokens is the charge per image, in tokens.
	ImageTokens int `json:"image_tokens"`
	// LowDetailImages is the number of images the request declared small
	// (OpenAI detail "low"), charged at ImageLowTokens each.
	LowDetailImages int `json:"low_detail_images,omitempty"`
	// ImageLowTokens is the charge per image declared small.
	ImageLowTokens int `json:"image_low_tokens,omitempty"`
	// Documents is the number of PDF documents, charged Pages in total at
	// PageTokens each (inside the history lane).
	Documents int `json:"documents,omitempty"`
	// Pages is the number of pages charged across Documents: estimated
	// from the bytes of a base64 document, MaxPages for one by reference.
	Pages int `json:"pages,omitempty"`
	// PageTokens is the charge per PDF page.
	PageTokens int `json:"page_tokens"`
	// MaxPages is the pages charged for a document sent by URL or file id.
	MaxPages int `json:"max_pages"`
	// References is how many of the images and documents were sent by URL
	// or file id (charged at the per-item figures, their size unknown).
	References int `json:"references,omitempty"`
	// ReasoningDropped is the reasoning, in tokens before calibration,
	// carried in turns before the last user turn that the wire removes from
	// the context and that is therefore not charged.
	ReasoningDropped int `json:"reasoning_dropped,omitempty"`
	// Calibration is the factor the lanes were scaled by: 1 for Assess; a
	// Session moves it toward reported ÷ estimated (see
	// Session.ObserveUsage).
	Calibration float64 `json:"calibration"`
	// Anchor is set when usage is anchored on a reported figure.
	Anchor *Anchor `json:"anchor,omitempty"`
	// Compaction is set on the first assessment after a compaction.
	Compaction *CompactionCheck `json:"compaction,omitempty"`
	// CompactionSuppressed is set when compaction would be advised but a
	// compaction that did not reduce the estimate latched the advice off
	// until the history grows.
	CompactionSuppressed bool `json:"compaction_suppressed,omitempty"`
	// Warnings lists inputs that were clamped or charged as text.
	Warnings []string `json:"warnings,omitempty"`
}

// Used is the total usage across every request segment; when anchored, the
// estimate of the anchored request is replaced by the reported figure.
func (a Assessment) Used() int {
	used := a.Breakdown.Total()
	if a.Anchor != nil {
		used = used - a.Anchor.Estimated + a.Anchor.Reported
	}
	return max(used, 0)
}

// Budget is what the context may occupy after the reserves: the window
// minus the reserves, floored at 0, and within InputLimit minus the
// non-output reserves when the model has an input limit.
func (a Assessment) Budget() int {
	b := max(a.Window-a.Reserves.Total(), 0)
	if a.InputLimit > 0 {
		in := max(a.InputLimit-a.Reserves.Thinking-a.Reserves.ToolResult-a.Reserves.SafetyMargin, 0)
		b = min(b, in)
	}
	return b
}

// Remaining is the capacity left before the trigger fires, floored at 0.
func (a Assessment) Remaining() int { return max(a.Budget()-a.Used(), 0) }

// ShouldCompact is the single compaction trigger: usage reached the budget
// and the history is long enough for a summary to fold, unless a
// compaction that did not help latched the advice off.
func (a Assessment) ShouldCompact() bool {
	return a.overBudget() && !a.CompactionSuppressed
}

func (a Assessment) overBudget() bool {
	return a.HistoryMessages >= MinCompactionMessages && a.Used() >= a.Budget()
}

// MarshalJSON adds the derived figures (used, budget, remaining,
// should_compact) to the stored fields.
func (a Assessment) MarshalJSON() ([]byte, error) {
	type plain Assessment
	return json.Marshal(struct {
		plain
		Used          int  `json:"used"`
		Budget        int  `json:"budget"`
		Remaining     int  `json:"remaining"`
		ShouldCompact bool `json:"should_compact"`
	}{plain(a), a.Used(), a.Budget(), a.Remaining(), a.ShouldCompact()})
}

// Assess computes the request-aware assessment. It is THE calculation:
// Session.Assess routes through the same code.
func Assess(in Inputs) Assessment {
	r := resolve(&in)
	costs := make([]messageCost, len(in.Messages))
	for i, m := range in.Messages {
		costs[i] = estimateMessage(r.counter, m, r.charges())
	}
	h := r.totals(len(costs), func(i int) *messageCost { return &costs[i] })
	lanes := r.staticLanes(&in)
	return r.finish(&in, lanes, h, 1)
}

// historyTotals sums per-message costs.
type historyTotals struct {
	tokens, messages        int
	system                  int // OpenAI system and developer messages, framing included
	images, lowImages, refs int
	documents, pages        int
	reasoningDropped        int
	invalid                 []int // indices of messages charged as text
	unpriced                []int // indices of messages with media by reference charged as text
}

// totals sums the costs of the n messages of a history (cost(i) is the
// i-th; a function, so that a Session sums its cache without copying it).
// On a wire that drops earlier reasoning, the reasoning of every message
// before the last user turn is not charged.
func (r *resolved) totals(n int, cost func(int) *messageCost) historyTotals {
	lastTurn := -1
	if r.rules.dropsPriorReasoning() {
		for i := n - 1; i >= 0; i-- {
			if cost(i).userTurn {
				lastTurn = i
				break
			}
		}
	}
	var h historyTotals
	for i := range n {
		c := cost(i)
		n := c.tokens
		if i < lastTurn {
			n -= c.reasoning
			h.reasoningDropped = satAdd(h.reasoningDropped, c.reasoning)
		}
		if c.system && r.wire == WireOpenAI {
			// The wire's system prompt: the system lane, not the history.
			h.system = satAdd(h.system, satAdd(n, FramingTokensPerMessage))
		} else {
			h.tokens = satAdd(h.tokens, n)
			h.messages++
		}
		h.images = satAdd(h.images, c.images)
		h.lowImages = satAdd(h.lowImages, c.lowImages)
		h.refs = satAdd(h.refs, c.refs)
		h.documents = satAdd(h.documents, c.documents)
		h.pages = satAdd(h.pages, c.pages)
		if c.invalid {
			h.invalid = append(h.invalid, i)
		}
		if c.unpriced > 0 {
			h.unpriced = append(h.unpriced, i)
		}
	}
	return h
}

// resolved is what the inputs resolve to once the catalog is consulted.
type resolved struct {
	model    catalogModel
	known    bool
	wire     Wire
	rules    wireRules
	counter  tokens.Counter
	ch       charges
	window   int
	output   int
	warnings []string
}

func resolve(in *Inputs) *resolved {
	cat := in.Catalog
	if cat == nil {
		cat = DefaultCatalog()
	}
	r := &resolved{}
	r.model, r.known = cat.lookup(in.Model)
	r.wire = r.model.Wire
	if in.Wire != WireUnknown {
		r.wire = in.Wire
	}
	r.rules = cat.rules(r.wire)
	r.counter = in.Counter
	if r.counter == nil {
		r.counter = counterFor(r.model, r.known)
		if r.counter == nil {
			r.counter = tokens.ForModel(in.Model)
		}
	}
	r.ch = r.chargesFor(in)
	r.window = r.windowFor(in)
	r.output = r.clamp("output reserve", in.OutputReserve)
	if r.output == 0 {
		r.output = DefaultMaxOutput
		if r.known {
			r.output = min(r.model.MaxOutput, defaultOutputCap)
		}
	}
	if !r.known {
		r.warnUnknown(in)
	}
	return r
}

// chargesFor resolves the per-item figures: the request's overrides, else
// the model's entry, else the wire's rules.
func (r *resolved) chargesFor(in *Inputs) charges {
	pick := func(override, model, wire int) int {
		switch {
		case override > 0:
			return min(override, maxTokens)
		case model > 0:
			return model
		}
		return wire
	}
	ch := charges{
		image:          pick(in.ImageTokens, r.model.ImageTokens, r.rules.ImageTokens),
		page:           pick(in.PageTokens, r.model.PageTokens, r.rules.PageTokens),
		maxPages:       pick(0, r.model.MaxPages, r.rules.MaxPages),
		opaquePerToken: r.rules.OpaqueBytesPerToken,
		opaqueOverhead: r.rules.OpaqueOverheadBytes,
	}
	ch.imageLow = ch.image
	if in.ImageTokens <= 0 && r.model.ImageLowTokens > 0 {
		ch.imageLow = r.model.ImageLowTokens
	}
	return ch
}

func (r *resolved) windowFor(in *Inputs) int {
	switch {
	case in.Window < 0:
		r.warnf("window %d is negative: treated as 0", in.Window)
		return 0
	case in.Window > maxTokens:
		r.warnf("window %d is absurd: clamped to %d", in.Window, maxTokens)
		return maxTokens
	case in.Window > 0:
		return in.Window
	case r.known:
		return r.model.Window
	}
	return DefaultWindow
}

// warnUnknown says which defaults an unknown model was assessed with.
func (r *resolved) warnUnknown(in *Inputs) {
	name := in.Model
	if strings.TrimSpace(name) == "" {
		name = "(none)"
	}
	var assumed []string
	if in.Window == 0 {
		assumed = append(assumed, fmt.Sprintf("window %d (window.DefaultWindow)", DefaultWindow))
	}
	if in.OutputReserve == 0 {
		assumed = append(assumed, fmt.Sprintf("output reserve %d (window.DefaultMaxOutput)", DefaultMaxOutput))
	}
	if len(assumed) == 0 {
		r.warnf("model %s is not in the catalog: charged with the %s wire's rules", name, r.wire)
		return
	}
	r.warnf("model %s is not in the catalog: assumed %s", name, strings.Join(assumed, " and "))
}

// counterFor returns the counter a catalog entry names, or nil.
func counterFor(m catalogModel, known bool) tokens.Counter {
	if known && m.Tokenizer != "" {
		if c, ok := tokens.ByName(m.Tokenizer); ok {
			return c
		}
	}
	return nil
}

func (r *resolved) warnf(format string, args ...any) {
	r.warnings = append(r.warnings, fmt.Sprintf(format, args...))
}

// clamp brings a caller-supplied figure into [0, maxTokens], with a
// warning when it had to.
func (r *resolved) clamp(what string, v int) int {
	switch {
	case v < 0:
		r.warnf("%s %d is negative: treated as 0", what, v)
		return 0
	case v > maxTokens:
		r.warnf("%s %d is absurd: clamped to %d", what, v, maxTokens)
		return maxTokens
	}
	return v
}

// staticLanes counts the lanes that do not depend on the history.
func (r *resolved) staticLanes(in *Inputs) Breakdown {
	var b Breakdown
	b.System = r.counter.Count(in.System)
	for i, t := range in.Tools {
		n, invalid := countJSON(r.counter, t)
		if invalid {
			r.warnf("tool schema %d is not JSON: charged as text", i)
		}
		b.ToolSchemas = satAdd(b.ToolSchemas, n)
	}
	for _, s := range in.Skills {
		b.Skills = satAdd(b.Skills, r.counter.Count(s))
	}
	for _, m := range in.Memory {
		b.Memory = satAdd(b.Memory, r.counter.Count(m))
	}
	return b
}

// finish completes an assessment from the static lanes and the history
// totals, scaling the lanes by factor.
func (r *resolved) finish(in *Inputs, lanes Breakdown, h historyTotals, factor float64) Assessment {
	for _, i := range h.invalid {
		r.warnf("message %d is not JSON: charged as text", i)
	}
	for _, i := range h.unpriced {
		r.warnf("message %d: media by reference of a type with no per-item figure (video, audio): charged as its reference text", i)
	}
	lanes.System = satAdd(lanes.System, h.system)
	lanes.History = h.tokens
	lanes.Framing = satMul(FramingTokensPerMessage, h.messages)
	if factor != 1 {
		lanes = lanes.scaled(factor)
	}
	a := Assessment{
		Model:            in.Model,
		Wire:             r.wire,
		Counter:          r.counter.Name(),
		Window:           r.window,
		Breakdown:        lanes,
		Reserves:         r.reserves(in),
		HistoryMessages:  h.messages,
		Images:           h.images,
		ImageTokens:      r.ch.image,
		LowDetailImages:  h.lowImages,
		Documents:        h.documents,
		Pages:            h.pages,
		PageTokens:       r.ch.page,
		MaxPages:         r.ch.maxPages,
		References:       h.refs,
		ReasoningDropped: h.reasoningDropped,
		Calibration:      factor,
		Warnings:         r.warnings,
	}
	if h.lowImages > 0 {
		a.ImageLowTokens = r.ch.imageLow
	}
	if r.known && r.model.InputLimit > 0 && in.Window <= 0 {
		a.InputLimit = r.model.InputLimit
	}
	return a
}

// reserves carves the typed reserves out of the window.
func (r *resolved) reserves(in *Inputs) Reserves {
	thinking := r.clamp("thinking budget", in.ThinkingBudget)
	toolBytes := r.clamp("next tool result bytes", in.NextToolResultBytes)
	acc := r.wire.thinking()
	res := Reserves{
		ToolResult:   toolBytes/toolResultBytesPerToken + boolInt(toolBytes%toolResultBytesPerToken != 0),
		SafetyMargin: r.window * SafetyMarginPercent / 100,
		Accounting:   acc,
	}
	if acc == InsideOutput {
		res.Output = max(r.output, thinking)
	} else {
		res.Thinking, res.Output = thinking, r.output
	}
	return res
}

func (b Breakdown) scaled(f float64) Breakdown {
	s := func(v int) int { return scale(v, f) }
	return Breakdown{s(b.System), s(b.ToolSchemas), s(b.History), s(b.Framing), s(b.Skills), s(b.Memory)}
}

// scale returns ceil(v·f), saturating at maxTokens.
func scale(v int, f float64) int {
	x := math.Ceil(float64(v) * f)
	if x >= maxTokens || math.IsNaN(x) {
		return maxTokens
	}
	return int(x)
}

// satAdd adds two non-negative figures, saturating at maxTokens.
func satAdd(a, b int) int {
	if a >= maxTokens-b {
		return maxTokens
	}
	return a + b
}

// satMul multiplies two non-negative figures, saturating at maxTokens.
func satMul(a, b int) int {
	if a == 0 || b == 0 {
		return 0
	}
	if a > maxTokens/b {
		return maxTokens
	}
	return a * b
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// charges are the per-item figures for media and opaque reasoning.
func (r *resolved) charges() charges { return r.ch }
