package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/ctxkit/ctxkit/server/api"
	"github.com/ctxkit/ctxkit/window"
)

func TestAssessRouteMatchesWindow(t *testing.T) {
	c, _ := newTestClient(t, nil)
	ctx := context.Background()
	body := `{"model":"claude-sonnet-4-5","system":"be brief","max_tokens":1024,"thinking":{"type":"enabled","budget_tokens":4096},` +
		`"messages":[{"role":"user","content":"hi"},{"role":"assistant","content":"hello"}]}`
	req := &api.AssessRequest{Request: json.RawMessage(body), Window: 50000, ToolResultBytes: 3000, Skills: []string{"skill body"}, Memory: []string{"remember"}}
	var raw json.RawMessage
	if err := c.Do(ctx, api.PathAssess, req, &raw); err != nil {
		t.Fatal(err)
	}
	in, err := window.InputsFromRequestBody([]byte(body), window.WireUnknown, "")
	if err != nil {
		t.Fatal(err)
	}
	in.Window, in.NextToolResultBytes, in.Skills, in.Memory = 50000, 3000, req.Skills, req.Memory
	want, err := json.Marshal(window.Assess(in))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(bytes.TrimSpace(raw), want) {
		t.Fatalf("answer differs from window.Assess:\n%s\n%s", raw, want)
	}
	res, err := c.Assess(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if res.Window != 50000 || res.Breakdown.Skills == 0 || res.Breakdown.Memory == 0 || res.Budget() <= 0 || res.Used() <= 0 {
		t.Fatalf("decoded %+v", res)
	}
	// The client reads the answer into window's own type: nothing is lost
	// on the way (the server's restated map[string]any used to drop fields).
	if again, err := json.Marshal(res); err != nil || !bytes.Equal(again, want) {
		t.Fatalf("decoded assessment re-encodes as\n%s\nwant\n%s (%v)", again, want, err)
	}
}

func TestAssessRouteChargesImagesFlat(t *testing.T) {
	c, _ := newTestClient(t, nil)
	png := strings.Repeat("iVBORw0KGgoAAAANSUhEUgAA", 3<<20/24) // ~3 MB of base64
	body, _ := json.Marshal(map[string]any{
		"model": "claude-sonnet-4-5", "max_tokens": 1000,
		"messages": []any{map[string]any{"role": "user", "content": []any{
			map[string]any{"type": "image", "source": map[string]any{"type": "base64", "media_type": "image/png", "data": png}},
			map[string]any{"type": "text", "text": "what is on this screenshot?"},
		}}},
	})
	res, err := c.Assess(context.Background(), &api.AssessRequest{Request: body})
	if err != nil {
		t.Fatal(err)
	}
	if res.Images != 1 || res.Breakdown.History < 1600 || res.Breakdown.History > 1800 {
		t.Fatalf("a 3 MB screenshot charged %d history tokens (%d images)", res.Breakdown.History, res.Images)
	}
}

func TestAssessRouteRejectsBadInput(t *testing.T) {
	c, _ := newTestClient(t, nil)
	ctx := context.Background()
	ok := json.RawMessage(`{"messages":[{"role":"user","content":"x"}]}`)
	for _, tc := range []struct {
		req   api.AssessRequest
		field string
	}{
		{api.AssessRequest{}, "request"},
		{api.AssessRequest{Request: json.RawMessage(`null`)}, "request"},
		{api.AssessRequest{Request: json.RawMessage(`[1,2]`)}, "request"},
		{api.AssessRequest{Request: json.RawMessage(`{"model":"m"}`)}, "request"},
		{api.AssessRequest{Request: json.RawMessage(`{"messages":"x"}`)}, "request"},
		{api.AssessRequest{Request: json.RawMessage(`{"messages":[],"max_tokens":-4}`)}, "request"},
		{api.AssessRequest{Request: ok, Wire: "carrier-pigeon"}, "wire"},
		{api.AssessRequest{Request: ok, Window: -1}, "window"},
		{api.AssessRequest{Request: ok, ImageTokens: -1}, "image_tokens"},
		{api.AssessRequest{Request: ok, ToolResultBytes: -1}, "tool_result_bytes"},
	} {
		_, err := c.Assess(ctx, &tc.req)
		wantError(t, err, 400, api.CodeBadRequest, tc.field, "")
	}
}

// /v1/assess counts decoded text: the same message costs the same whether
// its JSON spells CJK and "<" plainly or as \u escapes; a page_tokens
// override applies; a wire that does not fit the body is a 400 naming it;
// an unknown model's defaults come with a warning.
func TestAssessRouteCountsDecodedText(t *testing.T) {
	c, _ := newTestClient(t, nil)
	ctx := context.Background()
	plain := `{"model":"claude-sonnet-4-5","max_tokens":100,"messages":[{"role":"user","content":"上下文窗口 <b>"}]}`
	escaped := `{"model":"claude-sonnet-4-5","max_tokens":100,"messages":[{"role":"user","content":"\u4e0a\u4e0b\u6587\u7a97\u53e3 \u003cb\u003e"}]}`
	a, err := c.Assess(ctx, &api.AssessRequest{Request: json.RawMessage(plain)})
	if err != nil {
		t.Fatal(err)
	}
	b, err := c.Assess(ctx, &api.AssessRequest{Request: json.RawMessage(escaped)})
	if err != nil {
		t.Fatal(err)
	}
	if a.Breakdown.History != b.Breakdown.History || a.Used() != b.Used() {
		t.Fatalf("plain %v used %d, escaped %v used %d", a.Breakdown, a.Used(), b.Breakdown, b.Used())
	}
	pdf := `{"model":"gemini-2.5-pro","contents":[{"role":"user","parts":[{"fileData":{"mimeType":"application/pdf","fileUri":"gs://b/x.pdf"}}]}]}`
	p, err := c.Assess(ctx, &api.AssessRequest{Request: json.RawMessage(pdf), PageTokens: 10})
	if err != nil {
		t.Fatal(err)
	}
	if p.Documents != 1 || p.Pages != 1000 || p.PageTokens != 10 || p.Breakdown.History < 10_000 {
		t.Fatalf("document by reference: %+v", p)
	}
	_, err = c.Assess(ctx, &api.AssessRequest{Request: json.RawMessage(plain), Wire: "gemini"})
	var se *api.Error
	if !errors.As(err, &se) || se.Status != 400 || se.Field != "wire" || !strings.Contains(se.Message, "wire gemini does not match the body") {
		t.Fatalf("mismatched wire: %v", err)
	}
	u, err := c.Assess(ctx, &api.AssessRequest{Request: json.RawMessage(`{"model":"mystery-2","messages":[{"role":"user","content":"x"}]}`)})
	if err != nil {
		t.Fatal(err)
	}
	if len(u.Warnings) != 1 || !strings.Contains(u.Warnings[0], "mystery-2 is not in the catalog") {
		t.Fatalf("unknown model warnings %q", u.Warnings)
	}
}
