package window_test

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/ctxkit/ctxkit/window"
)

func ExampleAssess() {
	screenshot := strings.Repeat("iVBORw0KGgo", 300_000) // 3.3 MB of base64
	msg, _ := json.Marshal(map[string]any{"role": "user", "content": []any{
		map[string]any{"type": "text", "text": "What is on this screen?"},
		map[string]any{"type": "image", "source": map[string]any{"type": "base64", "media_type": "image/png", "data": screenshot}},
	}})
	a := window.Assess(window.Inputs{
		Model:          "claude-sonnet-4-5",
		System:         "You are a careful assistant.",
		Messages:       []json.RawMessage{msg},
		ThinkingBudget: 8_000,
		OutputReserve:  16_000,
	})
	fmt.Println("images:", a.Images, "history:", a.Breakdown.History)
	fmt.Println("output reserve:", a.Reserves.Output, "thinking reserve:", a.Reserves.Thinking)
	fmt.Println("budget:", a.Budget(), "compact:", a.ShouldCompact())
	// Output:
	// images: 1 history: 1631
	// output reserve: 16000 thinking reserve: 0
	// budget: 174000 compact: false
}

func ExampleSession() {
	s := window.NewSession(&window.SessionOptions{Model: "claude-sonnet-4-5", ProjectID: "acme"})
	s.Update(func(in *window.Inputs) { in.System = "You are a careful assistant." })
	history := []json.RawMessage{json.RawMessage(`{"role":"user","content":"hello"}`)}
	first := s.Assess(history)

	// The provider billed 3x our estimate for that request: later
	// assessments are anchored on it, and the calibration factor moves 30%
	// of the way from 1 toward 3.
	_ = s.ObserveUsage(first.Used()*3, len(history))
	history = append(history, json.RawMessage(`{"role":"assistant","content":"hi! how can I help?"}`))
	next := s.Assess(history)
	fmt.Printf("calibration %.1f, anchored on %d reported tokens\n", next.Calibration, next.Anchor.Reported)

	err := s.HoldMemoryContribution(window.MemoryContribution{ProjectID: "other", Rendered: "notes"})
	fmt.Println(err)
	// Output:
	// calibration 1.6, anchored on 57 reported tokens
	// window: memory contribution for project "other" refused: session belongs to project "acme"
}

func ExampleLoadCatalog() {
	cat, err := window.LoadCatalog(strings.NewReader(`{"models": [
		{"name": "in-house", "match": ["acme-llm"], "wire": "openai", "window": 32768, "max_output": 4096, "tokenizer": "cl100k_base"}
	]}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	a := window.Assess(window.Inputs{Model: "acme-llm-7b", Catalog: cat})
	fmt.Println(a.Wire, a.Counter, a.Window, a.Budget())
	// Output: openai cl100k_base 32768 27034
}

// A base64 PDF is charged per page estimated from the document, not by the
// length of its base64.
func ExampleAssess_pdf() {
	var pdf strings.Builder
	pdf.WriteString("%PDF-1.4\n1 0 obj << /Type /Pages /Kids [2 0 R 3 0 R] /Count 2 >> endobj\n")
	pdf.WriteString("2 0 obj << /Type /Page /Parent 1 0 R >> endobj\n3 0 obj << /Type /Page /Parent 1 0 R >> endobj\n")
	pdf.WriteString(strings.Repeat("% padding\n", 100_000)) // about 1.3 MB of base64 in all
	msg, _ := json.Marshal(map[string]any{"role": "user", "content": []any{
		map[string]any{"type": "document", "source": map[string]any{
			"type": "base64", "media_type": "application/pdf", "data": base64.StdEncoding.EncodeToString([]byte(pdf.String())),
		}},
		map[string]any{"type": "text", "text": "Summarise this."},
	}})
	a := window.Assess(window.Inputs{Model: "claude-sonnet-4-5", Messages: []json.RawMessage{msg}})
	fmt.Println("message bytes > 1 MB:", len(msg) > 1<<20)
	fmt.Println("documents:", a.Documents, "pages:", a.Pages, "at", a.PageTokens, "each")
	fmt.Println("history:", a.Breakdown.History)
	// Output:
	// message bytes > 1 MB: true
	// documents: 1 pages: 2 at 3000 each
	// history: 6030
}

// A wire that does not fit the body is a *ShapeError naming the mismatch.
func ExampleInputsFromRequestBody_shapeError() {
	body := []byte(`{"model":"gpt-4o","messages":[{"role":"system","content":"Be brief."},{"role":"user","content":"hi"}]}`)
	_, err := window.InputsFromRequestBody(body, window.WireGemini, "")
	var se *window.ShapeError
	fmt.Println(errors.As(err, &se), se.Body)
	fmt.Println(err)
	in, _ := window.InputsFromRequestBody(body, window.WireUnknown, "")
	fmt.Printf("system %q, %d history message\n", in.System, len(in.Messages))
	// Output:
	// true openai
	// wire gemini does not match the body: it is an OpenAI Chat or Responses request (message 0 has role "system")
	// system "Be brief.", 1 history message
}
