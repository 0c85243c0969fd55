package compose

import (
	"math"
	"slices"
	"strings"

	"github.com/ctxkit/ctxkit/frame"
)

// DedupDrop records one offer collapsed into another as the same evidence.
type DedupDrop struct {
	// Dropped is the identity that was collapsed away.
	Dropped frame.ID
	// Kept is the identity of the group's final survivor, the frame that
	// absorbed it (never an identity that was itself dropped).
	Kept frame.ID
}

// Deduped is the outcome of Dedup.
type Deduped struct {
	// Kept holds one offer per distinct piece of evidence, in canonical
	// FrameID order. When the group had more than one member, the frame is a
	// copy of the survivor whose provenance is the merged provenance of the
	// group; the caller's frames are never modified.
	Kept []Offer
	// Dropped lists every collapsed offer with its group's survivor, in
	// canonical order of the dropped identity.
	Dropped []DedupDrop
}

// Dedup collapses offers that carry the same evidence. Two offers are the
// same evidence when they have the same identity, when both carry a
// content_digest and the digests are equal, or when both name a "file"
// provenance link with the same uri and the same range (an absent range on
// both means the whole resource). The relation is closed transitively, so a
// group is a connected component and the result does not depend on arrival
// order.
//
// In each group the higher score survives (scores compare as float32 with a
// total order); a tie keeps the canonically smaller FrameID. The survivor
// carries the order-preserving union of the group's provenance: its own
// links first, then each other member's new links, members in canonical
// order. Every other member is reported as dropped in favour of the
// survivor.
//
// Dedup runs in O(n log n) time for n offers (plus the provenance sizes).
func Dedup(offers []Offer) Deduped {
	g := dedupGroups(offers)
	out := Deduped{Kept: make([]Offer, 0, len(g.survivors))}
	for _, s := range g.survivors {
		out.Kept = append(out.Kept, g.keptOffer(offers, s))
	}
	for _, d := range g.drops {
		out.Dropped = append(out.Dropped, DedupDrop{Dropped: g.ids[d], Kept: g.ids[g.survivorOf[d]]})
	}
	return out
}

// groups is the internal form of a dedup: indices into the offers.
type groups struct {
	ids        []frame.ID
	survivors  []int   // survivor indices, canonical order
	drops      []int   // dropped indices, canonical order
	survivorOf []int   // survivor index of every offer (itself for survivors)
	members    [][]int // per survivor index with more than one member: members in canonical order
}

func dedupGroups(offers []Offer) *groups {
	n := len(offers)
	g := &groups{ids: make([]frame.ID, n), survivorOf: make([]int, n)}
	for i, o := range offers {
		g.ids[i] = o.ID()
	}
	canon := canonicalOrder(offers, g.ids)

	parent := make([]int, n)
	for i := range parent {
		parent[i] = i
	}
	find := func(x int) int {
		for parent[x] != x {
			parent[x] = parent[parent[x]]
			x = parent[x]
		}
		return x
	}
	union := func(a, b int) {
		ra, rb := find(a), find(b)
		if ra != rb {
			parent[rb] = ra
		}
	}
	type fileKey struct{ uri, rng string }
	byDigest := make(map[string]int, n)
	byFile := make(map[fileKey]int, n)
	for k, i := range canon {
		f := offers[i].frame()
		// Equal identities are adjacent in canonical order.
		if k > 0 && g.ids[canon[k-1]] == g.ids[i] {
			union(canon[k-1], i)
		}
		if f.ContentDigest != "" {
			if j, ok := byDigest[f.ContentDigest]; ok {
				union(j, i)
			} else {
				byDigest[f.ContentDigest] = i
			}
		}
		for _, p := range f.Provenance {
			if p.Type != frame.ProvenanceFile || p.URI == "" {
				continue
			}
			k := fileKey{p.URI, p.Range}
			if j, ok := byFile[k]; ok {
				union(j, i)
			} else {
				byFile[k] = i
			}
		}
	}

	// Pick each component's survivor: highest score, then smallest
	// canonical position (FrameID first).
	pos := make([]int, n)
	for k, i := range canon {
		pos[i] = k
	}
	best := make([]int, n) // root -> survivor + 1 (0: none yet)
	better := func(a, b int) bool {
		if c := CompareScores(offers[a].frame().Score, offers[b].frame().Score); c != 0 {
			return c > 0
		}
		return pos[a] < pos[b]
	}
	for _, i := range canon {
		r := find(i)
		if s := best[r] - 1; s < 0 || better(i, s) {
			best[r] = i + 1
		}
	}
	size := make([]int, n)
	for _, i := range canon {
		s := best[find(i)] - 1
		g.survivorOf[i] = s
		size[s]++
		if s == i {
			g.survivors = append(g.survivors, i)
		} else {
			g.drops = append(g.drops, i)
		}
	}
	if len(g.drops) > 0 {
		g.members = make([][]int, n)
		for _, i := range canon {
			s := g.survivorOf[i]
			if size[s] > 1 {
				g.members[s] = append(g.members[s], i)
			}
		}
	}
	return g
}

// keptOffer returns the survivor s as it leaves dedup: unchanged when it was
// alone, else a copy carrying the group's merged provenance.
func (g *groups) keptOffer(offers []Offer, s int) Offer {
	if g.members == nil || len(g.members[s]) < 2 {
		return offers[s]
	}
	f := *offers[s].frame()
	f.Provenance = g.mergedProvenance(offers, s)
	return Offer{Provider: offers[s].Provider, Frame: &f}
}

// mergedProvenance is the survivor's provenance followed by every other
// member's links not already present, members in canonical order.
func (g *groups) mergedProvenance(offers []Offer, s int) []frame.Provenance {
	own := offers[s].frame().Provenance
	merged := slices.Clip(slices.Clone(own))
	seen := make(map[frame.Provenance]struct{}, len(own))
	for _, p := range own {
		seen[p] = struct{}{}
	}
	for _, m := range g.members[s] {
		if m == s {
			continue
		}
		for _, p := range offers[m].frame().Provenance {
			if _, ok := seen[p]; !ok {
				seen[p] = struct{}{}
				merged = append(merged, p)
			}
		}
	}
	if len(merged) == 0 {
		return nil
	}
	return merged
}

// canonicalOrder returns the indices of offers sorted by identity, then by
// value (compareOffers), then by index.
func canonicalOrder(offers []Offer, ids []frame.ID) []int {
	return canonicalOrderLimit(offers, ids, math.MaxInt32)
}

// canonicalOrderLimit is canonicalOrder; identities totalling more than
// limit bytes are sorted in place rather than through 32-bit arena offsets.
func canonicalOrderLimit(offers []Offer, ids []frame.ID, limit int) []int {
	n := len(offers)
	tie := func(a, b int) int {
		if c := strings.Compare(ids[a].Digest, ids[b].Digest); c != 0 {
			return c
		}
		if c := compareOffers(offers[a], offers[b]); c != 0 {
			return c
		}
		return a - b
	}
	arenaLen := 0
	for _, id := range ids {
		arenaLen += len(id.Provider) + len(id.Frame)
	}
	if arenaLen > limit || n > math.MaxInt32 {
		// Too large for 32-bit offsets: compare the identities in place.
		canon := make([]int, n)
		for i := range canon {
			canon[i] = i
		}
		slices.SortFunc(canon, func(a, b int) int {
			if c := strings.Compare(ids[a].Provider, ids[b].Provider); c != 0 {
				return c
			}
			if c := strings.Compare(ids[a].Frame, ids[b].Frame); c != 0 {
				return c
			}
			return tie(a, b)
		})
		return canon
	}
	// Sort keys that hold no pointers (offsets into one arena holding every
	// provider and frame id): comparisons read dense memory, and moving keys
	// costs no write barriers while a collection runs.
	type keyed struct {
		off, prov, id int32 // arena offset, provider and frame id lengths
		i             int32
	}
	var arena strings.Builder
	arena.Grow(arenaLen)
	ks := make([]keyed, n)
	for i, id := range ids {
		ks[i] = keyed{int32(arena.Len()), int32(len(id.Provider)), int32(len(id.Frame)), int32(i)}
		arena.WriteString(id.Provider)
		arena.WriteString(id.Frame)
	}
	all := arena.String()
	slices.SortFunc(ks, func(a, b keyed) int {
		ap, bp := all[a.off:a.off+a.prov], all[b.off:b.off+b.prov]
		if c := strings.Compare(ap, bp); c != 0 {
			return c
		}
		ai, bi := all[a.off+a.prov:a.off+a.prov+a.id], all[b.off+b.prov:b.off+b.prov+b.id]
		if c := strings.Compare(ai, bi); c != 0 {
			return c
		}
		return tie(int(a.i), int(b.i))
	})
	canon := make([]int, n)
	for k := range ks {
		canon[k] = int(ks[k].i)
	}
	return canon
}
