package window

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/ctxkit/ctxkit/tokens"
)

// Wire is the API family a model is reached through. It decides how
// thinking is accounted and what a base64 image costs by default.
type Wire string

// Known wires. The zero value is WireUnknown.
const (
	WireUnknown   Wire = ""
	WireAnthropic Wire = "anthropic" // Anthropic Messages
	WireOpenAI    Wire = "openai"    // OpenAI Chat Completions and Responses
	WireGemini    Wire = "gemini"    // Gemini generateContent
)

// String returns the wire's JSON spelling, "unknown" for WireUnknown.
func (w Wire) String() string {
	if w == WireUnknown {
		return "unknown"
	}
	return string(w)
}

// MarshalText implements encoding.TextMarshaler with String's spelling.
func (w Wire) MarshalText() ([]byte, error) { return []byte(w.String()), nil }

// UnmarshalText implements encoding.TextUnmarshaler with ParseWire.
func (w *Wire) UnmarshalText(b []byte) error {
	v, err := ParseWire(string(b))
	if err != nil {
		return err
	}
	*w = v
	return nil
}

// ParseWire parses a wire name ("anthropic", "openai", "gemini", or
// "unknown"/"" for WireUnknown).
func ParseWire(s string) (Wire, error) {
	switch w := Wire(strings.ToLower(strings.TrimSpace(s))); w {
	case WireAnthropic, WireOpenAI, WireGemini:
		return w, nil
	case "unknown", "":
		return WireUnknown, nil
	}
	return WireUnknown, fmt.Errorf("window: unknown wire %q (want anthropic, openai or gemini)", s)
}

// thinking returns how the wire accounts thinking tokens against the
// output limit. Anthropic, OpenAI and Gemini all spend thinking from the
// request's output cap (Gemini's maxOutputTokens caps thoughts and answer
// together, so reserving thinking separately double-counts it); an unknown
// wire reserves both, erring toward earlier compaction.
func (w Wire) thinking() ThinkingAccounting {
	switch w {
	case WireAnthropic, WireOpenAI, WireGemini:
		return InsideOutput
	}
	return SeparateFromOutput
}

// ThinkingAccounting says whether thinking tokens spend from the output
// envelope or need a reserve of their own.
type ThinkingAccounting int

const (
	// SeparateFromOutput reserves thinking and output separately (unknown
	// wires: the conservative choice).
	SeparateFromOutput ThinkingAccounting = iota
	// InsideOutput reserves one envelope, max(output, thinking).
	InsideOutput
)

// String returns "separate_from_output" or "inside_output".
func (t ThinkingAccounting) String() string {
	if t == InsideOutput {
		return "inside_output"
	}
	return "separate_from_output"
}

// MarshalText implements encoding.TextMarshaler with String's spelling.
func (t ThinkingAccounting) MarshalText() ([]byte, error) { return []byte(t.String()), nil }

// UnmarshalText implements encoding.TextUnmarshaler with String's
// spelling, so an Assessment read back from JSON equals the one written.
func (t *ThinkingAccounting) UnmarshalText(b []byte) error {
	switch string(b) {
	case "inside_output":
		*t = InsideOutput
	case "separate_from_output":
		*t = SeparateFromOutput
	default:
		return fmt.Errorf("window: unknown thinking accounting %q (want inside_output or separate_from_output)", b)
	}
	return nil
}

// catalogModel is one catalog entry.
type catalogModel struct {
	// Name identifies the entry.
	Name string `json:"name"`
	// Match lists lower-case prefixes of model names this entry covers;
	// the longest matching prefix across the catalog wins.
	Match []string `json:"match"`
	// Wire is the API family.
	Wire Wire `json:"wire"`
	// Window is the context window in tokens (input plus output).
	Window int `json:"window"`
	// InputLimit, when positive, caps the input side on its own (OpenAI's
	// GPT-5 family: 272K input within a 400K window).
	InputLimit int `json:"input_limit,omitempty"`
	// MaxOutput is the largest output the model produces; it is the output
	// reserve when a request does not set one.
	MaxOutput int `json:"max_output"`
	// ImageTokens is the charge per image (inline or by reference) whose
	// size the request does not declare: the most one image can cost on
	// this model, as its provider publishes it; 0 means the wire's.
	ImageTokens int `json:"image_tokens,omitempty"`
	// ImageLowTokens is the charge per image the request declares small
	// (OpenAI "detail": "low"); 0 means ImageTokens.
	ImageLowTokens int `json:"image_low_tokens,omitempty"`
	// PageTokens is the charge per page of a PDF document; 0 means the
	// wire's.
	PageTokens int `json:"page_tokens,omitempty"`
	// MaxPages is the most pages one document may have on this model; a
	// document sent by URL or file id, whose pages cannot be counted, is
	// charged MaxPages pages. 0 means the wire's.
	MaxPages int `json:"max_pages,omitempty"`
	// Sources cites, per figure ("window", "image_tokens"...), the
	// provider's page the figure comes from.
	Sources map[string]string `json:"sources,omitempty"`
	// Tokenizer names a tokens counter ("o200k_base", "cl100k_base",
	// "safe"...); empty means tokens.ForModel of the model name.
	Tokenizer string `json:"tokenizer,omitempty"`
}

// wireRules are the charging rules of one wire: the figures every model
// reached through it uses unless its own entry sets them, and how reasoning
// carried in the history is charged. Each rule cites its source.
type wireRules struct {
	// Wire the rules apply to; WireUnknown ("unknown") for requests whose
	// wire is not known.
	Wire Wire `json:"wire"`
	// ImageTokens is the charge per image whose size the request does not
	// declare.
	ImageTokens int `json:"image_tokens"`
	// PageTokens is the charge per PDF page.
	PageTokens int `json:"page_tokens"`
	// MaxPages is the most pages one document may have; a document by URL
	// or file id is charged MaxPages pages.
	MaxPages int `json:"max_pages"`
	// PriorReasoning says what reasoning from turns before the last user
	// turn costs: "dropped" (the provider removes it from the context:
	// Anthropic thinking, OpenAI reasoning items) or "charged".
	PriorReasoning string `json:"prior_reasoning"`
	// OpaqueBytesPerToken converts the decoded bytes of an opaque reasoning
	// payload (a thinking signature, redacted thinking, encrypted
	// reasoning content, a thought signature) to tokens.
	OpaqueBytesPerToken int `json:"opaque_bytes_per_token"`
	// OpaqueOverheadBytes is subtracted from each opaque payload's decoded
	// bytes before the conversion (encryption framing that is not model
	// input).
	OpaqueOverheadBytes int `json:"opaque_overhead_bytes,omitempty"`
	// Sources cites, per rule, the page it comes from.
	Sources map[string]string `json:"sources"`
}

// dropsPriorReasoning reports whether reasoning before the last user turn
// is free.
func (r wireRules) dropsPriorReasoning() bool { return r.PriorReasoning == "dropped" }

// Catalog maps model names to their entries and wires to their charging
// rules. A Catalog is immutable and safe for concurrent use.
type Catalog struct {
	models []catalogModel
	wires  map[Wire]wireRules
}

// rules returns the charging rules of wire w (the unknown wire's for a wire
// the catalog does not list).
func (c *Catalog) rules(w Wire) wireRules {
	if r, ok := c.wires[w]; ok {
		return r
	}
	return c.wires[WireUnknown]
}

//go:embed catalog.json
var defaultCatalogJSON []byte

var defaultCatalog = sync.OnceValue(func() *Catalog {
	c, err := loadCatalog(bytes.NewReader(defaultCatalogJSON), nil)
	if err != nil {
		panic("window: embedded catalog.json is invalid: " + err.Error()) // caught by tests
	}
	return c
})

// DefaultCatalog returns the catalog embedded in the package
// (window/catalog.json).
func DefaultCatalog() *Catalog { return defaultCatalog() }

// DefaultCatalogJSON returns a copy of the embedded catalog's JSON, a
// starting point for a catalog of your own.
func DefaultCatalogJSON() []byte { return bytes.Clone(defaultCatalogJSON) }

// ErrInvalidCatalog is wrapped by every LoadCatalog validation error.
var ErrInvalidCatalog = errors.New("invalid catalog")

// LoadCatalog reads a catalog in the format of window/catalog.json:
// {"wires": [{"wire", "image_tokens", "page_tokens", "max_pages",
// "prior_reasoning", "opaque_bytes_per_token", "opaque_overhead_bytes",
// "sources"}], "models": [{"name", "match", "wire", "window", "max_output",
// "input_limit", "image_tokens", "image_low_tokens", "page_tokens",
// "max_pages", "tokenizer", "sources"}]}. A wire the catalog does not list
// keeps the embedded catalog's rules. Unknown members are rejected so a typo
// cannot silently fall back to a default; every such error wraps
// [ErrInvalidCatalog].
func LoadCatalog(r io.Reader) (*Catalog, error) {
	return loadCatalog(r, DefaultCatalog().wires)
}

type catalogDoc struct {
	Version int            `json:"version"`
	Note    string         `json:"note"`
	Wires   []wireRules    `json:"wires"`
	Models  []catalogModel `json:"models"`
}

// loadCatalog reads a catalog; wires the document does not list come from
// base (nil: every wire must be listed).
func loadCatalog(r io.Reader, base map[Wire]wireRules) (*Catalog, error) {
	var doc catalogDoc
	dec := json.NewDecoder(r)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&doc); err != nil {
		return nil, fmt.Errorf("window: load catalog: %w: %w", ErrInvalidCatalog, err)
	}
	wires, err := loadWires(doc.Wires, base)
	if err != nil {
		return nil, err
	}
	if err := checkModels(doc.Models); err != nil {
		return nil, err
	}
	return &Catalog{models: doc.Models, wires: wires}, nil
}

// loadWires validates the wire rules and fills the missing wires from base.
func loadWires(list []wireRules, base map[Wire]wireRules) (map[Wire]wireRules, error) {
	wires := make(map[Wire]wireRules, 4)
	for w, r := range base {
		wires[w] = r
	}
	for i, r := range list {
		bad := func(detail string) error {
			return fmt.Errorf("window: load catalog: %w: wire rules %d (%s): %s", ErrInvalidCatalog, i, r.Wire, detail)
		}
		switch {
		case r.ImageTokens <= 0 || r.ImageTokens > maxTokens:
			return nil, bad("image_tokens out of range")
		case r.PageTokens <= 0 || r.PageTokens > maxTokens:
			return nil, bad("page_tokens out of range")
		case r.MaxPages <= 0 || r.MaxPages > maxPDFPages:
			return nil, bad("max_pages out of range")
		case r.PriorReasoning != "dropped" && r.PriorReasoning != "charged":
			return nil, bad(`prior_reasoning must be "dropped" or "charged"`)
		case r.OpaqueBytesPerToken <= 0 || r.OpaqueBytesPerToken > 1<<20:
			return nil, bad("opaque_bytes_per_token out of range")
		case r.OpaqueOverheadBytes < 0 || r.OpaqueOverheadBytes > 1<<20:
			return nil, bad("opaque_overhead_bytes out of range")
		}
		if err := checkSources(r.Sources); err != nil {
			return nil, bad(err.Error())
		}
		wires[r.Wire] = r
	}
	for _, w := range []Wire{WireUnknown, WireAnthropic, WireOpenAI, WireGemini} {
		if _, ok := wires[w]; !ok {
			return nil, fmt.Errorf("window: load catalog: %w: no rules for wire %s", ErrInvalidCatalog, w)
		}
	}
	return wires, nil
}

// checkSources requires every cited source to be an https URL.
func checkSources(sources map[string]string) error {
	for k, u := range sources {
		if !strings.HasPrefix(u, "https://") {
			return fmt.Errorf("source %q is not an https URL: %q", k, u)
		}
	}
	return nil
}

func checkModels(models []catalogModel) error {
	for i, m := range models {
		bad := func(detail string) error {
			return fmt.Errorf("window: load catalog: %w: model %d (%q): %s", ErrInvalidCatalog, i, m.Name, detail)
		}
		switch {
		case m.Name == "":
			return bad("name is empty")
		case len(m.Match) == 0:
			return bad("match is empty")
		case m.Window <= 0 || m.Window > maxTokens:
			return bad("window out of range")
		}
		for _, f := range []struct {
			name     string
			v, limit int
		}{
			{"max_output", m.MaxOutput, maxTokens}, {"input_limit", m.InputLimit, maxTokens},
			{"image_tokens", m.ImageTokens, maxTokens}, {"page_tokens", m.PageTokens, maxTokens},
			{"image_low_tokens", m.ImageLowTokens, maxTokens}, {"max_pages", m.MaxPages, maxPDFPages},
		} {
			if f.v < 0 || f.v > f.limit {
				return bad(f.name + " out of range")
			}
		}
		if err := checkSources(m.Sources); err != nil {
			return bad(err.Error())
		}
		if m.Tokenizer != "" {
			if _, ok := tokens.ByName(m.Tokenizer); !ok {
				return bad("unknown tokenizer " + m.Tokenizer)
			}
		}
		for j, p := range m.Match {
			p = strings.ToLower(strings.TrimSpace(p))
			if p == "" || strings.ContainsRune(p, '/') {
				return bad(fmt.Sprintf("match prefix %q is empty or holds a provider path", p))
			}
			models[i].Match[j] = p
		}
	}
	return nil
}

// lookup finds the entry for a model name. A provider path
// ("anthropic/claude-sonnet-4-6", "openai-codex/gpt-5.2-codex") is
// ignored, case does not matter, and the longest matching prefix wins
// (earlier entries win ties).
func (c *Catalog) lookup(model string) (catalogModel, bool) {
	name := normalizeModel(model)
	best, bestLen := -1, 0
	for i, m := range c.models {
		for _, p := range m.Match {
			if len(p) > bestLen && strings.HasPrefix(name, p) {
				best, bestLen = i, len(p)
			}
		}
	}
	if best < 0 {
		return catalogModel{}, false
	}
	m := c.models[best]
	m.Match = append([]string(nil), m.Match...)
	return m, true
}

func normalizeModel(model string) string {
	m := strings.ToLower(strings.TrimSpace(model))
	if i := strings.LastIndexByte(m, '/'); i >= 0 {
		m = m[i+1:]
	}
	return m
}
