package cachesim

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	"github.com/ctxkit/ctxkit/compose"
	"github.com/ctxkit/ctxkit/frame"
)

// issueConfig is the acceptance scenario of issue #10: T = 30, C = 10%,
// J = 0.05, 60 frames offered, a budget for about 30.
func issueConfig(seed uint64, churn Churn) Config {
	return Config{Turns: 30, Offered: 60, ChurnPercent: 10, Jitter: 0.05, Churn: churn, Seed: seed}
}

// survivingPrefixBound is the expected fraction of a block of n frames that
// comes before the first frame to vanish, when each vanishes independently
// with probability q: sum over k = 1..n of (1-q)^k, over n. Under uniform
// churn no placement can share more with the previous prompt, whatever its
// order, because which frames vanish does not depend on where they sit.
func survivingPrefixBound(n int, q float64) float64 {
	s := 0.0
	for k := 1; k <= n; k++ {
		s += math.Pow(1-q, float64(k))
	}
	return s / float64(n)
}

func TestIssueScenario(t *testing.T) {
	seeds := []uint64{1, 2, 3}
	mean := map[Churn]map[compose.Placement]float64{UniformChurn: {}, TailChurn: {}}
	included := 0.0
	for _, churn := range []Churn{UniformChurn, TailChurn} {
		for _, seed := range seeds {
			c := issueConfig(seed, churn)
			s := NewSession(c)
			for _, p := range compose.Placements() {
				r := s.Run(c, p)
				mean[churn][p] += r.SharedPrefixFraction / float64(len(seeds))
			}
			if churn == UniformChurn {
				s.walk(c, compose.EdgesByRank, func(_ int, tr turn) {
					included += float64(len(tr.Result.Citations)) / float64(len(seeds)*c.Turns)
				})
			}
			var b bytes.Buffer
			if err := WriteTable(&b, c, Run(c, compose.Placements()...)); err != nil {
				t.Fatal(err)
			}
			t.Logf("seed %d\n%s", seed, b.String())
		}
	}
	if included < 25 || included > 35 {
		t.Fatalf("the budget holds %.1f frames on average, want about 30", included)
	}
	for churn, m := range mean {
		sf, ca, eb := m[compose.StableFirst], m[compose.Canonical], m[compose.EdgesByRank]
		t.Logf("%s churn: mean shared prefix stable-first %.1f%%, canonical %.1f%%, edges-by-rank %.1f%%", churn, 100*sf, 100*ca, 100*eb)
		if !(sf > ca && ca > eb) {
			t.Errorf("%s churn: want stable-first > canonical > edges-by-rank, got %.3f %.3f %.3f", churn, sf, ca, eb)
		}
	}
	// Issue #10 asks for a mean of at least 70% here. Under uniform churn
	// that is out of reach for any placement: about 10% of the ~30
	// included frames vanish each turn wherever they sit, and a prefix
	// ends at the first of them. Stable-first must come near that bound
	// (score jitter drops a few more frames near the budget's edge, which
	// the bound leaves out) and cannot beat it by more than the preamble's
	// share.
	bound := survivingPrefixBound(30, 0.10)
	sf := mean[UniformChurn][compose.StableFirst]
	t.Logf("uniform churn: bound for any placement ≈ %.1f%%; stable-first %.1f%% (%.0f%% of the bound)", 100*bound, 100*sf, 100*sf/bound)
	if sf < 0.7*bound || sf > bound+0.05 {
		t.Errorf("stable-first %.3f is not near the surviving-prefix bound %.3f", sf, bound)
	}
}

// The issue's scenario with stable-first and a sticky margin of 0.1 (twice
// the jitter). Under tail churn, where most of the prefix losses are
// frames still offered but swapped out by jitter and near-ties, the margin
// lifts the mean shared prefix over seeds 1-3 above the issue's 70%. Under
// uniform churn nearly every prefix ends at a frame that vanished from the
// offers, which no margin can keep: the margin must cost nothing there.
func TestStickyIssueScenario(t *testing.T) {
	seeds := []uint64{1, 2, 3}
	type key struct {
		churn  Churn
		margin float32
	}
	mean := map[key]float64{}
	vanished, swapped := 0, 0 // uniform churn, sticky: why each compared turn's prefix ended
	for _, churn := range []Churn{UniformChurn, TailChurn} {
		for _, m := range []float32{0, 0.1} {
			for _, seed := range seeds {
				c := issueConfig(seed, churn)
				c.StickyMargin = m
				s := NewSession(c)
				r := s.Run(c, compose.StableFirst)
				if r.StickyMargin != m {
					t.Fatalf("report margin %v, want %v", r.StickyMargin, m)
				}
				// The margin's trade shows in the audit: frames held in,
				// and frames a fresh ranking would have taken instead.
				if (m == 0) != (r.HeldPerTurn == 0 && r.DisplacedPerTurn == 0) {
					t.Fatalf("%s seed %d margin %g: held %.2f displaced %.2f per turn", churn, seed, m, r.HeldPerTurn, r.DisplacedPerTurn)
				}
				mean[key{churn, m}] += r.SharedPrefixFraction / float64(len(seeds))
				if churn != UniformChurn || m == 0 {
					continue
				}
				var prev *compose.Result
				s.walk(c, compose.StableFirst, func(turn int, tr turn) {
					if prev != nil {
						switch prefixEnd(prev, tr.Result, s.Turns[turn]) {
						case "vanished":
							vanished++
						case "swapped":
							swapped++
						}
					}
					prev = tr.Result
				})
			}
		}
	}
	for _, churn := range []Churn{UniformChurn, TailChurn} {
		for _, m := range []float32{0, 0.1} {
			t.Logf("%s churn, margin %g: stable-first mean shared prefix %.1f%%", churn, m, 100*mean[key{churn, m}])
		}
	}
	t.Logf("uniform churn, margin 0.1: prefix ended at a vanished frame on %d turns, at a swapped-out one on %d", vanished, swapped)
	if got := mean[key{TailChurn, 0.1}]; got < 0.70 || got <= mean[key{TailChurn, 0}] {
		t.Errorf("tail churn: stable-first + sticky shares %.3f (without the margin %.3f), want ≥ 0.70 and more",
			got, mean[key{TailChurn, 0}])
	}
	if got, base := mean[key{UniformChurn, 0.1}], mean[key{UniformChurn, 0}]; got < base-0.01 {
		t.Errorf("uniform churn: the margin costs prefix: %.3f against %.3f", got, base)
	}
	if vanished < 10*swapped {
		t.Errorf("uniform churn: %d prefixes ended at a vanished frame, %d at a swapped-out one; want vanishing to dominate",
			vanished, swapped)
	}
}

// prefixEnd says why res's stable part ends before the whole of prev:
// "vanished" when the first frame of prev it lacks is no longer offered,
// "swapped" when it is offered but excluded, "" when all of prev is kept.
func prefixEnd(prev, res *compose.Result, offers []compose.Offer) string {
	offered := map[frame.ID]bool{}
	for _, o := range offers {
		offered[o.ID()] = true
	}
	included := map[frame.ID]bool{}
	for _, id := range res.Audit.Included() {
		included[id] = true
	}
	for _, c := range prev.Citations {
		switch {
		case !offered[c.Frame]:
			return "vanished"
		case !included[c.Frame]:
			return "swapped"
		}
	}
	return ""
}

// Without churn only score jitter moves frames: stable-first keeps nearly
// the whole prompt, the value fold almost none of it.
func TestJitterOnly(t *testing.T) {
	c := Config{Turns: 30, ChurnPercent: 0, Jitter: 0.05, Seed: 7}
	rs := Run(c, compose.Placements()...)
	if rs[2].SharedPrefixFraction < 0.90 || rs[2].ReusableFraction < 0.90 {
		t.Errorf("stable-first shares %.3f (reusable %.3f) under jitter alone, want ≥ 0.90", rs[2].SharedPrefixFraction, rs[2].ReusableFraction)
	}
	// With two marks the host reads only where the previous request marked:
	// when nothing drops, the whole previous prompt.
	if rs[2].MarkedReusableFraction < 0.5 || rs[2].MarkedReusableFraction > rs[2].ReusableFraction {
		t.Errorf("stable-first, two marks: reusable %.3f (ideal %.3f)", rs[2].MarkedReusableFraction, rs[2].ReusableFraction)
	}
	if rs[0].MarkedReusableFraction != 0 {
		t.Errorf("edges-by-rank, two marks: reusable %.3f", rs[0].MarkedReusableFraction)
	}
	if rs[0].SharedPrefixFraction > 0.2 || rs[0].BestAtEdge != 1 {
		t.Errorf("edges-by-rank shares %.3f, best at edge %.2f", rs[0].SharedPrefixFraction, rs[0].BestAtEdge)
	}
	// A margin of twice the jitter stops the swaps at the budget's edge:
	// the prompt never changes.
	c.StickyMargin = 0.1
	if r := Run(c, compose.StableFirst)[0]; r.SharedPrefixFraction != 1 || r.Relaid != 1 {
		t.Errorf("stable-first + sticky 0.1 shares %.4f under jitter alone and re-laid %d turns, want 1 and only the first",
			r.SharedPrefixFraction, r.Relaid)
	}
	if rs[2].CostPerTurn >= rs[1].CostPerTurn || rs[1].CostPerTurn >= rs[0].CostPerTurn {
		t.Errorf("costs per turn: edges %.5f canonical %.5f stable-first %.5f", rs[0].CostPerTurn, rs[1].CostPerTurn, rs[2].CostPerTurn)
	}
	// Nothing is reused under edges-by-rank, so all of it is written at
	// 1.25× of the uncached price.
	if got := rs[0].CostPerTurn / rs[0].UncachedCostPerTurn; math.Abs(got-anthropicWrite) > 0.01 {
		t.Errorf("edges-by-rank costs %.3f× uncached, want %.2f×", got, anthropicWrite)
	}
}

// The composer's stable split is what a prefix cache can actually reuse:
// on every turn of every placement, the measured shared prefix, cut back
// to a frame boundary, is exactly Result.Stable; and stable-first keeps
// everything the previous prompt allows: its shared prefix reaches the
// first frame of the previous prompt that is no longer included.
func TestStableSplitMatchesMeasuredReuse(t *testing.T) {
	for _, churn := range []Churn{UniformChurn, TailChurn} {
		c := Config{Turns: 12, ChurnPercent: 10, Jitter: 0.05, Churn: churn, Seed: 11}
		s := NewSession(c)
		for _, p := range compose.Placements() {
			var prev *compose.Result
			s.walk(c, p, func(turn int, tr turn) {
				res := tr.Result
				if tr.MarkedReadTokens > tr.ReadTokens || tr.ReadTokens+tr.WriteTokens+tr.BaseTokens !=
					tr.MarkedReadTokens+tr.MarkedWriteTokens+tr.MarkedBaseTokens {
					t.Fatalf("%s turn %d: marked host reads %d of %d tokens, the ideal cache %d", p, turn,
						tr.MarkedReadTokens, tr.MarkedReadTokens+tr.MarkedWriteTokens+tr.MarkedBaseTokens, tr.ReadTokens)
				}
				if turn > 0 {
					if got := frameBoundary(boundaries(res.Blocks()), tr.SharedPrefixBytes); got != res.Cache.StablePrefixBytes {
						t.Fatalf("%s turn %d: reusable prefix %d bytes, stable split %d", p, turn, got, res.Cache.StablePrefixBytes)
					}
					if p == compose.StableFirst {
						if bound := survivingBytes(prev, res); tr.SharedPrefixBytes < bound {
							t.Fatalf("turn %d: stable-first shares %d bytes, the previous prompt allows %d", turn, tr.SharedPrefixBytes, bound)
						}
					}
				} else if res.Cache.StablePrefixBytes != len(compose.Preamble) {
					t.Fatalf("%s: first turn's stable part is %d bytes", p, res.Cache.StablePrefixBytes)
				}
				prev = res
			})
		}
	}
}

// survivingBytes is the length of prev's prompt up to its first frame that
// res does not include.
func survivingBytes(prev, res *compose.Result) int {
	inc := map[frame.ID]bool{}
	for _, id := range res.Audit.Included() {
		inc[id] = true
	}
	blocks := prev.Blocks()
	n := len(blocks[0])
	for i, c := range prev.Citations {
		if !inc[c.Frame] {
			return n
		}
		n += len(blocks[i+1])
	}
	return n
}

func TestDeterministic(t *testing.T) {
	c := Config{Turns: 8, ChurnPercent: 25, Jitter: 0.1, Churn: TailChurn, Seed: 99}
	a, b := Run(c, compose.Placements()...), Run(c, compose.Placements()...)
	if !reflect.DeepEqual(a, b) {
		t.Fatalf("same config, different reports:\n%+v\n%+v", a, b)
	}
	other := Run(Config{Turns: 8, ChurnPercent: 25, Jitter: 0.1, Churn: TailChurn, Seed: 100}, compose.StableFirst)
	if reflect.DeepEqual(a[2], other[0]) {
		t.Fatal("the seed changes nothing")
	}
}

func TestChurnReplacesTheRequestedShare(t *testing.T) {
	for _, churn := range []Churn{UniformChurn, TailChurn} {
		s := NewSession(Config{Turns: 5, Offered: 40, ChurnPercent: 25, Jitter: 0.05, Churn: churn, Seed: 3})
		for tn := 1; tn < len(s.Turns); tn++ {
			before := map[string]float32{}
			for _, o := range s.Turns[tn-1] {
				before[o.Frame.ID] = o.Frame.Score
			}
			replaced := 0
			for _, o := range s.Turns[tn] {
				if _, ok := before[o.Frame.ID]; !ok {
					replaced++
				}
			}
			if replaced != 10 || len(s.Turns[tn]) != 40 {
				t.Fatalf("%s turn %d: %d of %d frames replaced, want 10 of 40", churn, tn, replaced, len(s.Turns[tn]))
			}
		}
	}
}

func BenchmarkSimulate(b *testing.B) {
	c := issueConfig(1, UniformChurn)
	s := NewSession(c)
	for _, p := range compose.Placements() {
		b.Run(p.String(), func(b *testing.B) {
			for b.Loop() {
				s.Run(c, p)
			}
		})
	}
}

// BenchmarkComposeTurn is one composition of 60 offers under each
// placement, given the previous turn's layout.
func BenchmarkComposeTurn(b *testing.B) {
	c := issueConfig(1, UniformChurn)
	s := NewSession(c)
	for _, p := range compose.Placements() {
		prev := compose.ForPrompt(s.Turns[0], s.Budget, &compose.Options{Placement: p})
		opts := &compose.Options{Placement: p, Previous: prev.Layout}
		b.Run(p.String(), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				compose.ForPrompt(s.Turns[1], s.Budget, opts)
			}
		})
	}
	// Stable-first with a sticky margin: one more ranking and packing walk.
	prev := compose.ForPrompt(s.Turns[0], s.Budget, &compose.Options{Placement: compose.StableFirst})
	opts := &compose.Options{Placement: compose.StableFirst, Previous: prev.Layout, StickyMargin: 0.1}
	b.Run("stable-first+sticky", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			compose.ForPrompt(s.Turns[1], s.Budget, opts)
		}
	})
}

// The acceptance scenario of issue #10 keeps every composer invariant on
// every turn, under every placement and under stable-first with the sticky
// margin: the budget bound, the audit as a total partition of the offers,
// a prompt that is exactly the preamble and the fenced blocks of the cited
// frames in citation order, a stable/volatile split that re-joins to the
// prompt, and determinism for a given previous layout (the same bytes from
// shuffled offers and from a layout that went through its stored JSON).
func TestIssueScenarioKeepsTheComposerInvariants(t *testing.T) {
	type variant struct {
		p      compose.Placement
		margin float32
	}
	variants := []variant{{compose.StableFirst, 0.1}}
	for _, p := range compose.Placements() {
		variants = append(variants, variant{p, 0})
	}
	rng := rand.New(rand.NewPCG(10, 10))
	for _, churn := range []Churn{UniformChurn, TailChurn} {
		for _, seed := range []uint64{1, 2, 3} {
			c := issueConfig(seed, churn)
			s := NewSession(c)
			for _, v := range variants {
				c.StickyMargin = v.margin
				var prev *compose.Result
				s.walk(c, v.p, func(turn int, tr turn) {
					where := fmt.Sprintf("%s seed %d %s margin %g turn %d", churn, seed, v.p, v.margin, turn)
					checkTurn(t, where, s.Turns[turn], s.Budget, tr.Result)
					opts := &compose.Options{Placement: v.p, StickyMargin: v.margin,
						Cache: &compose.CacheOptions{MinPrefixTokens: compose.DefaultMinPrefixTokens}}
					if prev != nil {
						stored, err := json.Marshal(prev.Layout)
						if err != nil {
							t.Fatal(err)
						}
						if opts.Previous, err = compose.ParseLayout(stored); err != nil {
							t.Fatalf("%s: stored layout: %v", where, err)
						}
					}
					offers := slices.Clone(s.Turns[turn])
					rng.Shuffle(len(offers), func(i, j int) { offers[i], offers[j] = offers[j], offers[i] })
					again := compose.ForPrompt(offers, s.Budget, opts)
					if again.Prompt != tr.Result.Prompt || !reflect.DeepEqual(again.Audit, tr.Result.Audit) ||
						again.Cache != tr.Result.Cache {
						t.Fatalf("%s: recomposing from shuffled offers and the stored layout changed the result", where)
					}
					prev = tr.Result
				})
			}
		}
	}
}

// checkTurn asserts one composition's invariants from the exported API.
func checkTurn(t *testing.T, where string, offers []compose.Offer, budget int, res *compose.Result) {
	t.Helper()
	a := res.Audit
	if a.TokensUsed > budget || a.TokensUsed < 0 {
		t.Fatalf("%s: %d tokens used, budget %d", where, a.TokensUsed, budget)
	}
	if len(a.Entries) != len(offers) || !a.ExplainsEveryDrop() {
		t.Fatalf("%s: %d audit entries for %d offers, or a drop without a reason", where, len(a.Entries), len(offers))
	}
	byID := map[frame.ID]compose.Offer{}
	for _, o := range offers {
		byID[o.ID()] = o
	}
	seen := map[frame.ID]bool{}
	for _, e := range a.Entries {
		if _, ok := byID[e.Frame]; !ok || seen[e.Frame] {
			t.Fatalf("%s: audit entry %v is not one of the offers, or appears twice", where, e.Frame)
		}
		seen[e.Frame] = true
	}
	if len(res.Citations) != len(a.Included()) {
		t.Fatalf("%s: %d citations for %d included frames", where, len(res.Citations), len(a.Included()))
	}
	want, used := compose.Preamble, 0
	for _, c := range res.Citations {
		o := byID[c.Frame]
		want += compose.RenderFrame(o.Provider, o.Frame)
		used += compose.RenderedCost(o.Provider, o.Frame)
	}
	if res.Prompt != want {
		t.Fatalf("%s: the prompt is not the preamble and the cited frames' fenced blocks in citation order", where)
	}
	if used != a.TokensUsed {
		t.Fatalf("%s: cited blocks cost %d tokens, the audit says %d", where, used, a.TokensUsed)
	}
	if res.Stable()+res.Volatile() != res.Prompt || len(res.Stable()) != res.Cache.StablePrefixBytes {
		t.Fatalf("%s: stable and volatile parts do not re-join to the prompt at StablePrefixBytes", where)
	}
}
