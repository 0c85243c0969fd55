package host

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/ctxkit/ctxkit/frame"
	"github.com/ctxkit/ctxkit/wire"
)

// filler is an honest provider that uses all it is given: max_frames
// frames whose declared (B3-exact) costs add up to max_tokens, with
// attributes inside attrAllowance.
// Its handshake and verify are honest's.
type filler struct{ honest }

func (*filler) Query(ctx context.Context, q *frame.Query) (*wire.Result, error) {
	var out []frame.Frame
	n := q.MaxFrames
	for i := range n {
		tokens := q.MaxTokens / n
		if i < q.MaxTokens%n {
			tokens++
		}
		if tokens == 0 {
			continue
		}
		id := fmt.Sprintf("f%02d", i)
		// A label of 20 bytes, an id of 3 and the kind doc: 26 < 64.
		out = append(out, frame.Frame{ID: id, Kind: frame.KindDoc, Title: id, Score: 0.5,
			Content: strings.Repeat("x", int(tokens)*4), TokenCost: tokens,
			CitationLabel: "notes/" + id + ":1-99999999"})
	}
	return &wire.Result{Frames: out}, nil
}

// An honest provider that fills its share exactly must have every frame
// composed: the host reserves the fences out of the share it asks for.
// On a host that sends the whole share as max_tokens the frames' fences
// push the rendering over the budget and frames are dropped.
func TestHonestProviderFitsItsShare(t *testing.T) {
	for _, budget := range []uint32{64, 100, 333, 1000, 2000, 20000} {
		for _, providers := range []int{1, 2, 3} {
			h := New(nil)
			for i := range providers {
				if err := h.AddInProcess(fmt.Sprintf("p%d", i), &filler{honest{name: "filler"}}); err != nil {
					t.Fatal(err)
				}
			}
			q := &frame.Query{Goal: "g", MaxFrames: 16}
			fo := h.QueryAllBudgeted(context.Background(), q, budget)
			res := fo.Compose(int(budget), nil)
			if budget/uint32(providers) > FrameChrome("p0") && len(fo.Accepted()) == 0 {
				t.Errorf("budget %d, %d providers: nothing accepted: %+v", budget, providers, fo.Outcomes)
			}
			if ex := res.Audit.Excluded(); len(ex) > 0 {
				t.Errorf("budget %d, %d providers: honest frames excluded %v (used %d)", budget, providers, ex, res.Audit.TokensUsed)
			}
			var shares uint32
			for _, o := range fo.Outcomes {
				shares += o.Share
			}
			if shares != budget {
				t.Errorf("budget %d: shares add up to %d", budget, shares)
			}
			h.Close(context.Background())
		}
	}
}

// A share that cannot hold one fence is not sent to the provider: the leg
// says why instead of returning a frame that can never be composed.
func TestShareTooSmallIsNotQueried(t *testing.T) {
	h := New(nil)
	defer h.Close(context.Background())
	seen := make(chan frame.Query, 1)
	h.AddInProcess("p", &honest{seen: seen, frames: []frame.Frame{mkFrame("a", "abcd", 0.5)}})
	fo := h.QueryAllBudgeted(context.Background(), &frame.Query{Goal: "g", MaxFrames: 16}, FrameChrome("p"))
	o := fo.Outcomes[0]
	if o.Status != StatusShareTooSmall || !o.Status.Skipped() || len(seen) != 0 {
		t.Fatalf("leg = %v, queried %d times", o.Status, len(seen))
	}
	if !strings.Contains(o.Error(), fmt.Sprint(FrameChrome("p"))) {
		t.Errorf("message does not say what a fence costs: %q", o.Error())
	}
	// One token more holds a fence and one content token.
	fo = h.QueryAllBudgeted(context.Background(), &frame.Query{Goal: "g", MaxFrames: 16}, FrameChrome("p")+1)
	if o := fo.Outcomes[0]; o.Status != StatusFrames || o.Query.MaxFrames != 1 || o.Query.MaxTokens != 1 {
		t.Errorf("leg = %v max_frames %d max_tokens %d", o.Status, o.Query.MaxFrames, o.Query.MaxTokens)
	}
}

// legShare's invariants over many shares and frame limits: the query
// never asks for more than the share once fences are counted, keeps at
// least one frame, and leaves max_frames alone when the share is large.
func TestLegShareInvariants(t *testing.T) {
	for _, p := range []string{"a", "files", `x"<y`} {
		chrome := FrameChrome(p)
		for share := uint32(0); share < 3000; share += 7 {
			for _, mf := range []uint32{0, 1, 3, 16, 64} {
				q, ok := legShare(&frame.Query{Goal: "g", MaxFrames: mf}, p, share)
				switch {
				case mf == 0:
					if !ok || q.MaxTokens != share {
						t.Fatalf("max_frames 0: %+v %v", q, ok)
					}
				case share <= chrome:
					if ok {
						t.Fatalf("share %d ≤ chrome %d accepted", share, chrome)
					}
				default:
					if !ok || q.MaxFrames < 1 || q.MaxFrames > mf || q.MaxTokens < 1 || q.MaxTokens+q.MaxFrames*chrome != share {
						t.Fatalf("%q share %d mf %d: %+v %v (chrome %d)", p, share, mf, q, ok, chrome)
					}
					if share >= 2*chrome*mf && q.MaxFrames != mf {
						t.Fatalf("share %d cut max_frames %d to %d", share, mf, q.MaxFrames)
					}
				}
			}
		}
	}
}
