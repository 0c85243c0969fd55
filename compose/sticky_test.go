package compose

import (
	"encoding/json"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/ctxkit/ctxkit/frame"
)

// layoutOfIDs is a valid previous layout listing frames of provider "p".
func layoutOfIDs(ids ...string) *Layout {
	l := &Layout{Version: layoutVersion, Placement: StableFirst, Stable: len(ids)}
	for _, id := range ids {
		l.Frames = append(l.Frames, sized(id, 0, 10).ID())
	}
	return l
}

// entryOf returns the audit entry of frame id of provider "p".
func entryOf(t *testing.T, r *Result, id string) Entry {
	t.Helper()
	for _, e := range r.Audit.Entries {
		if e.Frame.Frame == id {
			return e
		}
	}
	t.Fatalf("no audit entry for %s", id)
	return Entry{}
}

func auditOrder(r *Result) []string {
	var out []string
	for _, e := range r.Audit.Entries {
		out = append(out, e.Frame.Frame)
	}
	return out
}

func TestStickyMarginHoldsAnIncumbentAgainstJitter(t *testing.T) {
	// The budget holds two of the three equal-sized frames. Last turn a and
	// b were included; now c outscores b by 0.05, less than the margin.
	budget := 2 * RenderedCost("p", sized("a", 0, 10).Frame)
	offers := []Offer{sized("a", .9, 10), sized("b", .55, 10), sized("c", .6, 10)}
	prev := layoutOfIDs("a", "b")

	plain := ForPrompt(offers, budget, &Options{Placement: StableFirst, Previous: prev})
	if got := order(plain); !slices.Equal(got, []string{"a", "c"}) || plain.Cache.StableFrames != 1 {
		t.Fatalf("without a margin: order %v, %d stable frames; want a c and 1", got, plain.Cache.StableFrames)
	}

	opts := &Options{Placement: StableFirst, Previous: prev, StickyMargin: 0.1}
	res := ForPrompt(offers, budget, opts)
	if got := order(res); !slices.Equal(got, []string{"a", "b"}) || res.Cache.StableFrames != 2 || res.Cache.Relay != NotRelaid {
		t.Fatalf("with margin 0.1: order %v, %d stable frames, relay %v; want a b, 2, not relaid",
			got, res.Cache.StableFrames, res.Cache.Relay)
	}
	// The audit says the margin held b in and kept c out, and records the
	// margin; c's reason is still what the packer found.
	b, c := entryOf(t, res, "b"), entryOf(t, res, "c")
	if b.Disposition != Included || b.Sticky != StickyHeld || c.Disposition != Excluded || c.Sticky != StickyDisplaced ||
		c.Reason.Kind != OverBudget || entryOf(t, res, "a").Sticky != NotSticky {
		t.Fatalf("entries b %+v c %+v", b, c)
	}
	if res.Audit.StickyMargin != 0.1 || !res.Audit.ExplainsEveryDrop() || !res.HasCacheReport() {
		t.Fatalf("audit margin %v, explains %v, cache report %v", res.Audit.StickyMargin, res.Audit.ExplainsEveryDrop(), res.HasCacheReport())
	}
	// The packer walked the ranking with the margin: a, b (0.65), c.
	if got := auditOrder(res); !slices.Equal(got, []string{"a", "b", "c"}) {
		t.Fatalf("audit order %v", got)
	}
	js := resultBytes(t, res)
	for _, want := range []string{`"packer":"first-fit","sticky_margin":0.1,"entries"`,
		`"attestation":{"state":"not_checked"},"sticky":"held"}`, `"attestation":{"state":"not_checked"},"sticky":"displaced"}`} {
		if !strings.Contains(js, want) {
			t.Errorf("JSON lacks %s:\n%s", want, js)
		}
	}
	var text strings.Builder
	if err := res.Audit.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{" sticky=held\n", " sticky=displaced\n", " sticky_margin=0.1 held=1 displaced=1\n"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("text audit lacks %q:\n%s", want, text.String())
		}
	}

	// A newcomer that outscores the incumbent by more than the margin
	// still displaces it, and then the margin changed nothing.
	offers[2] = sized("c", .7, 10)
	res = ForPrompt(offers, budget, opts)
	if got := order(res); !slices.Equal(got, []string{"a", "c"}) {
		t.Fatalf("c at 0.7 against b at 0.55+0.1: order %v, want a c", got)
	}
	for _, e := range res.Audit.Entries {
		if e.Sticky != NotSticky {
			t.Fatalf("the margin changed nothing, yet %v is marked %v", e.Frame, e.Sticky)
		}
	}
}

// A margin that is not in force leaves the composition exactly as it is
// without one; a margin without a previous layout changes no selection but
// is recorded.
func TestStickyMarginOff(t *testing.T) {
	offers := workedVector()
	prevRes := ForPrompt(offers[:len(offers)-1], 60, nil)
	for _, prev := range []*Layout{nil, prevRes.Layout} {
		base := ForPrompt(offers, 60, &Options{Placement: StableFirst, Previous: prev})
		want := resultBytes(t, base)
		for _, m := range []float32{0, -0.5, float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1))} {
			res := ForPrompt(offers, 60, &Options{Placement: StableFirst, Previous: prev, StickyMargin: m})
			if got := resultBytes(t, res); got != want || res.Audit.StickyMargin != 0 {
				t.Fatalf("margin %v is off, yet the result differs:\n%s\n%s", m, got, want)
			}
		}
	}
	// The default composition's bytes do not move either.
	if a, b := resultBytes(t, ForPrompt(offers, 60, nil)), resultBytes(t, ForPrompt(offers, 60, &Options{StickyMargin: 0})); a != b {
		t.Fatal("a zero margin changed the default composition")
	}
	res := ForPrompt(offers, 60, &Options{StickyMargin: 0.2})
	base := ForPrompt(offers, 60, nil)
	if res.Prompt != base.Prompt || !slices.Equal(res.Audit.Entries, base.Audit.Entries) || res.Audit.StickyMargin != 0.2 || !res.HasCacheReport() {
		t.Fatalf("a margin without a previous layout: margin %v, report %v", res.Audit.StickyMargin, res.HasCacheReport())
	}
}

// Per-provider strategies compare scores only within a provider: the
// margin moves an incumbent among its own provider's frames and leaves
// every other provider's frames where they were.
func TestStickyMarginIsProviderLocalUnderLaneStrategies(t *testing.T) {
	q := func(id string, score float32) Offer {
		o := sized(id, score, 10)
		o.Provider = "q"
		return o
	}
	// p: a .9, c .55, b .5 (b the incumbent); q: x .2, y .1.
	offers := []Offer{sized("a", .9, 10), sized("b", .5, 10), sized("c", .55, 10), q("x", .2), q("y", .1)}
	prev := &Layout{Version: layoutVersion, Placement: StableFirst, Frames: []frame.ID{offers[1].ID()}}
	for _, tc := range []struct {
		s           Strategy
		plain, with []string
	}{
		// Round robin: p's rank 0, q's rank 0, p's rank 1, ...
		{RoundRobinByRank{}, []string{"a", "x", "c", "y", "b"}, []string{"a", "x", "b", "y", "c"}},
		{PerProviderQuota{K: 2}, []string{"a", "c", "x", "y", "b"}, []string{"a", "b", "x", "y", "c"}},
		// Score descending compares across the set, as it always does.
		{ScoreDescending{}, []string{"a", "c", "b", "x", "y"}, []string{"a", "b", "c", "x", "y"}},
	} {
		plain := ForPrompt(offers, 1000, &Options{Strategy: tc.s, Previous: prev})
		res := ForPrompt(offers, 1000, &Options{Strategy: tc.s, Previous: prev, StickyMargin: 0.1})
		if got := auditOrder(plain); !slices.Equal(got, tc.plain) {
			t.Errorf("%s without a margin: %v, want %v", tc.s.Name(), got, tc.plain)
		}
		if got := auditOrder(res); !slices.Equal(got, tc.with) {
			t.Errorf("%s with a margin: %v, want %v", tc.s.Name(), got, tc.with)
		}
	}
	// A strategy that ignores scores ignores the margin.
	replay := newPrecomputedOrder("replay", []frame.ID{offers[0].ID(), offers[2].ID(), offers[1].ID()})
	a := ForPrompt(offers, 1000, &Options{Strategy: replay, Previous: prev})
	b := ForPrompt(offers, 1000, &Options{Strategy: replay, Previous: prev, StickyMargin: 0.1})
	if !slices.Equal(auditOrder(a), auditOrder(b)) {
		t.Errorf("replayed order moved: %v / %v", auditOrder(a), auditOrder(b))
	}
}

// Placement follows the ranking without the margin: the value fold still
// puts this turn's best frame first, even when an incumbent outranks it
// for selection.
func TestStickyMarginLeavesPlacementToTheTrueRanking(t *testing.T) {
	// b (the incumbent) .85 + .1 ranks ahead of a .9 for selection.
	offers := []Offer{sized("a", .9, 10), sized("b", .85, 10), sized("c", .5, 10)}
	prev := layoutOfIDs("b")
	res := ForPrompt(offers, 1000, &Options{Previous: prev, StickyMargin: 0.1})
	if got := auditOrder(res); !slices.Equal(got, []string{"b", "a", "c"}) {
		t.Fatalf("audit order %v, want b a c", got)
	}
	// Fold of a, b, c: a first, b last.
	if got := order(res); !slices.Equal(got, []string{"a", "c", "b"}) {
		t.Fatalf("render order %v, want a c b", got)
	}
}

// Under the jitter alone, a margin of twice the jitter keeps every
// frame of the previous turn: the prompt does not change at all.
func TestStickyMarginStopsJitterChurn(t *testing.T) {
	var base []Offer
	for i := range 12 {
		base = append(base, sized(string(rune('a'+i)), float32(i)/12, 10+i))
	}
	budget := 0
	for _, o := range base[:6] {
		budget += RenderedCost("p", o.Frame)
	}
	jitter := func(turn int) []Offer {
		out := make([]Offer, len(base))
		for i, o := range base {
			f := *o.Frame
			// A deterministic ±0.05 wobble.
			f.Score += float32(((turn*7+i*13)%11)-5) / 100
			out[i] = Offer{Provider: o.Provider, Frame: &f}
		}
		return out
	}
	for _, m := range []float32{0, 0.1} {
		var prev *Result
		changed := 0
		for turn := range 20 {
			opts := &Options{Placement: StableFirst, StickyMargin: m}
			if prev != nil {
				opts.Previous = prev.Layout
			}
			res := ForPrompt(jitter(turn), budget, opts)
			if prev != nil && res.Prompt != prev.Prompt {
				changed++
			}
			prev = res
		}
		if m == 0 && changed == 0 {
			t.Fatal("without a margin jitter never changed the prompt: the scenario tests nothing")
		}
		if m > 0 && changed != 0 {
			t.Fatalf("margin %v: the prompt changed on %d turns under jitter alone", m, changed)
		}
	}
}

// checkSticky asserts the sticky marks of res against an independent
// composition of the same offers without the margin.
func checkSticky(t testing.TB, offers []Offer, budget int, res *Result, opts *Options) {
	t.Helper()
	o := *opts
	o.StickyMargin = 0
	plain := ForPrompt(offers, budget, &o)
	m := opts.stickyMargin()
	if res.Audit.StickyMargin != m {
		t.Fatalf("audit margin %v for option %v", res.Audit.StickyMargin, opts.StickyMargin)
	}
	if (m > 0) != res.HasCacheReport() && opts.Placement == EdgesByRank && opts.Previous == nil && opts.Cache == nil {
		t.Fatalf("margin %v: cache report %v", m, res.HasCacheReport())
	}
	// Survivors have distinct identities; duplicates are excluded either way.
	was := map[frame.ID]Disposition{}
	for _, e := range plain.Audit.Entries {
		if e.Reason.Kind != Duplicate {
			was[e.Frame] = e.Disposition
		}
	}
	var dups, plainDups []Entry
	for _, e := range plain.Audit.Entries {
		if e.Reason.Kind == Duplicate {
			plainDups = append(plainDups, e)
		}
	}
	changed := false
	for _, e := range res.Audit.Entries {
		if e.Reason.Kind == Duplicate {
			dups = append(dups, e)
			if e.Sticky != NotSticky {
				t.Fatalf("duplicate %v marked %v", e.Frame, e.Sticky)
			}
			continue
		}
		want := NotSticky
		switch {
		case e.Disposition == Included && was[e.Frame] == Excluded:
			want = StickyHeld
		case e.Disposition == Excluded && was[e.Frame] == Included:
			want = StickyDisplaced
		}
		if e.Sticky != want {
			t.Fatalf("%v: marked %q, the composition without the margin says %q", e.Frame, e.Sticky, want)
		}
		changed = changed || want != NotSticky
	}
	if !slices.Equal(dups, plainDups) {
		t.Fatal("the margin changed dedup")
	}
	if !changed && res.Prompt != plain.Prompt {
		t.Fatal("the margin changed no selection, yet the prompt differs")
	}
}

func TestStickyJSONRoundTripsItsSpelling(t *testing.T) {
	for _, s := range []StickyEffect{NotSticky, StickyHeld, StickyDisplaced, 9} {
		e := Entry{Frame: frame.ID{Provider: "p", Frame: "a"}, Disposition: Included, Verification: Verifiable, Sticky: s}
		b, err := json.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		has := strings.Contains(string(b), `"sticky":`)
		if has != (s != NotSticky) || (s != NotSticky && !strings.Contains(string(b), `"sticky":"`+s.String()+`"`)) {
			t.Errorf("%d: %s", s, b)
		}
	}
	// Marks that contradict the disposition are not an explanation.
	a := Audit{Entries: []Entry{{Frame: frame.ID{Provider: "p", Frame: "a"}, Disposition: Included, Verification: Verifiable, Sticky: StickyDisplaced}}}
	if a.ExplainsEveryDrop() {
		t.Error("an included frame marked displaced passes")
	}
	a.Entries[0] = Entry{Frame: a.Entries[0].Frame, Disposition: Excluded, Reason: Reason{Kind: OverBudget}, Sticky: StickyHeld}
	if a.ExplainsEveryDrop() {
		t.Error("an excluded frame marked held passes")
	}
	a.Entries[0].Sticky = StickyDisplaced
	if !a.ExplainsEveryDrop() {
		t.Error("an excluded frame marked displaced fails")
	}
}
