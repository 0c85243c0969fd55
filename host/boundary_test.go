package host

import (
	"context"
	"strings"
	"testing"

	"github.com/ctxkit/ctxkit/frame"
)

// B2 and B4 are strict inequalities: a reply declaring exactly max_tokens,
// or holding exactly max_frames frames, is within its limits; one token or
// one frame more drops the leg.
func TestBudgetAndFrameLimitsAtTheBoundary(t *testing.T) {
	h := newTestHost(t, nil)
	fifty := strings.Repeat("x", 200) // 50 budget tokens
	h.AddInProcess("exact-budget", &honest{frames: []frame.Frame{
		mkFrame("a", fifty, 0.5), mkFrame("b", fifty, 0.4)}})
	h.AddInProcess("one-token-over", &honest{frames: []frame.Frame{
		mkFrame("a", fifty, 0.5), mkFrame("b", fifty+"y", 0.4)}})
	h.AddInProcess("exact-frames", &honest{frames: []frame.Frame{
		mkFrame("a", "1", 0.5), mkFrame("b", "2", 0.4), mkFrame("c", "3", 0.3)}})
	h.AddInProcess("one-frame-over", &honest{frames: []frame.Frame{
		mkFrame("a", "1", 0.5), mkFrame("b", "2", 0.4), mkFrame("c", "3", 0.3), mkFrame("d", "4", 0.2)}})
	q := &frame.Query{Goal: "probe", MaxFrames: 3, MaxTokens: 100}
	fo := h.QueryAll(context.Background(), q)
	want := map[string]Status{
		"exact-budget":   StatusFrames,
		"one-token-over": StatusBudgetLie,
		"exact-frames":   StatusFrames,
		"one-frame-over": StatusFrameFlood,
	}
	for _, o := range fo.Outcomes {
		if o.Status != want[o.Provider] {
			t.Errorf("%s: status %v, want %v (claimed %d, returned %d)", o.Provider, o.Status, want[o.Provider], o.ClaimedTokens, o.ReturnedFrames)
		}
	}
	if got := len(fo.Accepted()); got != 5 {
		t.Errorf("accepted %d frames, want 5 (2 + 3)", got)
	}
}
