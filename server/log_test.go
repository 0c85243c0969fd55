package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"

	"github.com/ctxkit/ctxkit/internal/syncbuf"
	"github.com/ctxkit/ctxkit/server"
	"github.com/ctxkit/ctxkit/server/api"
)

func TestLogsNeverHoldContentOrKeys(t *testing.T) {
	const secret, key = "SECRET-FRAME-CONTENT-7f3a", "KEY-0123456789abcdef-SECRET"
	for _, debug := range []bool{false, true} {
		var logs syncbuf.Buffer
		level := slog.LevelInfo
		if debug {
			level = slog.LevelDebug
		}
		logger := slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: level}))
		c, _ := newTestClient(t, &server.Options{Logger: logger, LogRequests: true, LogContent: debug})
		ctx := context.Background()
		offers := mkOffers(2, 1, 40)
		offers[0].Frame = mkFrame("s", secret, 0.5)
		if _, err := c.Compose(ctx, &api.ComposeRequest{Offers: offers, Budget: intp(500)}); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Prompt(ctx, &api.PromptRequest{Key: key, Label: "l", Parts: []api.PromptPart{{Untrusted: str(secret)}}}); err != nil {
			t.Fatal(err)
		}
		out := logs.String()
		// One JSON line per request, with route, status and duration.
		var n int
		for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
			var rec map[string]any
			if err := json.Unmarshal([]byte(line), &rec); err != nil {
				t.Fatalf("log line %q: %v", line, err)
			}
			if rec["msg"] == "request" {
				n++
				if rec["route"] == nil || rec["status"] == nil || rec["duration"] == nil {
					t.Fatalf("request line lacks route, status or duration: %s", line)
				}
			}
		}
		if n != 2 {
			t.Fatalf("%d request lines, want 2:\n%s", n, out)
		}
		leaked := strings.Contains(out, secret) || strings.Contains(out, key)
		if leaked != debug {
			t.Fatalf("debug=%v: content or key in the log = %v:\n%s", debug, leaked, out)
		}
	}
}

// TestNoRequestLinesByDefault checks that a logger alone gets no line per
// request: request lines are opt-in (Options.LogRequests).
func TestNoRequestLinesByDefault(t *testing.T) {
	var logs bytes.Buffer
	logger := slog.New(slog.NewJSONHandler(&logs, nil))
	c, _ := newTestClient(t, &server.Options{Logger: logger})
	if _, err := c.Compose(context.Background(), &api.ComposeRequest{Offers: mkOffers(2, 1, 40), Budget: intp(500)}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(logs.String(), `"msg":"request"`) {
		t.Fatalf("request line logged without LogRequests:\n%s", logs.String())
	}
}
