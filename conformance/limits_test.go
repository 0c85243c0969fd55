package conformance

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/ctxkit/ctxkit/frame"
	"github.com/ctxkit/ctxkit/wire"
)

// answerHTTP serves a minimal CGP provider over HTTP, in process: it
// acknowledges declaring kinds and answers every query with answer(query).
func answerHTTP(t *testing.T, kinds []frame.Kind, answer func(frame.Query) []frame.Frame) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		env, err := wire.Unmarshal(body)
		var reply wire.Envelope = &wire.Error{Code: wire.CodeBadRequest, Message: "not served"}
		switch e := env.(type) {
		case *wire.Handshake:
			reply = &wire.HandshakeAck{ProtocolVersion: wire.ProtocolVersion,
				Provider:     frame.ProviderInfo{Name: "scripted", Version: "1", DataFlow: frame.DataFlow{Reads: true}},
				Capabilities: frame.Capabilities{Query: frame.QueryCapabilities{Kinds: kinds}}}
		case *wire.Query:
			reply = &wire.Frames{Result: wire.Result{Frames: answer(e.Query)}}
		case *wire.Shutdown:
			w.WriteHeader(http.StatusNoContent)
			return
		}
		if err != nil {
			reply = &wire.Error{Code: wire.CodeBadRequest, Message: err.Error()}
		}
		b, _ := wire.Marshal(reply)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(b)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// tenTokenFrame is a valid frame of kind k whose content costs 10 tokens.
func tenTokenFrame(id string, k frame.Kind) frame.Frame {
	content := strings.Repeat("x", 40)
	return frame.Frame{ID: id, Kind: k, Title: id, Content: content, Score: 0.5,
		TokenCost: uint32(frame.BudgetTokens(content)), CitationLabel: id}
}

// serveWithin answers a query with fs cut to its kinds, max_frames and
// max_tokens, as an honest provider does.
func serveWithin(fs []frame.Frame) func(frame.Query) []frame.Frame {
	return func(q frame.Query) []frame.Frame {
		out, used := []frame.Frame{}, uint32(0)
		for _, f := range fs {
			if (len(q.Kinds) > 0 && !q.WantsKind(f.Kind)) || len(out) >= int(q.MaxFrames) || used+f.TokenCost > q.MaxTokens {
				continue
			}
			used += f.TokenCost
			out = append(out, f)
		}
		return out
	}
}

func runScripted(t *testing.T, url string) Report {
	t.Helper()
	rep, err := RunProvider(context.Background(), ProviderTarget{URL: url}, &ProviderOptions{Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// TestProviderSuiteProbesEveryKindAndATightBudget: like the upstream SDK
// example providers, a provider that declares doc and snippet, serves only
// doc frames and ignores kinds, max_frames and max_tokens passes a suite
// that asks for the first declared kind under a generous budget; this one
// fails kinds-filter naming Q1 and budget-honesty naming B4, and each of
// the three omissions alone is caught. The honest counterpart passes both.
func TestProviderSuiteProbesEveryKindAndATightBudget(t *testing.T) {
	docs := []frame.Frame{tenTokenFrame("a", frame.KindDoc), tenTokenFrame("b", frame.KindDoc)}
	kinds := []frame.Kind{frame.KindDoc, frame.KindSnippet}
	ignoreAll := func(frame.Query) []frame.Frame { return docs }
	for _, tc := range []struct {
		name   string
		answer func(frame.Query) []frame.Frame
		fails  map[string]string // check → the rule its evidence names
	}{
		{"ignores all three", ignoreAll, map[string]string{checkKindsFilter: "Q1", checkBudgetHonesty: "B4"}},
		{"ignores kinds", func(q frame.Query) []frame.Frame { q.Kinds = nil; return serveWithin(docs)(q) },
			map[string]string{checkKindsFilter: "Q1"}},
		{"ignores max_frames", func(q frame.Query) []frame.Frame { q.MaxFrames = 100; return serveWithin(docs)(q) },
			map[string]string{checkBudgetHonesty: "B4"}},
		{"ignores max_tokens", func(q frame.Query) []frame.Frame { q.MaxTokens = 1 << 20; return serveWithin(docs)(q) },
			map[string]string{checkBudgetHonesty: "B1"}},
		{"honest", serveWithin(docs), nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rep := runScripted(t, answerHTTP(t, kinds, tc.answer))
			for _, name := range []string{checkKindsFilter, checkBudgetHonesty} {
				c, _ := rep.Check(name)
				rule, fail := tc.fails[name]
				switch {
				case fail && (c.Status != Fail || !strings.Contains(c.Evidence, rule+": ")):
					t.Errorf("%s: %s, want a failure naming %s; evidence: %s", name, c.Status, rule, c.Evidence)
				case !fail && c.Status != Pass:
					t.Errorf("%s: %s, want pass; evidence: %s", name, c.Status, c.Evidence)
				}
			}
		})
	}
}

// TestAsOfComparesInstants: a frame valid from half a second after the
// as_of pin is late, though "…T00:00:00.5Z" sorts before "…T00:00:00Z" as a
// string; one valid from the pin itself, spelt with a zero fraction, is not.
func TestAsOfComparesInstants(t *testing.T) {
	for _, tc := range []struct {
		validFrom string
		want      Status
	}{
		{"2026-07-01T00:00:00.5Z", Fail},
		{"2026-07-01T00:00:00.000Z", Pass},
		{"2026-06-30T23:59:60Z", Pass}, // a leap second, before the pin
	} {
		f := tenTokenFrame("late", frame.KindDoc)
		f.ValidFrom = tc.validFrom
		rep := runScripted(t, answerHTTP(t, nil, func(frame.Query) []frame.Frame { return []frame.Frame{f} }))
		if c, _ := rep.Check(checkAsOf); c.Status != tc.want {
			t.Errorf("valid_from %s: as-of-temporal %s, want %s; evidence: %s", tc.validFrom, c.Status, tc.want, c.Evidence)
		}
	}
}
