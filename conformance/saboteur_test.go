package conformance

import (
	"context"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/ctxkit/ctxkit/frame"
)

// modelHost is a small, correct composing host written for these tests
// (per-leg B2/B4 audit, per-frame F1/F3/B3 validation, digest dedup,
// score-then-FrameID ranking, first-fit packing). Each flag makes it wrong
// in exactly one way, turning it into one of the saboteurs.
type modelHost struct {
	admitsEverything bool // packs nothing out: no budget
	truncates        bool // stops at the first frame that does not fit, reporting nothing after it
	ignoresAudit     bool // reads raw replies, skipping the per-provider B2/B4 audit
	unstable         bool // reverses the admitted sequence on every other call
	admitsNothing    bool // reports every frame dropped
	arrivalTies      bool // breaks score ties by registration order instead of FrameID
	noDedup          bool // admits the same evidence twice
	skipsValidation  bool // admits frames breaking F1/F3/B3

	calls int
}

type modelOffer struct {
	provider string
	arrival  int
	f        *frame.Frame
}

func (o modelOffer) ref() FrameRef { return FrameRef{Provider: o.provider, Frame: o.f.ID} }

func modelValid(f *frame.Frame) bool {
	return f.Score >= 0 && f.Score <= 1 && strings.TrimSpace(f.CitationLabel) != "" &&
		int(f.TokenCost) == frame.BudgetTokens(f.Content)
}

func (m *modelHost) Compose(_ context.Context, s *Scenario) (*Composition, error) {
	m.calls++
	var offers []modelOffer
	for _, p := range s.Providers {
		var declared int64
		for _, f := range p.Frames {
			declared += int64(f.TokenCost)
		}
		if !m.ignoresAudit && (declared > int64(s.Query.MaxTokens) || len(p.Frames) > int(s.Query.MaxFrames)) {
			continue // B2/B4: the whole leg is quarantined
		}
		for _, f := range p.Frames {
			if !m.skipsValidation && !modelValid(f) {
				continue
			}
			offers = append(offers, modelOffer{provider: p.ID, arrival: len(offers), f: f})
		}
	}
	c := &Composition{}
	less := func(a, b modelOffer) bool {
		if a.f.Score != b.f.Score {
			return a.f.Score > b.f.Score
		}
		if m.arrivalTies {
			return a.arrival < b.arrival
		}
		return a.f.Identity(a.provider).Compare(b.f.Identity(b.provider)) < 0
	}
	sort.SliceStable(offers, func(i, j int) bool { return less(offers[i], offers[j]) })
	if !m.noDedup {
		var kept []modelOffer
		for _, o := range offers {
			dup := false
			for _, k := range kept {
				if o.f.ContentDigest != "" && o.f.ContentDigest == k.f.ContentDigest {
					dup = true
				}
			}
			if dup {
				c.Dropped = append(c.Dropped, o.ref())
			} else {
				kept = append(kept, o)
			}
		}
		offers = kept
	}
	remaining := int(s.Query.MaxTokens)
	for _, o := range offers {
		cost := frame.BudgetTokens(o.f.Content)
		switch {
		case m.admitsEverything || cost <= remaining:
			c.Admitted = append(c.Admitted, o.ref())
			remaining -= cost
		case m.truncates:
			return m.finish(c), nil
		default:
			c.Dropped = append(c.Dropped, o.ref())
		}
	}
	return m.finish(c), nil
}

func (m *modelHost) finish(c *Composition) *Composition {
	if m.unstable && m.calls%2 == 1 {
		slices.Reverse(c.Admitted)
	}
	if m.admitsNothing {
		c.Dropped = append(c.Dropped, c.Admitted...)
		c.Admitted = nil
	}
	return c
}

// TestSaboteurMatrix proves the composition suite: the model host passes
// everything, and each saboteur, wrong in exactly one way, fails exactly the
// checks that catch that fault and passes the others.
func TestSaboteurMatrix(t *testing.T) {
	all := compositionChecks()
	cases := []struct {
		name string
		host *modelHost
		want []string
	}{
		{"model", &modelHost{}, nil},
		{"admits-everything", &modelHost{admitsEverything: true}, []string{checkBudgetBound}},
		{"silently-truncates", &modelHost{truncates: true}, []string{checkBudgetBound, checkTotalPartition}},
		{"ignores-the-audit", &modelHost{ignoresAudit: true}, []string{checkQuarantine}},
		{"unstable-order", &modelHost{unstable: true}, []string{checkDeterminism, checkArrivalOrder}},
		{"admits-nothing", &modelHost{admitsNothing: true}, all},
		{"arrival-tie-break", &modelHost{arrivalTies: true}, []string{checkArrivalOrder}},
		{"no-dedup", &modelHost{noDedup: true}, []string{checkDuplicateEvidence}},
		{"skips-validation", &modelHost{skipsValidation: true}, []string{checkInvalidFrames}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rep := RunComposition(context.Background(), tc.host, &CompositionOptions{Target: tc.name})
			if got := len(rep.Checks); got != len(all) {
				t.Fatalf("report has %d checks, want %d", got, len(all))
			}
			for i, c := range rep.Checks {
				if c.Name != all[i] {
					t.Errorf("check %d is %q, want %q", i, c.Name, all[i])
				}
				wantFail := slices.Contains(tc.want, c.Name)
				if wantFail != (c.Status == Fail) {
					t.Errorf("%s: status %s, want fail=%v; evidence: %s", c.Name, c.Status, wantFail, c.Evidence)
				}
				if c.Status == Fail {
					for _, part := range []string{"sent:", "got:", "expected:"} {
						if !strings.Contains(c.Evidence, part) {
							t.Errorf("%s: evidence lacks %q: %s", c.Name, part, c.Evidence)
						}
					}
				}
				if c.Status == Skipped {
					t.Errorf("%s skipped: composition checks always apply", c.Name)
				}
			}
			if rep.Passed() != (len(tc.want) == 0) {
				t.Errorf("Passed() = %v with failures %v", rep.Passed(), rep.Failed())
			}
		})
	}
}

func TestCancelledRunFailsEveryCheckWithEvidence(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	rep := RunComposition(ctx, &modelHost{}, nil)
	if len(rep.Failed()) != len(compositionChecks()) {
		t.Fatalf("failed %v", rep.Failed())
	}
	for _, c := range rep.Checks {
		if !strings.Contains(c.Evidence, "context canceled") || !strings.Contains(c.Evidence, "expected:") {
			t.Errorf("%s: %s", c.Name, c.Evidence)
		}
	}
}
