package compose

import (
	"math"

	"github.com/ctxkit/ctxkit/frame"
)

// StickyEffect says whether Options.StickyMargin changed an offered frame's
// fate: the audit compares the composition with the one the same offers
// would get without the margin.
type StickyEffect uint8

// Sticky effects. The zero value, NotSticky, means the margin did not
// change the frame's disposition (or no margin was in force).
const (
	// NotSticky: the frame is included, or excluded, with and without the
	// margin.
	NotSticky StickyEffect = iota
	// StickyHeld: the frame is included only because of the margin;
	// without it the frame would have been excluded. Usually a frame of
	// the previous layout that the jitter of scores would have pushed
	// below the budget's cut; under FirstFit it can also be a small frame
	// that fits the budget the reordered ranking left over.
	StickyHeld
	// StickyDisplaced: the frame is excluded only because of the margin;
	// without it the frame would have been included. The frames ranked
	// ahead of it by the margin used the budget it would have had. Its
	// Reason (OverBudget or PackingStopped) is what the packer found.
	StickyDisplaced
)

var stickyNames = [...]string{NotSticky: "", StickyHeld: "held", StickyDisplaced: "displaced"}

// String returns "", "held" or "displaced".
func (s StickyEffect) String() string {
	return enumName(s, NotSticky, stickyNames[:], "sticky")
}

// stickyMargin is Options.StickyMargin when it is in force (positive and
// finite), else 0.
func (o *Options) stickyMargin() float32 {
	m := o.StickyMargin
	if !(m > 0) || math.IsInf(float64(m), 1) {
		return 0
	}
	return m
}

// incumbents reports, for each survivor identity, whether the previous
// layout lists it. It returns nil when none is listed, when margin is 0 or
// when the previous layout is absent or invalid: then the margin changes
// nothing.
func incumbents(ids []frame.ID, prev *Layout, margin float32) []bool {
	if margin == 0 || prev == nil || len(prev.Frames) == 0 || prev.validate() != nil {
		return nil
	}
	// The set is only looked up, never ranged over.
	listed := make(map[frame.ID]struct{}, len(prev.Frames))
	for _, id := range prev.Frames {
		listed[id] = struct{}{}
	}
	var out []bool
	for k, id := range ids {
		if _, ok := listed[id]; ok {
			if out == nil {
				out = make([]bool, len(ids))
			}
			out[k] = true
		}
	}
	return out
}

// boosted returns offers with margin added to the score of every offer
// marked in inc: the view of the survivors a strategy ranks under a sticky
// margin. The frames are shallow copies; offers is not modified. A NaN score
// keeps its place in the total order (adding to a NaN is not portable).
func boosted(offers []Offer, inc []bool, margin float32) []Offer {
	out := make([]Offer, len(offers))
	copy(out, offers)
	n := 0
	for _, on := range inc {
		if on {
			n++
		}
	}
	copies := make([]frame.Frame, 0, n) // one allocation for every copy
	for k, on := range inc {
		if !on {
			continue
		}
		copies = append(copies, *offers[k].frame())
		f := &copies[len(copies)-1]
		if f.Score == f.Score {
			f.Score += margin
		}
		out[k] = Offer{Provider: offers[k].Provider, Frame: f}
	}
	return out
}

// packed returns which of the survivors (indexed as costs) the packer p
// includes when it walks ranked under budget: the same rule as ForPrompt's
// pack stage, used to find what the composition would have been without
// the sticky margin.
func packed(ranked []int, costs []int, budget int, p Packer) []bool {
	in := make([]bool, len(costs))
	used := 0
	for _, k := range ranked {
		if costs[k] <= budget-used {
			used += costs[k]
			in[k] = true
		} else if p == StopAtFirstMiss {
			break
		}
	}
	return in
}
