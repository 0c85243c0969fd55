package compose

import (
	"hash/maphash"
	"math"
	"math/bits"
	"slices"
	"strings"

	"github.com/ctxkit/ctxkit/frame"
)

// dedupDrop records one offer collapsed into another as the same evidence.
type dedupDrop struct {
	// Dropped is the identity that was collapsed away.
	Dropped frame.ID
	// Kept is the identity of the group's final survivor, the frame that
	// absorbed it (never an identity that was itself dropped).
	Kept frame.ID
}

// deduped is the outcome of Dedup.
type deduped struct {
	// Kept holds one offer per distinct piece of evidence, in canonical
	// FrameID order. When the group had more than one member, the frame is a
	// copy of the survivor whose provenance is the merged provenance of the
	// group; the caller's frames are never modified.
	Kept []Offer
	// Dropped lists every collapsed offer with its group's survivor, in
	// canonical order of the dropped identity.
	Dropped []dedupDrop
}

// dedup collapses offers that carry the same evidence. Two offers are the
// same evidence when they have the same identity, when both carry a
// content_digest and the digests are equal, or when both name a "file"
// provenance link with a present uri and the same uri and range (an absent
// range on both means the whole resource). Presence follows
// frame.Provenance.Has: a uri sent as "" is present, and a range sent as ""
// differs from an absent one, as in the reference. The relation is closed transitively, so a
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
// dedup runs in O(n log n) time for n offers (plus the provenance sizes).
func dedup(offers []Offer) deduped {
	g := dedupGroups(offers)
	out := deduped{Kept: make([]Offer, 0, len(g.survivors))}
	for _, s := range g.survivors {
		out.Kept = append(out.Kept, g.keptOffer(offers, s))
	}
	for _, d := range g.drops {
		out.Dropped = append(out.Dropped, dedupDrop{Dropped: g.ids[d], Kept: g.ids[g.survivorOf[d]]})
	}
	return out
}

// groups is the internal form of a dedup: indices into the offers.
type groups struct {
	ids        []frame.ID
	survivors  []int // survivor indices, canonical order
	drops      []int // dropped indices, canonical order
	survivorOf []int // survivor index of every offer (itself for survivors)
	// Groups of more than one member: survivor s's members, in canonical
	// order, are flat[start[s]:start[s]+size[s]] (see members); size is nil
	// when nothing was dropped.
	size, start, flat []int
}

func dedupGroups(offers []Offer) *groups {
	n := len(offers)
	g := &groups{ids: make([]frame.ID, n), survivorOf: make([]int, n)}
	for i, o := range offers {
		g.ids[i] = o.ID()
	}
	canon := canonicalOrder(offers, g.ids)
	uf := newUnionFind(n)
	// Equal identities are adjacent in canonical order.
	for k := 1; k < n; k++ {
		if g.ids[canon[k-1]] == g.ids[canon[k]] {
			uf.union(canon[k-1], canon[k])
		}
	}
	linkEvidence(offers, uf)
	g.pickSurvivors(offers, canon, uf)
	return g
}

// unionFind is a disjoint-set forest over offer indices.
type unionFind []int

func newUnionFind(n int) unionFind {
	uf := make(unionFind, n)
	for i := range uf {
		uf[i] = i
	}
	return uf
}

func (uf unionFind) find(x int) int {
	for uf[x] != x {
		uf[x] = uf[uf[x]]
		x = uf[x]
	}
	return x
}

func (uf unionFind) union(a, b int) {
	if ra, rb := uf.find(a), uf.find(b); ra != rb {
		uf[rb] = ra
	}
}

// linkEvidence joins the offers that carry the same content digest or
// the same file link. The components do not depend on the order in which
// links are found, so the digests and file links are read in memory order.
func linkEvidence(offers []Offer, uf unionFind) {
	type fileLink struct{ offer, prov int }
	var files []fileLink
	digests := newLinkIndex(len(offers))
	for i := range offers {
		f := offers[i].frame()
		if d := f.ContentDigest; d != "" {
			if j := digests.add(maphash.String(digests.seed, d), i, func(j int) bool {
				return offers[j].frame().ContentDigest == d
			}); j >= 0 {
				uf.union(j, i)
			}
		}
		for p, l := range f.Provenance {
			if l.Type == frame.ProvenanceFile && l.Has(frame.MemberURI) {
				files = append(files, fileLink{i, p})
			}
		}
	}
	byFile := newLinkIndex(len(files))
	for k, fl := range files {
		l := &offers[fl.offer].frame().Provenance[fl.prov]
		h := maphash.String(byFile.seed, l.URI) ^ bits.RotateLeft64(maphash.String(byFile.seed, l.Range), 29)*0x9E3779B97F4A7C15
		if j := byFile.add(h, k, func(j int) bool {
			m := &offers[files[j].offer].frame().Provenance[files[j].prov]
			return m.URI == l.URI && m.Range == l.Range && m.Has(frame.MemberRange) == l.Has(frame.MemberRange)
		}); j >= 0 {
			uf.union(files[j].offer, fl.offer)
		}
	}
}

// pickSurvivors picks each component's survivor (highest score, then
// smallest canonical position: FrameID first) and lays the groups out.
func (g *groups) pickSurvivors(offers []Offer, canon []int, uf unionFind) {
	n := len(offers)
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
		r := uf.find(i)
		if s := best[r] - 1; s < 0 || better(i, s) {
			best[r] = i + 1
		}
	}
	size := make([]int, n)
	survivors := 0
	for _, i := range canon {
		s := best[uf.find(i)] - 1
		g.survivorOf[i] = s
		size[s]++
		if s == i {
			survivors++
		}
	}
	g.survivors, g.drops = make([]int, 0, survivors), make([]int, 0, n-survivors)
	for _, i := range canon {
		if g.survivorOf[i] == i {
			g.survivors = append(g.survivors, i)
		} else {
			g.drops = append(g.drops, i)
		}
	}
	if len(g.drops) > 0 {
		g.flatten(canon, size)
	}
}

// flatten lays the groups of more than one member out as runs of one flat
// list, each in canonical order.
func (g *groups) flatten(canon, size []int) {
	g.size, g.start = size, make([]int, len(canon))
	total := 0
	for _, s := range g.survivors {
		if size[s] > 1 {
			g.start[s] = total
			total += size[s]
		}
	}
	g.flat = make([]int, total)
	for _, i := range canon {
		if s := g.survivorOf[i]; size[s] > 1 {
			g.flat[g.start[s]] = i
			g.start[s]++
		}
	}
	for _, s := range g.survivors {
		g.start[s] -= size[s]
	}
}

// members returns the members of survivor s's group in canonical order,
// or nil when s was alone.
func (g *groups) members(s int) []int {
	if g.size == nil || g.size[s] < 2 {
		return nil
	}
	return g.flat[g.start[s] : g.start[s]+g.size[s]]
}

// linkIndex finds items (numbered 0, 1, ...) that carry equal keys: an
// open-addressing hash table of item numbers, holding no pointers. Hashes
// are seeded per index so crafted keys cannot force collisions; the seed
// decides only where items sit in the table, never which items are found
// equal.
type linkIndex struct {
	seed   maphash.Seed
	slots  []int    // item + 1; 0 is empty
	hashes []uint64 // hash of each item added
}

func newLinkIndex(n int) *linkIndex {
	size := 8
	for size < 2*n {
		size *= 2
	}
	return &linkIndex{seed: maphash.MakeSeed(), slots: make([]int, size), hashes: make([]uint64, n)}
}

// add records item, whose key hashes to h, and returns the first item
// added with an equal key (same reports equality with item j), or -1 when
// the key is new.
func (x *linkIndex) add(h uint64, item int, same func(j int) bool) int {
	x.hashes[item] = h
	mask := uint64(len(x.slots) - 1)
	for p := h & mask; ; p = (p + 1) & mask {
		j := x.slots[p] - 1
		if j < 0 {
			x.slots[p] = item + 1
			return -1
		}
		if x.hashes[j] == h && same(j) {
			return j
		}
	}
}

// keptOffer returns the survivor s as it leaves dedup: unchanged when it was
// alone, else a copy carrying the group's merged provenance.
func (g *groups) keptOffer(offers []Offer, s int) Offer {
	if len(g.members(s)) < 2 {
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
	total := 0
	for _, m := range g.members(s) {
		total += len(offers[m].frame().Provenance)
	}
	merged := make([]frame.Provenance, len(own), total)
	copy(merged, own)
	// Few links: look for each in what is merged so far; many: index them.
	const linear = 16
	var seen map[frame.Provenance]struct{}
	if total > linear {
		seen = make(map[frame.Provenance]struct{}, total)
		for _, p := range own {
			seen[p] = struct{}{}
		}
	}
	for _, m := range g.members(s) {
		if m == s {
			continue
		}
		for _, p := range offers[m].frame().Provenance {
			if seen != nil {
				if _, ok := seen[p]; ok {
					continue
				}
				seen[p] = struct{}{}
			} else if slices.Contains(merged, p) {
				continue
			}
			merged = append(merged, p)
		}
	}
	if len(merged) == 0 {
		return nil
	}
	return merged
}

// canonicalOrder returns the indices of offers sorted by identity, then by
// value (compareOffers), then by index.
//
// The sort compares dense pointer-free keys: each provider's ordinal among
// the distinct providers, then eight bytes of the frame id taken just after
// the prefix that every frame id shares (zero-padded, big-endian). Key order
// never contradicts string order, so only keys that tie are compared as
// strings. Moving the keys costs no write barriers while a collection runs.
func canonicalOrder(offers []Offer, ids []frame.ID) []int {
	n := len(offers)
	if n > math.MaxInt32 {
		return canonicalOrderSimple(offers, ids)
	}
	ks := make([]canonKey, n)

	// Provider ordinals: first-seen numbers, then renumbered in sorted
	// order (there are few providers; consecutive offers often share one).
	// A handful of names is searched in a list (usually the same string,
	// so equal pointers); more go through a map.
	const listed = 16
	var seen map[string]int32
	var names []string
	for i, id := range ids {
		num := int32(-1)
		if seen == nil {
			for k, name := range names {
				if name == id.Provider {
					num = int32(k)
					break
				}
			}
		} else if k, ok := seen[id.Provider]; ok {
			num = k
		}
		if num < 0 {
			num = int32(len(names))
			names = append(names, id.Provider)
			if seen != nil {
				seen[id.Provider] = num
			} else if len(names) > listed {
				seen = make(map[string]int32, 2*len(names))
				for k, name := range names {
					seen[name] = int32(k)
				}
			}
		}
		ks[i].prov = num
	}
	rank := make([]int32, len(names))
	byName := make([]int32, len(names))
	for k := range byName {
		byName[k] = int32(k)
	}
	slices.SortFunc(byName, func(a, b int32) int { return strings.Compare(names[a], names[b]) })
	for r, k := range byName {
		rank[k] = int32(r)
	}

	common := 0
	if n > 0 {
		common = len(ids[0].Frame)
		for _, id := range ids[1:] {
			common = commonPrefixLen(ids[0].Frame[:common], id.Frame)
		}
	}
	for i := range ks {
		ks[i].prov = rank[ks[i].prov]
		ks[i].i = int32(i)
		ks[i].key = prefixKey(ids[i].Frame[common:])
	}
	ks = radixSort(ks, make([]canonKey, n))
	// Runs of equal keys are put in order by comparison.
	for lo := 0; lo < n; {
		hi := lo + 1
		for hi < n && ks[hi].prov == ks[lo].prov && ks[hi].key == ks[lo].key {
			hi++
		}
		if hi-lo > 1 {
			slices.SortFunc(ks[lo:hi], func(a, b canonKey) int {
				ia, ib := int(a.i), int(b.i)
				if c := strings.Compare(ids[ia].Frame, ids[ib].Frame); c != 0 {
					return c
				}
				return canonicalTie(offers, ids, ia, ib)
			})
		}
		lo = hi
	}
	canon := make([]int, n)
	for k := range ks {
		canon[k] = int(ks[k].i)
	}
	return canon
}

// canonKey is the sort key of one offer in canonicalOrder.
type canonKey struct {
	prov int32  // provider ordinal
	i    int32  // offer index
	key  uint64 // frame id bytes after the common prefix
}

// radixSort sorts ks by (prov, key), stably, with a least-significant-digit
// radix sort over bytes; tmp is scratch space of the same length. Digits on
// which every key agrees cost no pass. It returns the sorted slice (ks or
// tmp).
func radixSort(ks, tmp []canonKey) []canonKey {
	const digits = 8 + 4 // key bytes, then provider ordinal bytes
	digit := func(k *canonKey, d int) byte {
		if d < 8 {
			return byte(k.key >> (8 * d))
		}
		return byte(uint32(k.prov) >> (8 * (d - 8)))
	}
	var counts [digits][256]int
	for i := range ks {
		k := &ks[i]
		for d := 0; d < 8; d++ {
			counts[d][byte(k.key>>(8*d))]++
		}
		for d := 8; d < digits; d++ {
			counts[d][byte(uint32(k.prov)>>(8*(d-8)))]++
		}
	}
	src, dst := ks, tmp
	for d := 0; d < digits && len(src) > 1; d++ {
		c := &counts[d]
		if c[digit(&src[0], d)] == len(src) {
			continue // every key has this digit
		}
		var next [256]int
		bucketStarts(&next, c)
		for i := range src {
			b := digit(&src[i], d)
			dst[next[b]] = src[i]
			next[b]++
		}
		src, dst = dst, src
	}
	return src
}

// canonicalOrderSimple is canonicalOrder by plain comparisons of the
// identities: the reference the keyed sort must agree with.
func canonicalOrderSimple(offers []Offer, ids []frame.ID) []int {
	canon := make([]int, len(offers))
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
		return canonicalTie(offers, ids, a, b)
	})
	return canon
}

// canonicalTie orders two offers whose provider and frame id are equal: by
// digest, then by value, then by index.
func canonicalTie(offers []Offer, ids []frame.ID, a, b int) int {
	if c := strings.Compare(ids[a].Digest, ids[b].Digest); c != 0 {
		return c
	}
	if c := compareOffers(offers[a], offers[b]); c != 0 {
		return c
	}
	return a - b
}

// commonPrefixLen returns the length of the longest common prefix of a and b.
func commonPrefixLen(a, b string) int {
	n := min(len(a), len(b))
	i := 0
	for ; i+8 <= n; i += 8 {
		if x := load64(a, i) ^ load64(b, i); x != 0 {
			return i + bits.TrailingZeros64(x)/8
		}
	}
	for ; i < n && a[i] == b[i]; i++ {
	}
	return i
}

// prefixKey packs the first eight bytes of s, zero-padded, into a
// big-endian word: prefixKey(a) < prefixKey(b) implies a < b, and a < b
// implies prefixKey(a) <= prefixKey(b).
func prefixKey(s string) uint64 {
	if len(s) >= 8 {
		return bits.ReverseBytes64(load64(s, 0))
	}
	var k uint64
	for i := 0; i < 8; i++ {
		k <<= 8
		if i < len(s) {
			k |= uint64(s[i])
		}
	}
	return k
}

// load64 reads s[i:i+8] as a little-endian word (one load once compiled).
func load64(s string, i int) uint64 {
	w := s[i : i+8] // one bounds check; the eight indexes below need none
	return uint64(w[0]) | uint64(w[1])<<8 | uint64(w[2])<<16 | uint64(w[3])<<24 |
		uint64(w[4])<<32 | uint64(w[5])<<40 | uint64(w[6])<<48 | uint64(w[7])<<56
}
