package mcpbridge_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/ctxkit/ctxkit/frame"
	"github.com/ctxkit/ctxkit/host"
	"github.com/ctxkit/ctxkit/mcpbridge"
)

// A Streamable HTTP server whose reply never ends cannot make the bridge
// hold it: the reply is cut at the bound of one message, the leg fails
// naming why, and the server is no longer read. (The SDK reads a reply
// whole; an outside probe's 1.5 GB reply took ctxkit to 7 GB.)
func TestHugeHTTPReplyIsCut(t *testing.T) {
	for _, c := range []struct{ name, contentType, head string }{
		{"json", "application/json", `{"jsonrpc":"2.0","id":1,"result":{"x":"`},
		// One event whose data line never ends: the SDK reports the cut
		// stream as "terminated without response", the bridge says why.
		{"event stream", "text/event-stream", `data: {"jsonrpc":"2.0","id":1,"result":{"x":"`},
	} {
		t.Run(c.name, func(t *testing.T) { hugeReply(t, c.contentType, c.head) })
	}
}

func hugeReply(t *testing.T, contentType, head string) {
	var written atomic.Int64
	chunk := []byte(strings.Repeat(" ", 1<<20))
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", contentType)
		if _, err := io.WriteString(w, head); err != nil {
			return
		}
		for range 512 { // 512 MiB, if anyone read it all
			n, err := w.Write(chunk)
			written.Add(int64(n))
			if err != nil {
				return
			}
		}
	}))
	defer ts.Close()
	h := host.New(nil)
	defer h.Close(context.Background())
	target, err := mcpbridge.ParseTarget("mcp:" + ts.URL + "/mcp")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := mcpbridge.Register(h, "huge", target, nil); err != nil {
		t.Fatal(err)
	}
	leg := h.QueryAllBudgeted(context.Background(), &frame.Query{Goal: "x", MaxFrames: 4, MaxTokens: 100}, 100).Outcomes[0]
	if leg.Status != host.StatusFailed || !strings.Contains(leg.Error(), "too large") {
		t.Fatalf("leg %v: %v, want failed naming the reply as too large", leg.Status, leg.Error())
	}
	ts.CloseClientConnections()
	if n := written.Load(); n > 64<<20 {
		t.Errorf("the server got %d MiB out before the bridge stopped reading", n>>20)
	}
}

// A reply of exactly the bound is read whole; one byte more fails.
func TestReplyBound(t *testing.T) {
	for _, c := range []struct {
		n    int
		fail bool
	}{{16 << 20, false}, {16<<20 + 1, true}} {
		body, err := io.ReadAll(mcpbridge.BoundedReader(strings.NewReader(strings.Repeat("a", c.n))))
		if fail := errors.Is(err, mcpbridge.ErrReplyTooLarge); fail != c.fail || (!c.fail && (err != nil || len(body) != c.n)) {
			t.Errorf("%d bytes: read %d, err %v", c.n, len(body), err)
		}
	}
}
