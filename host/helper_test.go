package host

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/ctxkit/ctxkit/frame"
	"github.com/ctxkit/ctxkit/wire"
)

// The test binary doubles as an adversarial child provider: with
// CTXKIT_FAKE set, TestMain runs that mode instead of the tests.
func TestMain(m *testing.M) {
	if mode := os.Getenv("CTXKIT_FAKE"); mode != "" {
		os.Exit(fakeMain(mode))
	}
	os.Exit(m.Run())
}

// honest is an in-process provider serving fixed frames.
type honest struct {
	name   string
	frames []frame.Frame
	flow   frame.DataFlow
	kinds  []frame.Kind
	seen   chan frame.Query // receives every query, if non-nil
	delay  time.Duration
}

func (h *honest) Handshake(ctx context.Context, v string) (*wire.HandshakeAck, error) {
	name := h.name
	if name == "" {
		name = "honest"
	}
	return &wire.HandshakeAck{ProtocolVersion: wire.ProtocolVersion,
		Provider:     frame.ProviderInfo{Name: name, Version: "1.0.0", DataFlow: h.flow},
		Capabilities: frame.Capabilities{Query: frame.QueryCapabilities{Kinds: h.kinds}, Correlation: true, Verify: true}}, nil
}

func (h *honest) Query(ctx context.Context, q *frame.Query) (*wire.Result, error) {
	if h.seen != nil {
		h.seen <- *q
	}
	if h.delay > 0 {
		select {
		case <-time.After(h.delay):
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return &wire.Result{Frames: append([]frame.Frame(nil), h.frames...)}, nil
}

func (h *honest) Verify(ctx context.Context, ids []frame.ID) ([]wire.Verdict, error) {
	var out []wire.Verdict
	for _, id := range ids {
		st := wire.StatusGone
		for _, f := range h.frames {
			if f.ID == id.Frame {
				if f.ContentDigest == id.Digest {
					st = wire.StatusValid
				} else {
					st = wire.StatusStale
				}
			}
		}
		out = append(out, wire.Verdict{Frame: id, Status: st})
	}
	return out, nil
}

// mkFrame returns a B3-honest frame.
func mkFrame(id, content string, score float32) frame.Frame {
	return frame.Frame{ID: id, Kind: frame.KindDoc, Title: id, Content: content, Score: score,
		TokenCost: uint32(frame.BudgetTokens(content)), CitationLabel: id}
}

// lying returns a frame declaring cost regardless of its content (the host
// conformance helper frame).
func lying(id string, cost uint32) frame.Frame {
	return frame.Frame{ID: id, Kind: frame.KindDoc, Title: id, Content: "c", Score: 0.5, TokenCost: cost, CitationLabel: id}
}

func ackLine(version string, corr bool, flow string) string {
	if flow == "" {
		flow = `{"reads":true,"writes":false,"egress":false}`
	}
	return fmt.Sprintf(`{"type":"handshake_ack","protocol_version":%q,"provider":{"name":"fake","version":"0.0.1","data_flow":%s},"capabilities":{"query":{"kinds":[]},"correlation":%v,"graph":false,"verify":false,"resolve":false}}`, version, flow, corr)
}

// fakeMain is the child provider. It reads envelopes line by line and
// misbehaves according to mode.
func fakeMain(mode string) int {
	in := bufio.NewReaderSize(os.Stdin, 1<<20)
	out := os.Stdout
	readLine := func() (map[string]any, bool) {
		line, err := in.ReadString('\n')
		if err != nil {
			return nil, false
		}
		if rec := os.Getenv("CTXKIT_RECORD"); rec != "" {
			f, _ := os.OpenFile(rec, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
			f.WriteString(line)
			f.Close()
		}
		var m map[string]any
		json.Unmarshal([]byte(line), &m)
		return m, true
	}
	flow := os.Getenv("CTXKIT_FLOW")
	corr := os.Getenv("CTXKIT_CORR") == "1"
	version := wire.ProtocolVersion
	if mode == "version" {
		version = "contextgraph/2.0"
	}
	if _, ok := readLine(); !ok {
		return 0
	}
	fmt.Fprintln(out, ackLine(version, corr, flow))
	for {
		m, ok := readLine()
		if !ok {
			return 0
		}
		if m["type"] == "shutdown" {
			return 0
		}
		id, _ := m["id"].(string)
		idPart := ""
		if id != "" {
			idPart = fmt.Sprintf(`"id":%q,`, id)
		}
		switch mode {
		case "version":
			// never answers anything else
		case "healthy", "record":
			fmt.Fprintf(out, `{"type":"frames",%s"result":{"frames":[{"id":"child-f","kind":"doc","title":"child","content":"from the child","score":0.5,"token_cost":4,"citation_label":"child-f"}],"truncated":false}}`+"\n", idPart)
		case "crash":
			return 3
		case "hang":
			time.Sleep(time.Hour)
		case "hang-grandchild":
			time.Sleep(time.Hour)
		case "bigline":
			w := bufio.NewWriterSize(out, 1<<20)
			chunk := strings.Repeat("x", 1<<20)
			for range 100 {
				if _, err := w.WriteString(chunk); err != nil {
					return 0
				}
			}
			w.WriteString("\n")
			w.Flush()
		case "garbage":
			fmt.Fprintln(out, "this is not json {{{")
		case "wrongid":
			fmt.Fprintf(out, `{"type":"frames","id":"not-%s","result":{"frames":[],"truncated":false}}`+"\n", id)
		case "noid":
			fmt.Fprintln(out, `{"type":"frames","result":{"frames":[],"truncated":false}}`)
		case "error":
			fmt.Fprintf(out, `{"type":"error",%s"code":"budget_unsatisfiable","message":"too small"}`+"\n", idPart)
		case "bench":
			fmt.Fprintf(out, `{"type":"frames",%s"result":%s}`+"\n", idPart, benchResultJSON())
		case "stderr":
			for range 1000 {
				fmt.Fprintln(os.Stderr, strings.Repeat("noise ", 100))
			}
			return 1
		}
	}
}

// fakeArgs returns how to start the test binary as a fake provider.
func fakeArgs(t *testing.T) string { return mustExe(t) }

func mustExe(tb testing.TB) string {
	tb.Helper()
	exe, err := os.Executable()
	if err != nil {
		tb.Fatal(err)
	}
	return exe
}

// addFake registers a fake child in mode under id.
func addFake(t *testing.T, h *Host, id, mode string, env ...string) {
	t.Helper()
	env = append(env, "CTXKIT_FAKE="+mode)
	if err := h.AddStdio(id, fakeArgs(t), nil, &StdioOptions{Env: env}); err != nil {
		t.Fatal(err)
	}
}

// noLeak fails t if the goroutine count does not return to its value at the
// time noLeak was called (checked after the test body via t.Cleanup order:
// call it first).
func noLeak(t *testing.T) {
	t.Helper()
	before := runtime.NumGoroutine()
	t.Cleanup(func() {
		deadline := time.Now().Add(5 * time.Second)
		for {
			n := runtime.NumGoroutine()
			if n <= before {
				return
			}
			if time.Now().After(deadline) {
				buf := make([]byte, 1<<20)
				buf = buf[:runtime.Stack(buf, true)]
				t.Errorf("goroutine leak: %d before, %d after\n%s", before, n, buf)
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
	})
}

func probe() *frame.Query {
	return &frame.Query{Goal: "probe", MaxFrames: 8, MaxTokens: 1000}
}

// benchFrames are 50 B3-honest frames of about 200 bytes each.
func benchFrames(prefix string) []frame.Frame {
	out := make([]frame.Frame, 50)
	for i := range out {
		c := fmt.Sprintf("%s frame %d: ", prefix, i) + strings.Repeat("evidence ", 22)
		out[i] = mkFrame(fmt.Sprintf("%s-%02d", prefix, i), c, float32(i)/50)
	}
	return out
}

func benchResultJSON() string {
	b, _ := json.Marshal(wire.Result{Frames: benchFrames("child")})
	return string(b)
}
