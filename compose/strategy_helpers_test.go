package compose

import (
	"cmp"
	"slices"

	"github.com/ctxkit/ctxkit/frame"
)

// The strategies and checks below serve the tests only: the unexport pass
// left them without a caller outside them.

// precomputedOrder replays a ranking decided elsewhere (a reranker, an
// earlier turn): frames named in Positions come first, by ascending
// position; frames not named follow in round-robin-by-rank order.
// PolicyName is the name recorded in the audit.
type precomputedOrder struct {
	// PolicyName is what Name returns, recorded in the audit as the
	// strategy.
	PolicyName string
	// Positions maps a frame's full identity (provider, id and digest, as
	// Offer.ID returns it) to its position: lower comes first, equal
	// positions go by FrameID, and only the order of the values matters.
	// nil ranks every frame round robin.
	Positions map[frame.ID]int
}

// newPrecomputedOrder builds a precomputedOrder from a best-first list of
// identities; when an identity appears twice its first position wins.
func newPrecomputedOrder(name string, ranked []frame.ID) precomputedOrder {
	pos := make(map[frame.ID]int, len(ranked))
	for i, id := range ranked {
		if _, ok := pos[id]; !ok {
			pos[id] = i
		}
	}
	return precomputedOrder{PolicyName: name, Positions: pos}
}

// Name returns PolicyName.
func (p precomputedOrder) Name() string { return p.PolicyName }

// Order ranks named frames by position, then the rest round robin.
func (p precomputedOrder) Order(offers []Offer) []int {
	var named, rest []int
	pos := make([]int, len(offers))
	for i, o := range offers {
		if at, ok := p.Positions[o.ID()]; ok {
			named = append(named, i)
			pos[i] = at
		} else {
			rest = append(rest, i)
		}
	}
	l := newLanes(offers)
	slices.SortFunc(named, func(a, b int) int {
		return cmpChain(cmp.Compare(pos[a], pos[b]), l.tiebreak(a, b))
	})
	sub := make([]Offer, len(rest))
	for k, i := range rest {
		sub[k] = offers[i]
	}
	for _, k := range (RoundRobinByRank{}).Order(sub) {
		named = append(named, rest[k])
	}
	return named
}

// isPermutation reports whether order is a permutation of 0..n-1.
func isPermutation(order []int, n int) bool {
	if len(order) != n {
		return false
	}
	seen := make([]bool, n)
	for _, i := range order {
		if i < 0 || i >= n || seen[i] {
			return false
		}
		seen[i] = true
	}
	return true
}
