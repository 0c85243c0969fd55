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

// Thinking returns how the wire accounts thinking tokens against the
// output limit. Anthropic, OpenAI and Gemini all spend thinking from the
// request's output cap (Gemini's maxOutputTokens caps thoughts and answer
// together, so reserving thinking separately double-counts it); an unknown
// wire reserves both, erring toward earlier compaction.
func (w Wire) Thinking() ThinkingAccounting {
	switch w {
	case WireAnthropic, WireOpenAI, WireGemini:
		return InsideOutput
	}
	return SeparateFromOutput
}

// DefaultImageTokens is the flat charge for one base64 image on the wire
// when the catalog does not set one: 1,600 on Anthropic (w·h/750 after the
// provider's downscale to about 1.15 MP), 1,844 on OpenAI (the
// 7,373-byte estimate Codex uses), 3,000 on Gemini and unknown wires
// (gemini-cli's ceiling for images up to 4K).
func (w Wire) DefaultImageTokens() int {
	switch w {
	case WireAnthropic:
		return 1600
	case WireOpenAI:
		return 1844
	}
	return 3000
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

// Model is one catalog entry.
type Model struct {
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
	// ImageTokens is the flat charge per base64 image; 0 means the wire's
	// DefaultImageTokens.
	ImageTokens int `json:"image_tokens,omitempty"`
	// PageTokens is the charge per estimated page of a base64 PDF
	// document; 0 means DefaultPageTokens.
	PageTokens int `json:"page_tokens,omitempty"`
	// Tokenizer names a tokens counter ("o200k_base", "cl100k_base",
	// "safe"...); empty means tokens.ForModel of the model name.
	Tokenizer string `json:"tokenizer,omitempty"`
}

// Catalog maps model names to [Model] entries. A Catalog is immutable and
// safe for concurrent use.
type Catalog struct {
	models []Model
}

//go:embed catalog.json
var defaultCatalogJSON []byte

var defaultCatalog = sync.OnceValue(func() *Catalog {
	c, err := LoadCatalog(bytes.NewReader(defaultCatalogJSON))
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
// {"models": [{"name", "match", "wire", "window", "max_output",
// "input_limit", "image_tokens", "page_tokens", "tokenizer"}]}. Unknown
// members are rejected so a typo cannot silently fall back to a default.
func LoadCatalog(r io.Reader) (*Catalog, error) {
	var doc struct {
		Version int     `json:"version"`
		Note    string  `json:"note"`
		Models  []Model `json:"models"`
	}
	dec := json.NewDecoder(r)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&doc); err != nil {
		return nil, fmt.Errorf("window: load catalog: %w: %w", ErrInvalidCatalog, err)
	}
	for i, m := range doc.Models {
		bad := func(detail string) error {
			return fmt.Errorf("window: load catalog: %w: model %d (%q): %s", ErrInvalidCatalog, i, m.Name, detail)
		}
		switch {
		case m.Name == "":
			return nil, bad("name is empty")
		case len(m.Match) == 0:
			return nil, bad("match is empty")
		case m.Window <= 0 || m.Window > maxTokens:
			return nil, bad("window out of range")
		case m.MaxOutput < 0 || m.MaxOutput > maxTokens:
			return nil, bad("max_output out of range")
		case m.InputLimit < 0 || m.InputLimit > maxTokens:
			return nil, bad("input_limit out of range")
		case m.ImageTokens < 0 || m.ImageTokens > maxTokens:
			return nil, bad("image_tokens out of range")
		case m.PageTokens < 0 || m.PageTokens > maxTokens:
			return nil, bad("page_tokens out of range")
		}
		if m.Tokenizer != "" {
			if _, ok := tokens.ByName(m.Tokenizer); !ok {
				return nil, bad("unknown tokenizer " + m.Tokenizer)
			}
		}
		for j, p := range m.Match {
			p = strings.ToLower(strings.TrimSpace(p))
			if p == "" || strings.ContainsRune(p, '/') {
				return nil, bad(fmt.Sprintf("match prefix %q is empty or holds a provider path", p))
			}
			doc.Models[i].Match[j] = p
		}
	}
	return &Catalog{models: doc.Models}, nil
}

// Models returns a copy of the catalog's entries.
func (c *Catalog) Models() []Model {
	out := make([]Model, len(c.models))
	for i, m := range c.models {
		m.Match = append([]string(nil), m.Match...)
		out[i] = m
	}
	return out
}

// Lookup finds the entry for a model name. A provider path
// ("anthropic/claude-sonnet-4-6", "openai-codex/gpt-5.2-codex") is
// ignored, case does not matter, and the longest matching prefix wins
// (earlier entries win ties).
func (c *Catalog) Lookup(model string) (Model, bool) {
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
		return Model{}, false
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
