package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/ctxkit/ctxkit/server"
	"github.com/ctxkit/ctxkit/window"
)

func TestAssessRouteMatchesWindow(t *testing.T) {
	c, _ := newTestClient(t, nil)
	ctx := context.Background()
	body := `{"model":"claude-sonnet-4-5","system":"be brief","max_tokens":1024,"thinking":{"type":"enabled","budget_tokens":4096},` +
		`"messages":[{"role":"user","content":"hi"},{"role":"assistant","content":"hello"}]}`
	req := &server.AssessRequest{Request: json.RawMessage(body), Window: 50000, ToolResultBytes: 3000, Skills: []string{"skill body"}, Memory: []string{"remember"}}
	var raw json.RawMessage
	if err := c.Do(ctx, server.PathAssess, req, &raw); err != nil {
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
	if res.Window != 50000 || res.Breakdown["skills"] == 0 || res.Breakdown["memory"] == 0 || res.Budget <= 0 || res.Used <= 0 {
		t.Fatalf("decoded %+v", res)
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
	res, err := c.Assess(context.Background(), &server.AssessRequest{Request: body})
	if err != nil {
		t.Fatal(err)
	}
	if res.Images != 1 || res.Breakdown["history"] < 1600 || res.Breakdown["history"] > 1800 {
		t.Fatalf("a 3 MB screenshot charged %d history tokens (%d images)", res.Breakdown["history"], res.Images)
	}
}

func TestAssessRouteRejectsBadInput(t *testing.T) {
	c, _ := newTestClient(t, nil)
	ctx := context.Background()
	ok := json.RawMessage(`{"messages":[{"role":"user","content":"x"}]}`)
	for _, tc := range []struct {
		req   server.AssessRequest
		field string
	}{
		{server.AssessRequest{}, "request"},
		{server.AssessRequest{Request: json.RawMessage(`null`)}, "request"},
		{server.AssessRequest{Request: json.RawMessage(`[1,2]`)}, "request"},
		{server.AssessRequest{Request: json.RawMessage(`{"model":"m"}`)}, "request"},
		{server.AssessRequest{Request: json.RawMessage(`{"messages":"x"}`)}, "request"},
		{server.AssessRequest{Request: json.RawMessage(`{"messages":[],"max_tokens":-4}`)}, "request"},
		{server.AssessRequest{Request: ok, Wire: "carrier-pigeon"}, "wire"},
		{server.AssessRequest{Request: ok, Window: -1}, "window"},
		{server.AssessRequest{Request: ok, ImageTokens: -1}, "image_tokens"},
		{server.AssessRequest{Request: ok, ToolResultBytes: -1}, "tool_result_bytes"},
	} {
		_, err := c.Assess(ctx, &tc.req)
		wantError(t, err, 400, server.CodeBadRequest, tc.field, "")
	}
}
