package main

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ctxkit/ctxkit/host"
	"github.com/ctxkit/ctxkit/internal/announce"
	"github.com/ctxkit/ctxkit/server/api"
	"github.com/ctxkit/ctxkit/server/client"
)

// TestServeCommandAnswersEveryRoute runs `ctxkit serve` in-process with a
// config file, calls every route through the client, then cancels the
// context (what SIGTERM does) and expects a clean exit.
func TestServeCommandAnswersEveryRoute(t *testing.T) {
	dir := t.TempDir()
	docs := filepath.Join(dir, "docs")
	if err := os.MkdirAll(docs, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(docs, "shutdown.md"), []byte("# Shutdown\n\nOn SIGTERM in-flight requests finish.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(dir, "ctxkit.json")
	if err := os.WriteFile(cfg, []byte(`{"limits":{"max_frames":50,"timeout":"5s"},"consent_store":"consent.ndjson","providers":[{"id":"docs","files":"docs"}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	pr, pw := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int, 1)
	go func() {
		done <- runServe(ctx, []string{"--addr", "127.0.0.1:0", "--config", cfg, "--log-format", "json"}, stdio{in: strings.NewReader(""), out: io.Discard, err: pw})
		pw.Close()
	}()
	urlc, _ := announce.Watch(pr, nil)
	var url string
	select {
	case url = <-urlc:
	case code := <-done:
		t.Fatalf("serve exited %d before listening", code)
	case <-time.After(20 * time.Second):
		t.Fatal("serve did not start")
	}
	c, err := client.New(url, nil)
	if err != nil {
		t.Fatal(err)
	}
	bg := context.Background()
	if err := c.Health(bg); err != nil {
		t.Fatal(err)
	}
	budget := 500
	content := "Retry at most 3 times."
	offer := map[string]any{"provider": "docs", "frame": map[string]any{"id": "r", "kind": "doc", "title": "Retry", "content": content,
		"score": 0.5, "token_cost": (len(content) + 3) / 4, "citation_label": "retry.md"}}
	var res api.ComposeResponse
	if err := c.Do(bg, api.PathCompose, map[string]any{"budget": budget, "offers": []any{offer}}, &res); err != nil || len(res.Audit.Entries) != 1 {
		t.Fatalf("compose: %v %+v", err, res.Audit)
	}
	var floor api.ContextResponse
	if err := c.Do(bg, api.PathContext, map[string]any{"offers": []any{offer}}, &floor); err != nil || !strings.Contains(floor.Context, content) {
		t.Fatalf("context: %v %q", err, floor.Context)
	}
	if a, err := c.Assess(bg, &api.AssessRequest{Request: json.RawMessage(`{"model":"claude-sonnet-4-5","messages":[{"role":"user","content":"hi"}]}`)}); err != nil || a.Used() <= 0 {
		t.Fatalf("assess: %v %+v", err, a)
	}
	if p, err := c.Prompt(bg, &api.PromptRequest{Parts: []api.PromptPart{{Untrusted: &content}}}); err != nil || !strings.Contains(p.Prompt, p.Nonce) {
		t.Fatalf("prompt: %v %+v", err, p)
	}
	q, err := c.Query(bg, &api.QueryRequest{Goal: "what happens on SIGTERM", Budget: 400})
	if err != nil || len(q.FanOut.Outcomes) != 1 || q.FanOut.Outcomes[0].Status != host.StatusFrames || !strings.Contains(q.Composition.Prompt, "in-flight requests finish") {
		t.Fatalf("query: %v %+v", err, q)
	}
	// The config's frame limit applies.
	many := make([]any, 51)
	for i := range many {
		many[i] = offer
	}
	var tooMany *api.Error
	if err := c.Do(bg, api.PathCompose, map[string]any{"budget": budget, "offers": many}, nil); !errors.As(err, &tooMany) || tooMany.Code != api.CodeTooManyFrames {
		t.Fatalf("51 offers with max_frames 50: %v", err)
	}
	m, err := getText(url + api.PathMetrics)
	if err != nil || !strings.Contains(string(m), `ctxkit_provider_outcomes_total{kind="frames"} 1`) {
		t.Fatalf("metrics: %v\n%s", err, m)
	}
	cancel()
	select {
	case code := <-done:
		if code != exitOK {
			t.Fatalf("serve exited %d after cancel", code)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("serve did not stop")
	}
}
