package compose

import (
	"math"
	"strings"

	"github.com/ctxkit/ctxkit/frame"
)

// CompareScores orders two scores as float32 with a total order: -NaN,
// -Inf, negative numbers, -0, +0, positive numbers, +Inf, +NaN (IEEE 754
// totalOrder, Rust's f32::total_cmp). Equal bit patterns compare equal, so
// every NaN payload has its own deterministic place. It returns -1, 0 or +1.
func CompareScores(a, b float32) int {
	ka, kb := scoreKey(a), scoreKey(b)
	switch {
	case ka < kb:
		return -1
	case ka > kb:
		return 1
	}
	return 0
}

// scoreKey maps a float32 to an int32 whose natural order is the total order.
func scoreKey(f float32) int32 {
	k := int32(math.Float32bits(f))
	if k < 0 {
		k ^= math.MaxInt32
	}
	return k
}

// compareOffers is the total order used to break ties between offers that
// share a FrameID: every member that reaches the output is compared, so
// the order depends only on the offers' values, never on their positions.
func compareOffers(a, b Offer) int {
	if c := a.ID().Compare(b.ID()); c != 0 {
		return c
	}
	fa, fb := a.frame(), b.frame()
	if c := CompareScores(fb.Score, fa.Score); c != 0 {
		return c
	}
	if c := compareRendered(fa, fb); c != 0 {
		return c
	}
	if c := strings.Compare(fa.Title, fb.Title); c != 0 {
		return c
	}
	return compareProvenance(fa.Provenance, fb.Provenance)
}

// compareProvenance orders provenance lists link by link, member by member;
// an absent member sorts before a present-and-empty one, which sorts before
// any other value, so links that differ only in presence still order apart.
func compareProvenance(a, b []frame.Provenance) int {
	for i := 0; i < len(a) && i < len(b); i++ {
		x, y := a[i], b[i]
		for _, c := range [...]int{
			strings.Compare(x.Type, y.Type), compareMember(x, y, frame.MemberURI, x.URI, y.URI),
			compareMember(x, y, frame.MemberRange, x.Range, y.Range), compareMember(x, y, frame.MemberDigest, x.Digest, y.Digest),
			compareMember(x, y, frame.MemberMethod, x.Method, y.Method), compareMember(x, y, frame.MemberBy, x.By, y.By),
		} {
			if c != 0 {
				return c
			}
		}
	}
	return len(a) - len(b)
}

// compareMember compares optional member m of x and y, whose values are u
// and v: by value, then absent before present.
func compareMember(x, y frame.Provenance, m frame.ProvenanceMember, u, v string) int {
	if c := strings.Compare(u, v); c != 0 || u != "" {
		return c
	}
	return cmpBool(x.Has(m), y.Has(m))
}

func cmpBool(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return 1
	}
	return -1
}

// foldToEdges places an already ranked (best-first) sequence so the best
// items sit at the edges and the weakest in the middle (Lost in the
// Middle): rank 0 first, rank 1 last, rank 2 second, rank 3 second to last,
// and so on. a,b,c,d,e becomes a,c,e,d,b. It returns a new slice.
func foldToEdges[T any](ranked []T) []T {
	out := make([]T, len(ranked))
	lo, hi := 0, len(ranked)
	for k, item := range ranked {
		if k%2 == 0 {
			out[lo] = item
			lo++
		} else {
			hi--
			out[hi] = item
		}
	}
	return out
}

// BudgetSplit divides a global budget into n per-provider shares: an equal
// split, with the remainder handed out one token each to the first
// providers. The shares sum to exactly global for n > 0 and differ by at most
// one; n <= 0 yields an empty split. A negative global is treated as 0.
func BudgetSplit(global, n int) []int {
	if n <= 0 {
		return []int{}
	}
	if global < 0 {
		global = 0
	}
	base, rem := global/n, global%n
	shares := make([]int, n)
	for i := range shares {
		shares[i] = base
		if i < rem {
			shares[i]++
		}
	}
	return shares
}
