package compose

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/ctxkit/ctxkit/frame"
)

// ---- hand-worked examples ----

// sized returns a frame of one provider whose rendered cost is easy to
// reason about: content of n bytes.
func sized(id string, score float32, n int) Offer {
	f := testFrame(id, strings.Repeat("x", n))
	f.Score = score
	f.ContentDigest = digestOf(id)
	return Offer{Provider: "p", Frame: f}
}

func order(r *Result) []string {
	var out []string
	for _, c := range r.Citations {
		out = append(out, c.Frame.Frame)
	}
	return out
}

func TestPlacementOrders(t *testing.T) {
	// Ranking by score: e(.9) c(.8) a(.7) d(.6) b(.5); all fit.
	offers := []Offer{sized("a", .7, 10), sized("b", .5, 10), sized("c", .8, 10), sized("d", .6, 10), sized("e", .9, 10)}
	for _, tc := range []struct {
		p    Placement
		want []string
	}{
		// Fold: rank 0 first, rank 1 last, rank 2 second, rank 3 second to last.
		{EdgesByRank, []string{"e", "a", "b", "d", "c"}},
		{Canonical, []string{"a", "b", "c", "d", "e"}},
		// First turn: a tail: best first, second best last, the rest in
		// ranking order between them.
		{StableFirst, []string{"e", "a", "d", "b", "c"}},
	} {
		res := ForPrompt(offers, 1000, &Options{Placement: tc.p})
		if got := order(res); !slices.Equal(got, tc.want) {
			t.Errorf("%s: order %v, want %v", tc.p, got, tc.want)
		}
		if res.Layout == nil || res.Layout.Placement != tc.p || len(res.Layout.Frames) != 5 {
			t.Fatalf("%s: layout %+v", tc.p, res.Layout)
		}
		// No previous layout: the stable part is the preamble alone.
		if res.Cache.StableFrames != 0 || res.Stable() != Preamble {
			t.Errorf("%s: stable part %q (%d frames) without a previous layout", tc.p, res.Stable(), res.Cache.StableFrames)
		}
	}
}

func TestStableFirstKeepsThePrefixAndRelaysAfterTheFirstDrop(t *testing.T) {
	prev := &Layout{Version: layoutVersion, Placement: StableFirst, Stable: 2, Frames: []frame.ID{
		sized("a", 0, 10).ID(), sized("b", 0, 10).ID(), sized("c", 0, 10).ID(), sized("d", 0, 10).ID(), sized("e", 0, 10).ID(),
	}}
	// c is gone; f and g are new. Ranking: g(.95) e(.9) f(.85) a(.7) d(.6) b(.5).
	offers := []Offer{sized("a", .7, 10), sized("b", .5, 10), sized("d", .6, 10), sized("e", .9, 10),
		sized("f", .85, 10), sized("g", .95, 10)}
	res := ForPrompt(offers, 1000, &Options{Placement: StableFirst, Previous: prev})
	// a and b are kept in place; c is missing, so d, e, f, g are re-laid as
	// a tail: g first, e (second best) last, f then d between.
	want := []string{"a", "b", "g", "f", "d", "e"}
	if got := order(res); !slices.Equal(got, want) {
		t.Fatalf("order %v, want %v", got, want)
	}
	if res.Cache.StableFrames != 2 || res.Cache.Relay != RelayDropped {
		t.Fatalf("stable frames %d relay %v, want 2 dropped", res.Cache.StableFrames, res.Cache.Relay)
	}
	wantStable := Preamble + RenderFrame("p", offers[0].Frame) + RenderFrame("p", offers[1].Frame)
	if res.Stable() != wantStable || res.Stable()+res.Volatile() != res.Prompt {
		t.Fatalf("stable part:\n%q\nwant\n%q", res.Stable(), wantStable)
	}

	// Nothing dropped: the whole previous layout is kept and the new frame
	// appended after it.
	all := append(slices.Clone(offers[:4]), sized("c", .1, 10), sized("h", .99, 10))
	res = ForPrompt(all, 1000, &Options{Placement: StableFirst, Previous: prev})
	if got := order(res); !slices.Equal(got, []string{"a", "b", "c", "d", "e", "h"}) {
		t.Fatalf("order %v", got)
	}
	if res.Cache.StableFrames != 5 || res.Cache.Relay != NotRelaid {
		t.Fatalf("stable frames %d relay %v, want 5 and not relaid", res.Cache.StableFrames, res.Cache.Relay)
	}

	// The first frame dropped: everything is re-laid.
	res = ForPrompt(offers[1:], 1000, &Options{Placement: StableFirst, Previous: prev})
	if res.Cache.StableFrames != 0 || res.Cache.Relay != RelayDropped || res.Stable() != Preamble {
		t.Fatalf("stable frames %d relay %v", res.Cache.StableFrames, res.Cache.Relay)
	}

	// An invalid layout is treated as absent.
	bad := &Layout{Version: 7, Frames: prev.Frames}
	res = ForPrompt(offers, 1000, &Options{Placement: StableFirst, Previous: bad})
	if res.Cache.Relay != RelayInvalidLayout || res.Cache.StableFrames != 0 {
		t.Fatalf("invalid layout: relay %v stable %d", res.Cache.Relay, res.Cache.StableFrames)
	}
}

func TestPlacementNeverChangesSelection(t *testing.T) {
	offers := workedVector()
	base := ForPrompt(offers, 60, nil)
	for _, p := range Placements() {
		res := ForPrompt(offers, 60, &Options{Placement: p, Previous: base.Layout})
		a, _ := json.Marshal(&res.Audit)
		b, _ := json.Marshal(&base.Audit)
		if !bytes.Equal(a, b) {
			t.Fatalf("%s: audit differs from the default placement's\n%s\n%s", p, a, b)
		}
	}
}

func TestCacheWarning(t *testing.T) {
	offers := []Offer{sized("a", .9, 6000), sized("b", .8, 6000)}
	prev := ForPrompt(offers, 10000, &Options{Placement: StableFirst}).Layout
	res := ForPrompt(offers, 10000, &Options{Placement: StableFirst, Previous: prev})
	// Preamble (~400 bytes) and two frames of ~6,100 bytes: about 3,150
	// budget tokens, above the default 1,024.
	if res.Cache.StableFrames != 2 || res.Cache.Warning != "" || res.Cache.MinPrefixTokens != DefaultMinPrefixTokens {
		t.Fatalf("report %+v", res.Cache)
	}
	res = ForPrompt(offers, 10000, &Options{Placement: StableFirst, Previous: prev, Cache: &CacheOptions{MinPrefixTokens: 4096}})
	if !strings.Contains(res.Cache.Warning, "below the provider minimum of 4096") {
		t.Fatalf("no warning for a %d-token prefix under 4096: %+v", res.Cache.StablePrefixTokens, res.Cache)
	}
	res = ForPrompt(offers, 10000, &Options{Placement: StableFirst, Cache: &CacheOptions{MinPrefixTokens: -1}})
	if res.Cache.Warning != "" || res.Cache.MinPrefixTokens != 0 {
		t.Fatalf("warning not turned off: %+v", res.Cache)
	}
	// A first turn has only the preamble as its stable prefix: warned.
	if res := ForPrompt(offers, 10000, &Options{Placement: StableFirst}); res.Cache.Warning == "" {
		t.Fatal("a preamble-only stable prefix was not warned about")
	}
}

func TestResultJSONCacheMember(t *testing.T) {
	offers := workedVector()
	plain := resultBytes(t, ForPrompt(offers, 60, nil))
	if strings.Contains(plain, `"cache"`) {
		t.Fatalf("default composition grew a cache member: %s", plain)
	}
	first := ForPrompt(offers, 60, &Options{Placement: StableFirst})
	res := ForPrompt(offers, 60, &Options{Placement: StableFirst, Previous: first.Layout})
	var got struct {
		Prompt string `json:"prompt"`
		Cache  struct {
			Placement    string          `json:"placement"`
			Bytes        int             `json:"stable_prefix_bytes"`
			Tokens       int             `json:"stable_prefix_tokens"`
			Hash         string          `json:"stable_prefix_hash"`
			StableFrames int             `json:"stable_frames"`
			Relay        *string         `json:"relay"`
			Min          int             `json:"min_prefix_tokens"`
			Warning      string          `json:"warning"`
			Layout       json.RawMessage `json:"layout"`
		} `json:"cache"`
	}
	if err := json.Unmarshal([]byte(resultBytes(t, res)), &got); err != nil {
		t.Fatal(err)
	}
	c := got.Cache
	if c.Placement != "stable-first" || c.Bytes != len(res.Stable()) || c.Tokens != frame.BudgetTokens(res.Stable()) ||
		c.StableFrames != 2 || c.Relay != nil || c.Min != 1024 || c.Warning == "" || got.Prompt[:c.Bytes] != res.Stable() {
		t.Fatalf("cache member %+v", c)
	}
	l, err := ParseLayout(c.Layout)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(l.Frames, res.Layout.Frames) || l.Stable != 2 || l.Placement != StableFirst {
		t.Fatalf("layout %+v does not round-trip %+v", l, res.Layout)
	}
}

func TestParseLayout(t *testing.T) {
	good := `{"version":1,"placement":"canonical","frames":[{"provider_id":"p","frame_id":"a"},{"provider_id":"p","frame_id":"b","content_digest":"sha256:00"}],"stable":1}`
	l, err := ParseLayout([]byte(good))
	if err != nil {
		t.Fatal(err)
	}
	if l.Placement != Canonical || len(l.Frames) != 2 || l.Frames[1].Digest != "sha256:00" || l.Stable != 1 {
		t.Fatalf("parsed %+v", l)
	}
	again, err := json.Marshal(l)
	if err != nil || string(again) != good {
		t.Fatalf("re-encoded %s (%v)", again, err)
	}
	for _, tc := range []struct{ in, field string }{
		{`{"version":2,"placement":"canonical","frames":[],"stable":0}`, "version"},
		{`{"version":1,"placement":"folded","frames":[],"stable":0}`, "placement"},
		{`{"version":1,"placement":"canonical","frames":[{"provider_id":"p"}],"stable":0}`, ""},
		{`{"version":1,"placement":"canonical","frames":[{"provider_id":"p","frame_id":"a"},{"provider_id":"","frame_id":"a"}],"stable":0}`, "frames[1]"},
		{`{"version":1,"placement":"canonical","frames":[],"stable":1}`, "stable"},
		{`{"version":1,"placement":"canonical","frames":[],"stable":-1}`, "stable"},
		{`{"version":1,"placement":"canonical","frames":[]}`, "stable"},
		{`{"version":1,"placement":"canonical","frames":[],"stable":0,"extra":1}`, ""},
		{`{"version":"1","placement":"canonical","frames":[],"stable":0}`, ""},
		{`[]`, ""},
		{`null`, ""},
		{`{"version":1} trailing`, ""},
	} {
		_, err := ParseLayout([]byte(tc.in))
		var le *layoutError
		if !errors.As(err, &le) || le.Field != tc.field {
			t.Errorf("%s: error %v (field %q), want a *LayoutError on %q", tc.in, err, fieldOf(le), tc.field)
		}
	}
}

func fieldOf(e *layoutError) string {
	if e == nil {
		return "<nil>"
	}
	return e.Field
}

// ---- properties under every placement ----

// perturb derives a next turn's offers: some dropped, some new, scores moved.
func perturb(rng *rand.Rand, offers []Offer) []Offer {
	var out []Offer
	for _, o := range offers {
		if rng.IntN(5) == 0 {
			continue
		}
		if o.Frame != nil && rng.IntN(2) == 0 {
			f := *o.Frame
			f.Score = float32(rng.IntN(101)) / 100
			o.Frame = &f
		}
		out = append(out, o)
	}
	return out
}

// previousLayout returns a previous layout for offers: from a composition
// of a perturbed set, a garbage layout, or none.
func previousLayout(rng *rand.Rand, offers []Offer, budget int) *Layout {
	switch rng.IntN(5) {
	case 0:
		return nil
	case 1:
		return &Layout{Version: rng.IntN(3), Placement: Placement(rng.IntN(4)), Stable: rng.IntN(5) - 1,
			Frames: []frame.ID{{Provider: "prov0", Frame: "f1"}, {}}}
	}
	prevOffers := perturb(rng, offers)
	if rng.IntN(2) == 0 {
		prevOffers = append(prevOffers, randomOffers(rng)...)
	}
	return ForPrompt(prevOffers, budget+rng.IntN(100)-50, &Options{Placement: Placement(rng.IntN(3))}).Layout
}

// checkPlacement asserts the cache report and layout of one composition.
func checkPlacement(t testing.TB, res *Result, opts *Options) {
	t.Helper()
	if res.Stable()+res.Volatile() != res.Prompt || !strings.HasPrefix(res.Stable(), Preamble) {
		t.Fatal("stable and volatile parts do not split the prompt after the preamble")
	}
	c := res.Cache
	sum := sha256.Sum256([]byte(res.Stable()))
	if c.StablePrefixHash != "sha256:"+hex.EncodeToString(sum[:]) || c.StablePrefixTokens != frame.BudgetTokens(res.Stable()) {
		t.Fatalf("report %+v does not describe the stable part", c)
	}
	if c.Placement != opts.Placement || res.Layout.Placement != opts.Placement || res.Layout.validate() != nil {
		t.Fatalf("placement %v, layout %+v", c.Placement, res.Layout)
	}
	// The layout is the render order, and the stable part holds exactly
	// its first StableFrames blocks.
	if len(res.Layout.Frames) != len(res.Citations) || res.Layout.Stable != c.StableFrames {
		t.Fatalf("layout of %d frames (%d stable) for %d citations", len(res.Layout.Frames), res.Layout.Stable, len(res.Citations))
	}
	for i, cit := range res.Citations {
		if res.Layout.Frames[i] != cit.Frame {
			t.Fatalf("layout frame %d is %v, citation %v", i, res.Layout.Frames[i], cit.Frame)
		}
	}
	if got := strings.Count(res.Stable(), "\n</frame>\n"); got != c.StableFrames {
		t.Fatalf("stable part holds %d blocks, report says %d", got, c.StableFrames)
	}
	// Blocks: the preamble and one block per citation, each the frame's
	// own fenced block, re-joining to the prompt; the stable ones to Stable.
	blocks := res.Blocks()
	if len(blocks) != 1+len(res.Citations) || blocks[0] != Preamble || strings.Join(blocks, "") != res.Prompt ||
		strings.Join(blocks[:1+c.StableFrames], "") != res.Stable() {
		t.Fatalf("%d blocks for %d citations, or they do not re-join to the prompt and its stable part", len(blocks), len(res.Citations))
	}
	for i, b := range blocks[1:] {
		if !strings.HasPrefix(b, "<frame ") || !strings.HasSuffix(b, "\n</frame>\n") || strings.Count(b, "\n</frame>\n") != 1 {
			t.Fatalf("block %d is not one fenced frame: %q", i+1, b)
		}
	}
	// The stable frames are the leading frames the previous layout rendered
	// first, and no more.
	prev := opts.Previous
	if prev == nil || prev.validate() != nil {
		if c.StableFrames != 0 {
			t.Fatalf("%d stable frames without a valid previous layout", c.StableFrames)
		}
	} else {
		n := c.StableFrames
		if n > len(prev.Frames) || !slices.Equal(res.Layout.Frames[:n], prev.Frames[:n]) {
			t.Fatalf("stable frames are not the previous layout's first %d", n)
		}
		if n < len(prev.Frames) && n < len(res.Layout.Frames) && res.Layout.Frames[n] == prev.Frames[n] {
			t.Fatalf("stable part stops early at %d", n)
		}
	}
	if opts.Placement == StableFirst {
		// StableFirst keeps the previous layout up to its first frame that is
		// no longer included.
		inc := map[frame.ID]int{}
		for _, id := range res.Audit.Included() {
			inc[id]++
		}
		want := 0
		if prev != nil && prev.validate() == nil {
			for _, id := range prev.Frames {
				if inc[id] == 0 {
					break
				}
				inc[id]--
				want++
			}
		}
		if c.StableFrames != want {
			t.Fatalf("stable-first kept %d frames, the previous layout allows %d", c.StableFrames, want)
		}
	}
	if min := opts.Cache.minPrefix(); (c.Warning != "") != (min > 0 && c.StablePrefixTokens < min) {
		t.Fatalf("warning %q for %d tokens against minimum %d", c.Warning, c.StablePrefixTokens, min)
	}
}

func TestComposePropertiesUnderEveryPlacement(t *testing.T) {
	rng := rand.New(rand.NewPCG(0xCAC4E, 0x57AB1E))
	// Each case composes under three placements, twice each; the race
	// detector's slowdown shrinks the count (the fuzz target goes further).
	cases := 1500 / raceSlowdown
	if testing.Short() {
		cases = 300 / raceSlowdown
	}
	marks := map[StickyEffect]int{}
	for iter := range cases {
		offers := randomOffers(rng)
		budget := rng.IntN(400)
		prev := previousLayout(rng, offers, budget)
		base := &Options{Strategy: strategies()[rng.IntN(len(strategies()))], Packer: Packer(rng.IntN(2)),
			StickyMargin: randomMargin(rng)}
		var audit string
		for _, p := range Placements() {
			opts := *base
			opts.Placement, opts.Previous = p, prev
			if rng.IntN(3) == 0 {
				opts.Cache = &CacheOptions{MinPrefixTokens: rng.IntN(200) - 20}
			}
			res := ForPrompt(offers, budget, &opts)
			checkResult(t, offers, budget, res)
			checkPlacement(t, res, &opts)
			if opts.StickyMargin != 0 {
				checkSticky(t, offers, budget, res, &opts)
			}
			for _, e := range res.Audit.Entries {
				marks[e.Sticky]++
			}
			a, err := json.Marshal(&res.Audit)
			if err != nil {
				t.Fatal(err)
			}
			if audit == "" {
				audit = string(a)
			} else if string(a) != audit {
				t.Fatalf("iter %d: placement %s changed the audit", iter, p)
			}
			if got := resultBytes(t, ForPrompt(shuffled(rng, offers), budget, &opts)); got != resultBytes(t, res) {
				t.Fatalf("iter %d: %s: shuffled input changed the result for the same previous layout", iter, p)
			}
		}
	}
	// The sticky checks must have had something to check.
	if marks[StickyHeld] == 0 || marks[StickyDisplaced] == 0 {
		t.Fatalf("no case exercised the sticky margin: %v", marks)
	}
}

// randomMargin returns a sticky margin: none in a third of the cases, a
// plausible one mostly, and now and then one that must count as off (or
// a huge one).
func randomMargin(rng *rand.Rand) float32 {
	switch rng.IntN(12) {
	case 0, 1, 2, 3:
		return 0
	case 4:
		return [...]float32{-0.1, float32(math.NaN()), float32(math.Inf(1)), 1e30, math.MaxFloat32}[rng.IntN(5)]
	}
	return float32(rng.IntN(60)+1) / 100
}

func FuzzPlacementPermutation(f *testing.F) {
	f.Add(uint64(1), uint64(2), 100, uint8(2), float32(0))
	f.Add(uint64(0xDEAD), uint64(0xBEEF), 0, uint8(1), float32(0))
	f.Add(uint64(42), uint64(7), 5000, uint8(0), float32(0))
	f.Add(uint64(1), uint64(2), 100, uint8(2), float32(0.1))
	f.Add(uint64(3), uint64(4), 250, uint8(2), float32(0.5))
	f.Add(uint64(5), uint64(6), 120, uint8(1), float32(math.Inf(1)))
	f.Add(uint64(7), uint64(8), 300, uint8(0), float32(math.NaN()))
	f.Fuzz(func(t *testing.T, seed1, seed2 uint64, budget int, placement uint8, margin float32) {
		rng := rand.New(rand.NewPCG(seed1, seed2))
		offers := randomOffers(rng)
		budget %= 1 << 16
		if budget < 0 {
			budget = -budget
		}
		opts := &Options{Placement: Placement(placement % 3), Previous: previousLayout(rng, offers, budget), StickyMargin: margin}
		res := ForPrompt(offers, budget, opts)
		checkResult(t, offers, budget, res)
		checkPlacement(t, res, opts)
		checkSticky(t, offers, budget, res, opts)
		want := resultBytes(t, res)
		for range 3 {
			if got := resultBytes(t, ForPrompt(shuffled(rng, offers), budget, opts)); got != want {
				t.Fatal("a permutation of the offers changed the result")
			}
		}
	})
}

func FuzzParseLayout(f *testing.F) {
	f.Add([]byte(`{"version":1,"placement":"stable-first","frames":[{"provider_id":"p","frame_id":"a"}],"stable":1}`))
	f.Add([]byte(`{"version":1,"placement":"canonical","frames":[],"stable":0}`))
	f.Add([]byte(`{"version":1,"placement":"edges-by-rank","frames":null,"stable":0}`))
	f.Add([]byte(`{"version":1,"frames":[{"provider_id":"\u0000","frame_id":"日"}],"stable":9}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		l, err := ParseLayout(data)
		if err != nil {
			var le *layoutError
			if !errors.As(err, &le) || !strings.HasPrefix(err.Error(), "compose: layout") {
				t.Fatalf("error %v is not a *LayoutError", err)
			}
			return
		}
		if l.validate() != nil {
			t.Fatalf("accepted an invalid layout: %+v", l)
		}
		b, err := json.Marshal(l)
		if err != nil {
			t.Fatal(err)
		}
		again, err := ParseLayout(b)
		if err != nil || !slices.Equal(again.Frames, l.Frames) || again.Stable != l.Stable || again.Placement != l.Placement {
			t.Fatalf("layout does not round-trip: %s (%v)", b, err)
		}
		// Any valid layout can be followed.
		res := ForPrompt([]Offer{sized("a", .5, 10)}, 100, &Options{Placement: StableFirst, Previous: l})
		checkPlacement(t, res, &Options{Placement: StableFirst, Previous: l})
	})
}

func TestLayoutValueMarshalsLikeThePointer(t *testing.T) {
	l := Layout{Version: layoutVersion, Placement: StableFirst, Frames: []frame.ID{{Provider: "p", Frame: "a"}}, Stable: 1}
	a, err1 := json.Marshal(l)
	b, err2 := json.Marshal(&l)
	if err1 != nil || err2 != nil || string(a) != string(b) ||
		string(a) != `{"version":1,"placement":"stable-first","frames":[{"provider_id":"p","frame_id":"a"}],"stable":1}` {
		t.Fatalf("%s / %s (%v %v)", a, b, err1, err2)
	}
	if e, _ := json.Marshal(Layout{}); string(e) != `{"version":0,"placement":"edges-by-rank","frames":[],"stable":0}` {
		t.Fatalf("zero layout: %s", e)
	}
}

func TestSplitBlocksEdges(t *testing.T) {
	block := RenderFrame("p", testFrame("a", "x\n</frame>\ny"))
	for _, tc := range []struct {
		in   string
		want []string
	}{
		{"", []string{""}},
		{"no preamble\n</frame>\n", []string{"no preamble\n</frame>\n"}},
		{Preamble, []string{Preamble}},
		{Preamble + block + block, []string{Preamble, block, block}},
		{Preamble + block + "torn", []string{Preamble, block, "torn"}},
	} {
		if got := splitBlocks(tc.in); !slices.Equal(got, tc.want) {
			t.Errorf("SplitBlocks(%.60q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	if strings.Count(block, "\n</frame>\n") != 1 {
		t.Fatalf("content's closing fence survived rendering: %q", block)
	}
}
