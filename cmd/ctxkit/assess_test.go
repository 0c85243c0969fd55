package main

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctxkit/ctxkit/window"
)

// screenshotRequest is an Anthropic Messages request carrying a 3 MB
// base64 PNG screenshot.
func screenshotRequest(t *testing.T) []byte {
	t.Helper()
	// Random-looking image bytes: a 64 KiB random block repeated (cheap to
	// build under the race detector; the payload is opaque either way).
	r := rand.New(rand.NewPCG(3, 3))
	block := make([]byte, 64<<10)
	for i := range block {
		block[i] = byte(r.UintN(256))
	}
	png := bytes.Repeat(block, 3_000_000/4*3/len(block)+1)[:3_000_000/4*3]
	copy(png, "\x89PNG\r\n\x1a\n")
	req := map[string]any{
		"model":      "claude-sonnet-4-6",
		"max_tokens": 8192,
		"system":     "You are a careful assistant.",
		"messages": []any{
			map[string]any{"role": "user", "content": []any{
				map[string]any{"type": "text", "text": "What does this screenshot show?"},
				map[string]any{"type": "image", "source": map[string]any{
					"type": "base64", "media_type": "image/png", "data": base64.StdEncoding.EncodeToString(png),
				}},
			}},
		},
	}
	b, err := json.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) < 3_000_000 {
		t.Fatalf("request is only %d bytes", len(b))
	}
	return b
}

// Acceptance: a 3 MB base64 screenshot is charged about 1,600 tokens, not
// a million.
func TestAssessChargesAScreenshotAbout1600Tokens(t *testing.T) {
	path := filepath.Join(t.TempDir(), "request.json")
	if err := os.WriteFile(path, screenshotRequest(t), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runCLI(t, "", "assess", "--format", "json", path)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var got struct {
		Wire      string `json:"wire"`
		Images    int    `json:"images"`
		Breakdown struct {
			History int `json:"history"`
			System  int `json:"system"`
		} `json:"breakdown"`
		Used int `json:"used"`
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if got.Wire != "anthropic" || got.Images != 1 || got.Breakdown.System == 0 {
		t.Fatalf("%+v", got)
	}
	if got.Breakdown.History < 1600 || got.Breakdown.History > 1700 || got.Used > 1800 {
		t.Fatalf("screenshot charged %d history tokens, used %d; want about 1,600", got.Breakdown.History, got.Used)
	}
	code, text, _ := runCLI(t, "", "assess", path)
	if code != exitOK || !strings.Contains(text, "1 images at 1,600 each") || !strings.Contains(text, "decision: fits") {
		t.Fatalf("text output:\n%s", text)
	}
}

func TestAssessDetectsEachWire(t *testing.T) {
	for name, tc := range map[string]struct {
		body, args                 string
		wire, counter              string
		output, thinking, messages int
	}{
		"openai chat": {`{"model":"gpt-4o","max_completion_tokens":1000,"messages":[{"role":"system","content":"be brief"},{"role":"user","content":"hi"}]}`, "",
			"openai", "o200k_base", 1000, 0, 1}, // the system message is charged to the system lane
		"openai responses": {`{"model":"gpt-5","instructions":"be brief","input":"hello there","max_output_tokens":2000}`, "",
			"openai", "o200k_base", 2000, 0, 1},
		"gemini": {`{"systemInstruction":{"parts":[{"text":"be brief"}]},"contents":[{"role":"user","parts":[{"text":"hi"}]}],"generationConfig":{"maxOutputTokens":3000,"thinkingConfig":{"thinkingBudget":5000}}}`, "--model=gemini-2.5-pro",
			"gemini", "safe", 5000, 0, 1},
		"anthropic by shape": {`{"system":"x","max_tokens":100,"thinking":{"type":"enabled","budget_tokens":2048},"messages":[{"role":"user","content":"hi"}]}`, "",
			"anthropic", "safe", 2048, 0, 1},
		"unknown model, shape only": {`{"model":"mystery-1","messages":[{"role":"tool","content":"x"}],"max_tokens":10}`, "",
			"openai", "safe", 10, 0, 1},
	} {
		args := []string{"assess", "--format=json"}
		if tc.args != "" {
			args = append(args, tc.args)
		}
		code, out, errOut := runCLI(t, tc.body, args...)
		if code != exitOK {
			t.Errorf("%s: exit %d: %s", name, code, errOut)
			continue
		}
		var got struct {
			Wire     string `json:"wire"`
			Counter  string `json:"counter"`
			Messages int    `json:"history_messages"`
			Reserves struct {
				Output   int `json:"output"`
				Thinking int `json:"thinking"`
			} `json:"reserves"`
			Breakdown struct {
				System int `json:"system"`
			} `json:"breakdown"`
		}
		if err := json.Unmarshal([]byte(out), &got); err != nil {
			t.Fatal(err)
		}
		if got.Wire != tc.wire || got.Counter != tc.counter || got.Reserves.Output != tc.output ||
			got.Reserves.Thinking != tc.thinking || got.Messages != tc.messages {
			t.Errorf("%s: %+v", name, got)
		}
	}
}

func TestAssessFlagsAndBadInput(t *testing.T) {
	body := `{"model":"claude-sonnet-4-6","max_tokens":100,"messages":[{"role":"user","content":"a"},{"role":"assistant","content":"b"},{"role":"user","content":"c"},{"role":"assistant","content":"d"}]}`
	// A window smaller than the reserves: budget 0, compaction advised.
	code, out, _ := runCLI(t, body, "assess", "--window", "50")
	if code != exitOK || !strings.Contains(out, "decision: compact") || !strings.Contains(out, "  budget                   0") {
		t.Fatalf("exit %d\n%s", code, out)
	}
	// Flags after FILE, as the usage line writes them, mean the same.
	path := filepath.Join(t.TempDir(), "request.json")
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	code, after, errOut := runCLI(t, "", "assess", path, "--window", "50", "--format", "json")
	_, before, _ := runCLI(t, "", "assess", "--window", "50", "--format", "json", path)
	if code != exitOK || after != before || !strings.Contains(after, `"window": 50`) {
		t.Fatalf("flags after FILE: exit %d, stderr %q\nafter:\n%s\nbefore:\n%s", code, errOut, after, before)
	}
	for _, tc := range []struct {
		stdin string
		args  []string
	}{
		{"not json", []string{"assess"}},
		{body, []string{"assess", "-", "--format", "yaml"}},
		{body, []string{"assess", "-", "--bogus"}},
		{`[1,2]`, []string{"assess"}},
		{`{"model":"x"}`, []string{"assess"}},
		{body, []string{"assess", "--format", "yaml"}},
		{body, []string{"assess", "--wire", "pigeon"}},
		{body, []string{"assess", "--window", "-3"}},
		{body, []string{"assess", "a", "b"}},
		{body, []string{"assess", "/nonexistent/request.json"}},
		{`{"messages":"nope","system":"x"}`, []string{"assess"}},
		{`{"messages":[],"max_tokens":-5,"system":"x"}`, []string{"assess"}},
	} {
		if code, _, errOut := runCLI(t, tc.stdin, tc.args...); code != exitUsage || errOut == "" {
			t.Errorf("%v on %q: exit %d, stderr %q", tc.args, tc.stdin, code, errOut)
		}
	}
	if code, out, _ := runCLI(t, "", "assess", "--help"); code != exitOK || !strings.Contains(out, "usage: ctxkit assess") {
		t.Fatalf("help: %d %s", code, out) // help goes to stdout, like every command's
	}
}

// FuzzParseRequest: any body, read as each wire, either fails with an
// error or yields inputs that assess without panicking, with non-negative
// figures. (The CLI and POST /v1/assess share window.InputsFromRequestBody.)
func FuzzParseRequest(f *testing.F) {
	f.Add([]byte(`{"model":"claude-sonnet-4-6","max_tokens":10,"messages":[{"role":"user","content":"hi"}]}`))
	f.Add([]byte(`{"contents":[{"parts":[{"text":"x"}]}],"generationConfig":{"thinkingConfig":{"thinkingBudget":-1}}}`))
	f.Add([]byte(`{"input":[{"role":"user","content":[{"type":"input_image","image_url":"data:image/png;base64,AA"}]}],"instructions":[{"text":"a"}]}`))
	f.Add([]byte(`{"messages":null,"system":{"weird":true},"thinking":{"budget_tokens":1e99}}`))
	f.Add([]byte(`[]`))
	for _, s := range []string{
		`{"model":"claude-sonnet-4-5","system":"be brief","max_tokens":1024,"thinking":{"type":"enabled","budget_tokens":2048},"tools":[{"name":"t","input_schema":{}}],"messages":[{"role":"user","content":"hi"}]}`,
		`{"model":"x","system":[{"type":"text","text":"a"},{"type":"text","text":"b"}],"messages":[{"role":"user","content":[{"type":"image","source":{"type":"base64","data":"AAAA"}}]}]}`,
		`{"model":"gpt-4o","messages":[{"role":"system","content":"s"},{"role":"user","content":"q"}],"max_completion_tokens":500}`,
		`{"model":"o3","instructions":"be kind","input":"hello","max_output_tokens":77}`,
		`{"input":[{"role":"user","content":"x"}],"tools":[]}`,
		`{"model":"gemini-2.5-pro","systemInstruction":{"parts":[{"text":"sys"}]},"contents":[{"role":"user","parts":[{"text":"q"}]}],"generationConfig":{"maxOutputTokens":900,"thinkingConfig":{"thinkingBudget":-1}}}`,
		`{"contents":[],"generation_config":{"max_output_tokens":5,"thinking_config":{"thinking_budget":9}}}`,
		`{"messages":[{"role":"tool","content":"r"}],"max_tokens":-1}`,
		`{"messages":"nope"}`, `{}`, `[]`, `{"model":7,"messages":[]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		for _, wire := range []string{"", "anthropic", "openai", "gemini"} {
			w, _ := window.ParseWire(wire)
			in, err := window.InputsFromRequestBody(body, w, "")
			if err != nil {
				continue
			}
			a := window.Assess(in)
			if a.Used() < 0 || a.Budget() < 0 || a.Remaining() < 0 || in.OutputReserve < 0 || in.ThinkingBudget < 0 {
				t.Fatalf("negative figures: %+v", a)
			}
		}
	})
}

// pdfRequest is an Anthropic Messages request carrying a base64 PDF of
// the given number of pages, each padded to about 350 KB.
func pdfRequest(t *testing.T, pages int) []byte {
	t.Helper()
	var pdf bytes.Buffer
	pdf.WriteString("%PDF-1.4\n1 0 obj << /Type /Catalog /Pages 2 0 R >> endobj\n")
	fmt.Fprintf(&pdf, "2 0 obj << /Type /Pages /Count %d >> endobj\n", pages)
	for i := range pages {
		fmt.Fprintf(&pdf, "%d 0 obj << /Type /Page /Parent 2 0 R >> endobj\n", 3+i)
		fmt.Fprintf(&pdf, "stream\nBT (%s) Tj ET\nendstream\n", strings.Repeat("lorem ipsum ", 30_000))
	}
	pdf.WriteString("%%EOF\n")
	req := map[string]any{
		"model": "claude-sonnet-4-6", "max_tokens": 1024,
		"messages": []any{map[string]any{"role": "user", "content": []any{
			map[string]any{"type": "document", "source": map[string]any{
				"type": "base64", "media_type": "application/pdf", "data": base64.StdEncoding.EncodeToString(pdf.Bytes()),
			}},
			map[string]any{"type": "text", "text": "Summarise this report."},
		}}},
	}
	b, err := json.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// A base64 PDF of about 1.4 MB is charged per page, not ~1 M tokens for
// its base64, and the page charge is a flag.
func TestAssessChargesAPDFPerPage(t *testing.T) {
	path := filepath.Join(t.TempDir(), "request.json")
	body := pdfRequest(t, 3)
	if len(body) < 1_000_000 {
		t.Fatalf("request is only %d bytes", len(body))
	}
	if err := os.WriteFile(path, body, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args    []string
		perPage int
		note    string
	}{
		{nil, 3000, "1 documents (3 pages at 3,000 each)"},
		{[]string{"--page-tokens", "1500"}, 1500, "1 documents (3 pages at 1,500 each)"},
	} {
		code, out, errOut := runCLI(t, "", append([]string{"assess", "--format", "json", path}, tc.args...)...)
		if code != exitOK {
			t.Fatalf("exit %d: %s", code, errOut)
		}
		var got struct {
			Documents  int `json:"documents"`
			Pages      int `json:"pages"`
			PageTokens int `json:"page_tokens"`
			Breakdown  struct {
				History int `json:"history"`
			} `json:"breakdown"`
		}
		if err := json.Unmarshal([]byte(out), &got); err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		if got.Documents != 1 || got.Pages != 3 || got.PageTokens != tc.perPage ||
			got.Breakdown.History < 3*tc.perPage || got.Breakdown.History > 3*tc.perPage+100 {
			t.Fatalf("%v: %+v", tc.args, got)
		}
		code, text, _ := runCLI(t, "", append([]string{"assess", path}, tc.args...)...)
		if code != exitOK || !strings.Contains(text, tc.note) {
			t.Fatalf("%v: text output:\n%s", tc.args, text)
		}
	}
	if code, _, _ := runCLI(t, "", "assess", "--page-tokens", "-1", path); code != exitUsage {
		t.Fatalf("negative --page-tokens: exit %d", code)
	}
}

// `assess` counts decoded text: CJK and "<" cost the same written plainly
// or as \u escapes.
func TestAssessCountsDecodedText(t *testing.T) {
	plain := `{"model":"gpt-4o","messages":[{"role":"user","content":"请检查重试策略 <retry>"}]}`
	escaped := `{"model":"gpt-4o","messages":[{"role":"user","content":"\u8bf7\u68c0\u67e5\u91cd\u8bd5\u7b56\u7565 \u003cretry\u003e"}]}`
	for _, format := range []string{"text", "json"} {
		c1, o1, e1 := runCLI(t, plain, "assess", "--format", format, "-")
		c2, o2, e2 := runCLI(t, escaped, "assess", "--format", format, "-")
		if c1 != 0 || c2 != 0 || o1 != o2 {
			t.Fatalf("%s: plain %d %s%s\nescaped %d %s%s", format, c1, o1, e1, c2, o2, e2)
		}
	}
}

// An unknown model is assessed with the documented defaults and a warning,
// in the text output and in JSON; a wire that does not fit the body is an
// error naming the mismatch.
func TestAssessUnknownModelAndWireMismatch(t *testing.T) {
	body := `{"model":"mystery-3","messages":[{"role":"user","content":"x"}]}`
	code, out, _ := runCLI(t, body, "assess", "-")
	if code != 0 || !strings.Contains(out, "warning: model mystery-3 is not in the catalog: assumed window 128000 (window.DefaultWindow)") {
		t.Fatalf("text: %d %q", code, out)
	}
	code, out, _ = runCLI(t, body, "assess", "--format", "json", "-")
	var a struct{ Warnings []string }
	if err := json.Unmarshal([]byte(out), &a); code != 0 || err != nil || len(a.Warnings) != 1 || !strings.Contains(a.Warnings[0], "mystery-3") {
		t.Fatalf("json: %d %v %q", code, err, out)
	}
	openAI := `{"model":"gpt-4o","max_completion_tokens":10,"messages":[{"role":"user","content":"x"}]}`
	code, out, errOut := runCLI(t, openAI, "assess", "--wire", "gemini", "-")
	if code != exitUsage || out != "" || !strings.Contains(errOut, `wire gemini does not match the body: it is an OpenAI Chat or Responses request (member "max_completion_tokens")`) {
		t.Fatalf("mismatch: %d %q %q", code, out, errOut)
	}
}
