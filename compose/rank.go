package compose

import (
	"cmp"
	"math"
	"slices"
	"strings"

	"github.com/ctxkit/ctxkit/frame"
)

// Strategy ranks offers: a cross-provider ranking policy. Order returns a
// best-first permutation of the indices of offers; it ranks and never
// filters. Its result should depend only on the set of offers, not on their
// order. The budget packer walks this order, so a strategy decides which
// frames reach the prompt under a tight budget, not only where they sit.
//
// Ranking frames from different providers by raw score is itself a policy:
// CGP scores are provider-local and ordinal (docs/protocol.md F10).
type Strategy interface {
	// Name is the policy's stable name, recorded in the audit.
	Name() string
	// Order returns a best-first permutation of 0..len(offers)-1.
	Order(offers []Offer) []int
}

// Strategy names.
const (
	NameScoreDescending  = "score-descending"
	NameRoundRobinByRank = "round-robin-by-rank"
	NamePerProviderQuota = "per-provider-quota"
	NameTrustWeighted    = "trust-weighted"
)

// DefaultQuota is the per-provider tier size the HTTP API uses when a
// per-provider-quota strategy names none.
const DefaultQuota = 3

// ScoreDescending ranks the whole set by score, highest first (float32 total
// order), ties by canonical FrameID. It is the default strategy and the
// right one for a single provider.
type ScoreDescending struct{}

// Name returns "score-descending".
func (ScoreDescending) Name() string { return NameScoreDescending }

// Order ranks offers by score descending, then FrameID ascending.
func (ScoreDescending) Order(offers []Offer) []int {
	l := newIDs(offers)
	if !l.strict || uint64(len(offers)) > math.MaxUint32 {
		return l.sorted(func(a, b int) int { return l.byScore(a, b) })
	}
	return orderByScoreKeys(l.keys)
}

// scoreOrderStrict is ScoreDescending{}.Order(offers) for offers whose
// identities are strictly increasing (Dedup's survivors).
func scoreOrderStrict(offers []Offer) []int {
	if uint64(len(offers)) > math.MaxUint32 {
		return ScoreDescending{}.Order(offers)
	}
	keys := make([]int32, len(offers))
	for i, o := range offers {
		keys[i] = scoreKey(o.frame().Score)
	}
	return orderByScoreKeys(keys)
}

// orderByScoreKeys sorts indices by (score key descending, index) for at
// most 2^32 keys: index order must be FrameID order. The key is one word
// per offer, sorted without a comparison function: flipping the sign bit
// maps the int32 score key to a uint32 in the same order, complementing it
// makes the order descending.
func orderByScoreKeys(keys []int32) []int {
	words := make([]uint64, len(keys))
	for i, k := range keys {
		words[i] = uint64(^(uint32(k)^(1<<31)))<<32 | uint64(i)
	}
	words = radixSortWords(words, make([]uint64, len(words)))
	order := make([]int, len(words))
	for k, w := range words {
		order[k] = int(uint32(w))
	}
	return order
}

// RoundRobinByRank takes every provider's best frame, then every provider's
// second, and so on; within a tier providers go in id order. Key: (rank
// within provider, provider ordinal, FrameID).
type RoundRobinByRank struct{}

// Name returns "round-robin-by-rank".
func (RoundRobinByRank) Name() string { return NameRoundRobinByRank }

// Order ranks offers round robin by their rank within their provider.
func (RoundRobinByRank) Order(offers []Offer) []int {
	l := newLanes(offers)
	return l.sorted(func(a, b int) int {
		return cmpChain(cmp.Compare(l.rank[a], l.rank[b]), cmp.Compare(l.ordinal[a], l.ordinal[b]))
	})
}

// PerProviderQuota deals frames in tiers of K per provider: every
// provider's first K, then every provider's next K, and so on; it never
// truncates. K = 0 means 1 (which equals round robin); DefaultQuota is 3.
// Key: (rank/K, provider ordinal, rank, FrameID).
type PerProviderQuota struct {
	// K is the tier size: how many frames each provider contributes per
	// tier, counted by rank within the provider. Zero or negative means 1.
	K int
}

// Name returns "per-provider-quota".
func (PerProviderQuota) Name() string { return NamePerProviderQuota }

// Order ranks offers in per-provider tiers of K.
func (q PerProviderQuota) Order(offers []Offer) []int {
	k := q.K
	if k <= 0 {
		k = 1
	}
	l := newLanes(offers)
	return l.sorted(func(a, b int) int {
		return cmpChain(cmp.Compare(l.rank[a]/k, l.rank[b]/k), cmp.Compare(l.ordinal[a], l.ordinal[b]),
			cmp.Compare(l.rank[a], l.rank[b]))
	})
}

// TrustWeighted scales each provider's allocation by an operator weight
// (never its scores): a provider of weight w contributes w frames per tier.
// Providers absent from Weights get Default. A weight of 0 puts the
// provider's frames last, still ranked among themselves. Key for w > 0:
// (0, rank/w, ordinal, rank); for w = 0: (1, rank, ordinal, rank); then
// FrameID.
type TrustWeighted struct {
	// Weights maps a provider's local id (Offer.Provider) to the number of
	// frames it contributes per tier. nil means every provider gets
	// Default.
	Weights map[string]uint32
	// Default is the weight of a provider absent from Weights; the zero
	// value puts those providers' frames last, as a weight of 0 does.
	Default uint32
}

// Name returns "trust-weighted".
func (TrustWeighted) Name() string { return NameTrustWeighted }

// Order ranks offers by weighted tiers.
func (t TrustWeighted) Order(offers []Offer) []int {
	l := newLanes(offers)
	weight := make([]int, len(offers))
	for i, o := range offers {
		w, ok := t.Weights[o.Provider]
		if !ok {
			w = t.Default
		}
		weight[i] = int(w)
	}
	key := func(i int) (int, int) {
		if weight[i] == 0 {
			return 1, l.rank[i]
		}
		return 0, l.rank[i] / weight[i]
	}
	return l.sorted(func(a, b int) int {
		ga, ta := key(a)
		gb, tb := key(b)
		return cmpChain(cmp.Compare(ga, gb), cmp.Compare(ta, tb), cmp.Compare(l.ordinal[a], l.ordinal[b]),
			cmp.Compare(l.rank[a], l.rank[b]))
	})
}

// rankWith returns strategy s's order of offers, repaired into a
// permutation: proposed indices that are out of range or already placed are
// ignored, and every offer left unplaced is appended in ScoreDescending
// order. A nil s means ScoreDescending.
func rankWith(s Strategy, offers []Offer) []int {
	if s == nil {
		s = ScoreDescending{}
	}
	proposed := s.Order(offers)
	placed := make([]bool, len(offers))
	out := make([]int, 0, len(offers))
	for _, i := range proposed {
		if i >= 0 && i < len(offers) && !placed[i] {
			placed[i] = true
			out = append(out, i)
		}
	}
	if len(out) == len(offers) {
		return out
	}
	for _, i := range (ScoreDescending{}).Order(offers) {
		if !placed[i] {
			out = append(out, i)
		}
	}
	return out
}

// lanes holds the per-provider facts every strategy keys on: identities,
// provider ordinal (position of the provider id among the sorted distinct
// ids) and rank (position within the provider by score descending, then
// FrameID).
type lanes struct {
	offers []Offer
	ids    []frame.ID // identities; nil when strict
	keys   []int32    // score keys (scoreKey)
	// strict: ids are strictly increasing, so index order is FrameID order
	// (true for Dedup's output, which ForPrompt ranks).
	strict  bool
	ordinal []int
	rank    []int
}

// newIDs returns lanes with identities only (no ordinals or ranks).
func newIDs(offers []Offer) *lanes {
	l := &lanes{offers: offers, keys: make([]int32, len(offers))}
	l.strict = true
	var prev frame.ID
	for i, o := range offers {
		f := o.frame()
		l.keys[i] = scoreKey(f.Score)
		id := f.Identity(o.Provider)
		if i > 0 && l.strict && prev.Compare(id) >= 0 {
			l.strict = false
		}
		prev = id
	}
	if !l.strict {
		l.ids = make([]frame.ID, len(offers))
		for i, o := range offers {
			l.ids[i] = o.ID()
		}
	}
	return l
}

func newLanes(offers []Offer) *lanes {
	n := len(offers)
	l := newIDs(offers)
	l.ordinal, l.rank = make([]int, n), make([]int, n)
	// Sorting by (provider, score desc, FrameID, ...) yields both facts in
	// one pass.
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	slices.SortFunc(idx, func(a, b int) int {
		return cmpChain(strings.Compare(offers[a].Provider, offers[b].Provider), l.byScore(a, b))
	})
	ord, r := -1, 0
	for k, i := range idx {
		if k == 0 || offers[i].Provider != offers[idx[k-1]].Provider {
			ord++
			r = 0
		}
		l.ordinal[i] = ord
		l.rank[i] = r
		r++
	}
	return l
}

// byScore is the within-provider comparator: score descending, then FrameID
// and the value tiebreak.
func (l *lanes) byScore(a, b int) int {
	if c := cmp.Compare(l.keys[b], l.keys[a]); c != 0 {
		return c
	}
	return l.tiebreak(a, b)
}

// tiebreak orders by FrameID, then by value, then by index (equal values are
// interchangeable, so the index cannot change any output).
func (l *lanes) tiebreak(a, b int) int {
	if l.strict {
		return cmp.Compare(a, b)
	}
	if c := l.ids[a].Compare(l.ids[b]); c != 0 {
		return c
	}
	if c := compareOffers(l.offers[a], l.offers[b]); c != 0 {
		return c
	}
	return cmp.Compare(a, b)
}

// sorted returns the indices sorted by key, then FrameID (tiebreak).
func (l *lanes) sorted(key func(a, b int) int) []int {
	idx := make([]int, len(l.offers))
	for i := range idx {
		idx[i] = i
	}
	slices.SortFunc(idx, func(a, b int) int {
		if c := key(a, b); c != 0 {
			return c
		}
		return l.tiebreak(a, b)
	})
	return idx
}

func cmpChain(cs ...int) int {
	for _, c := range cs {
		if c != 0 {
			return c
		}
	}
	return 0
}

// radixSortWords sorts words ascending with a least-significant-digit radix
// sort over bytes, skipping digits every word shares; tmp is scratch space
// of the same length. It returns the sorted slice (words or tmp).
func radixSortWords(words, tmp []uint64) []uint64 {
	var counts [8][256]int
	for _, w := range words {
		for d := 0; d < 8; d++ {
			counts[d][byte(w>>(8*d))]++
		}
	}
	src, dst := words, tmp
	for d := 0; d < 8 && len(src) > 1; d++ {
		c := &counts[d]
		if c[byte(src[0]>>(8*d))] == len(src) {
			continue // every word has this digit
		}
		var next [256]int
		bucketStarts(&next, c)
		for _, w := range src {
			b := byte(w >> (8 * d))
			dst[next[b]] = w
			next[b]++
		}
		src, dst = dst, src
	}
	return src
}

// bucketStarts sets next[b] to where the first element whose digit is b
// goes in one pass of a byte-wise radix sort whose digit counts are c: the
// sum of the counts of the smaller digits. Both radix sorts share it.
func bucketStarts(next, c *[256]int) {
	sum := 0
	for b := range c {
		next[b] = sum
		sum += c[b]
	}
}
