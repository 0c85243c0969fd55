package server

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/ctxkit/ctxkit/compose"
	"github.com/ctxkit/ctxkit/frame"
	"github.com/ctxkit/ctxkit/internal/loadgen"
	"github.com/ctxkit/ctxkit/trust"
)

// composeForTest runs a compose request body the way the handler does and
// returns the result and whether it carries a cache report; ok is false
// when the body is refused before composition.
func composeForTest(h *Handler, body []byte) (res *compose.Result, reported, ok bool) {
	var b composeBody
	if decodeJSON(body, &b) != nil || b.Budget == nil || *b.Budget < 0 || b.offers(h) != nil {
		return nil, false, false
	}
	offers := b.ComposeRequest.Offers
	opts, err := b.Options()
	if err != nil {
		return nil, false, false
	}
	valid, _, err := h.checkOffers(context.Background(), offers, true)
	if err != nil {
		return nil, false, false
	}
	res = compose.ForPrompt(valid, *b.Budget, opts)
	return res, opts.Placement != compose.EdgesByRank || opts.Previous != nil || opts.Cache != nil, true
}

// testBody builds a compose request of valid frames, one per content, from
// providers p0, p1, ... in turn (frames of equal content length share a
// file link, so they are duplicates); extra members are merged into the body.
func testBody(t testing.TB, budget int, extra map[string]any, contents ...string) []byte {
	offers := make([]compose.Offer, len(contents))
	for i, c := range contents {
		f := &frame.Frame{ID: fmt.Sprintf("f:%d", i), Kind: frame.KindSnippet, Title: fmt.Sprintf("T <%d> & \u2028 é", i),
			Content: c, Score: float32(len(contents)-i) / 10, TokenCost: uint32(frame.BudgetTokens(c)),
			CitationLabel: fmt.Sprintf("doc %d.md L1-2", i)}
		if i%4 != 1 { // equal file links make duplicates
			f.Provenance = []frame.Provenance{{Type: "file", URI: fmt.Sprintf("file:///doc%d.md", len(c)), Range: "L1-2",
				Digest: fmt.Sprintf("sha256:%x", sha256.Sum256([]byte(c)))}}
		}
		offers[i] = compose.Offer{Provider: fmt.Sprintf("p%d", i%3), Frame: f}
	}
	m := map[string]any{"offers": offers, "budget": budget}
	for k, v := range extra {
		m[k] = v
	}
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func encodeSeeds(t testing.TB) [][]byte {
	odd := "x\u2029y <tag> \"q\" \\ \b\f\t\u0001\u007f é 世界"
	long := strings.Repeat("a long frame body ", 40)
	return [][]byte{
		testBody(t, 200, nil, odd, odd, long, "short one", "another short one"),
		testBody(t, 0, nil, "c"),
		testBody(t, 1000, map[string]any{"strategy": "round-robin-by-rank", "packer": "stop-at-first-miss"}),
		testBody(t, 150, map[string]any{"strategy": "per-provider-quota", "quota": 1, "packer": "stop-at-first-miss"},
			"first", long, "the third", "first", "fifth frame"),
		testBody(t, 400, map[string]any{"strategy": "trust-weighted", "weights": map[string]int{"p1": 5}}, "a", "b", "c", long),
	}
}

// TestAppendResultMatchesMarshal checks that the handler's encoder writes
// compose.Result.MarshalJSON's bytes on the load-test body and on results
// with every disposition, escapes and provenance.
func TestAppendResultMatchesMarshal(t *testing.T) {
	h := New(nil)
	bodies := [][]byte{loadgen.ComposeBody(20, 1024), loadgen.ComposeBody(5, 10)}
	bodies = append(bodies, encodeSeeds(t)...)
	kinds := map[string]bool{}
	for i, body := range bodies {
		res, reported, ok := composeForTest(h, body)
		if !ok || reported {
			t.Fatalf("body %d: not composed (ok %v, reported %v)", i, ok, reported)
		}
		for _, e := range res.Audit.Entries {
			k := e.Disposition.String()
			if e.Disposition == compose.Excluded {
				k += "/" + e.Reason.Kind.String()
			}
			kinds[k] = true
		}
		checkAppendResult(t, res)
	}
	for _, k := range []string{"included", "excluded/duplicate", "excluded/over_budget", "excluded/packing_stopped"} {
		if !kinds[k] {
			t.Errorf("no audit entry %s among the test results: %v", k, kinds)
		}
	}
}

// TestAppendResultAttestations checks the reuse of attestation encodings
// across entries whose states differ, repeat and come back.
func TestAppendResultAttestations(t *testing.T) {
	res, _, ok := composeForTest(New(nil), loadgen.ComposeBody(8, 64))
	if !ok {
		t.Fatal("not composed")
	}
	states := []trust.State{trust.NewUnattested(), trust.NewUnattested(), trust.NewAttested("k1", "a <1>", true),
		trust.NewAttested("k1", "a <1>", false), {}, trust.NewNoTrustedKey("k2"), trust.NewUnattested(), trust.NewInvalid(trust.Valid)}
	for i := range res.Audit.Entries {
		res.Audit.Entries[i].Attestation = states[i%len(states)]
	}
	checkAppendResult(t, res)
	res.Audit.Entries[0].Attestation = trust.NewInvalid(0) // MarshalJSON refuses a verdict-less invalid state
	if _, err := res.AppendJSON(nil); err == nil {
		t.Fatal("AppendJSON accepted an invalid state without a verdict")
	}
}

func checkAppendResult(t *testing.T, res *compose.Result) {
	t.Helper()
	want, wantErr := res.MarshalJSON()
	got, gotErr := res.AppendJSON(nil)
	if (wantErr == nil) != (gotErr == nil) {
		t.Fatalf("MarshalJSON error %v, AppendJSON error %v", wantErr, gotErr)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("encodings differ:\nAppendJSON  %s\nMarshalJSON  %s", got, want)
	}
}

// FuzzAppendResultMatchesMarshal composes fuzzed request bodies and checks
// that Result.AppendJSON writes exactly compose.Result.MarshalJSON's bytes.
func FuzzAppendResultMatchesMarshal(f *testing.F) {
	f.Add(loadgen.ComposeBody(4, 40))
	for _, b := range encodeSeeds(f) {
		f.Add(b)
	}
	h := New(nil)
	f.Fuzz(func(t *testing.T, body []byte) {
		res, reported, ok := composeForTest(h, body)
		if !ok || reported {
			return
		}
		checkAppendResult(t, res)
	})
}
