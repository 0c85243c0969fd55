package prompt

import (
	"math/rand/v2"
	"testing"

	"github.com/ctxkit/ctxkit/internal/fence/fencetest"
)

// The payload classes compose's fence is tested with, aimed at the
// untrusted tag: whatever a class generates, every block keeps exactly one
// opening and one closing tag in every view and composition of views (raw,
// NFKC of the newest Unicode version, NFKD, Cf stripping, both HTML
// decoders: the 27 of fencetest.Views(true) and prompt's own), and the
// content survives with only breakers inserted.
func TestTagHoldsForEveryPayloadClass(t *testing.T) {
	fencetest.EachClass(t, 21, func(t *testing.T, rng *rand.Rand, c *fencetest.Class) {
		for range 100 {
			first, second := fencetest.Text(rng, tagName, c), fencetest.Text(rng, tagName, c)
			p, err := NewWithNonce(fixedNonce)
			if err != nil {
				t.Fatal(err)
			}
			out, err := p.Instruction(plainInstruction).Untrusted(External(first)).Text("and").Untrusted(External(second)).Build()
			if err != nil {
				t.Fatal(err)
			}
			checkRendering(t, out, fixedNonce, []string{first, second})
		}
	})
}
