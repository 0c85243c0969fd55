package main

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
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
	docs := writeDocs(t, map[string]string{"shutdown.md": "# Shutdown\n\nOn SIGTERM in-flight requests finish.\n"})
	// The config sits beside docs and names it and the journal relatively.
	cfg := filepath.Join(filepath.Dir(docs), "ctxkit.json")
	if err := os.WriteFile(cfg, []byte(`{"limits":{"max_frames":50,"timeout":"5s"},"consent_store":"consent.ndjson","providers":[{"id":"docs","files":"docs"}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	srv := serveInProcess(t, "--config", cfg, "--log-format", "json")
	url := srv.url
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
	if code := srv.stop(); code != exitOK {
		t.Fatalf("serve exited %d after cancel (-1: did not stop within 20 s)", code)
	}
}

// serveBinary starts `BIN serve --addr 127.0.0.1:0 ARGS...` as a child
// process and returns it with the URL it announced. The child is killed
// with the test at the latest.
func serveBinary(t *testing.T, bin string, args ...string) (*exec.Cmd, string) {
	t.Helper()
	// A pipe of our own rather than StderrPipe: the log is read until the
	// child exits, and Wait must not close the pipe under that reader.
	pr, pw := io.Pipe()
	cmd := exec.Command(bin, append([]string{"serve", "--addr", "127.0.0.1:0"}, args...)...)
	cmd.Stderr = pw
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		pw.Close()
	})
	urls, _ := announce.Watch(pr, nil)
	select {
	case url := <-urls:
		return cmd, url
	case <-time.After(30 * time.Second):
		t.Fatal("ctxkit serve did not announce its address")
	}
	return nil, ""
}
