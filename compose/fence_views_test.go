package compose

import (
	"math/rand/v2"
	"testing"

	"github.com/ctxkit/ctxkit/frame"
	"github.com/ctxkit/ctxkit/internal/fence/fencetest"
)

// classFrame is a frame whose content and every attribute carry payloads
// of class c (every class when c is nil).
func classFrame(rng *rand.Rand, c *fencetest.Class) (string, *frame.Frame) {
	text := func() string { return fencetest.Text(rng, "frame", c) }
	f := &frame.Frame{ID: text(), Kind: frame.Kind(text()), Title: text(), Content: text()}
	if rng.IntN(3) > 0 {
		f.CitationLabel = text()
	}
	return text(), f
}

// For every class of fence-like payload, generated whole (random values,
// spellings and positions), a frame carrying payloads in its content and in
// every attribute renders with exactly one opening and one closing fence in
// every view and every composition of views (fencetest.Views), and several
// such frames composed side by side keep two fences each.
func TestFenceHoldsForEveryPayloadClass(t *testing.T) {
	fencetest.EachClass(t, 21, func(t *testing.T, rng *rand.Rand, c *fencetest.Class) {
		for range 150 {
			provider, f := classFrame(rng, c)
			checkBlock(t, provider, f)
		}
		var offers []Offer
		for k := range 6 {
			p, f := classFrame(rng, c)
			f.ID += string(rune('a' + k)) // distinct identities
			offers = append(offers, Offer{Provider: p, Frame: f})
		}
		checkFences(t, Context(offers), len(offers))
	})
}

// The generators make payloads that do form a fence token in some view
// (else the property above could not fail): at least one in two, per class
// (the rest hold look-alikes, combining marks or double encodings that no
// view here turns into ASCII, which the scanner breaks all the same).
func TestPayloadClassesFormTokens(t *testing.T) {
	for i, c := range fencetest.Classes {
		rng := rand.New(rand.NewPCG(5, uint64(i)))
		formed := 0
		const n = 200
		for range n {
			p := c.Gen(rng, "frame")
			for _, v := range views {
				if len(fencetest.Tokens(v.Fn(p), "frame")) > 0 {
					formed++
					break
				}
			}
		}
		if formed < n/2 {
			t.Errorf("%s: only %d of %d payloads form a token in any view", c.Name, formed, n)
		}
	}
}

// FuzzFencePayloads composes frames from a seed: each carries generated
// payloads from every class in its content and attributes, and the
// composed context must hold two fences per frame in every view.
func FuzzFencePayloads(f *testing.F) {
	for seed := range uint64(8) {
		f.Add(seed, uint8(seed%4+1))
	}
	f.Fuzz(func(t *testing.T, seed uint64, frames uint8) {
		rng := rand.New(rand.NewPCG(seed, 0x21))
		var offers []Offer
		for k := range int(frames%6) + 1 {
			p, fr := classFrame(rng, nil)
			fr.ID += string(rune('a' + k))
			offers = append(offers, Offer{Provider: p, Frame: fr})
			checkBlock(t, p, fr)
		}
		checkFences(t, Context(offers), len(offers))
	})
}

// The whole-prompt tests' views are really among the reader's views.
func TestPromptViewsAreViews(t *testing.T) {
	if len(promptViews) != 8 {
		t.Fatalf("promptViews has %d views, want 8: a view was renamed?", len(promptViews))
	}
}
