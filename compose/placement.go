package compose

import (
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"strconv"
	"strings"

	"github.com/ctxkit/ctxkit/frame"
)

// Placement is the rule that maps the included frames, in ranking order
// (the ranking without Options.StickyMargin when one is in force), to
// render order. It never changes which frames are included: dedup, ranking
// and packing run the same way under every placement, so the audit's
// entries, the budget and the tokens used are identical; only the order of
// the fenced blocks (and the citation map, which follows it) differs.
type Placement uint8

// Placements. The zero value is EdgesByRank, the default.
const (
	// EdgesByRank folds the ranking to the edges (foldToEdges): the best
	// frame first, the second best last, the weakest in the middle (Lost in
	// the Middle). The order depends on the scores, so a score change
	// anywhere can rewrite the whole block: usually only the preamble
	// stays from one turn to the next.
	EdgesByRank Placement = iota
	// Canonical renders the included frames in canonical FrameID order.
	// Scores never move a frame, so the block changes only where the
	// included set changes: everything before the first frame that entered
	// or left stays. It needs no previous layout. The best frame sits
	// wherever its identity sorts.
	Canonical
	// StableFirst keeps the front of the previous turn's layout
	// (Options.Previous): the longest run of its leading frames that are
	// all still included, in the same order, so the prompt's prefix stays
	// byte-identical; the re-lay rule then lays every other included frame
	// out after them as a volatile tail (best first, second best last, the
	// rest in ranking order between). Without a previous layout the whole
	// block is such a tail. See ForPrompt for the rule and why.
	StableFirst
)

var placementNames = [...]string{EdgesByRank: "edges-by-rank", Canonical: "canonical", StableFirst: "stable-first"}

// String returns "edges-by-rank", "canonical" or "stable-first".
func (p Placement) String() string {
	return enumName(p, EdgesByRank, placementNames[:], "placement")
}

// ParsePlacement returns the placement spelled s ("edges-by-rank",
// "canonical" or "stable-first").
func ParsePlacement(s string) (Placement, bool) { return parseName(s, EdgesByRank, StableFirst) }

// Placements lists every placement, the default first.
func Placements() []Placement { return []Placement{EdgesByRank, Canonical, StableFirst} }

// DefaultMinPrefixTokens is the provider minimum cacheable prefix assumed
// when CacheOptions.MinPrefixTokens is zero: 1,024 tokens, the smallest
// prefix OpenAI caches and the smallest minimum Anthropic lists.
const DefaultMinPrefixTokens = 1024

// CacheOptions tunes the stable-prefix report. A nil *CacheOptions, and
// every zero member, means the defaults.
type CacheOptions struct {
	// MinPrefixTokens is the provider's minimum cacheable prefix, compared
	// with the stable prefix's canonical budget tokens: below it the result
	// carries a warning. Zero means DefaultMinPrefixTokens; a negative value
	// turns the warning off.
	MinPrefixTokens int
}

func (c *CacheOptions) minPrefix() int {
	if c == nil || c.MinPrefixTokens == 0 {
		return DefaultMinPrefixTokens
	}
	if c.MinPrefixTokens < 0 {
		return 0
	}
	return c.MinPrefixTokens
}

// RelayReason says whether and why StableFirst re-laid frames instead of
// following the previous layout.
type RelayReason uint8

// Re-lay reasons. The zero value, NotRelaid, means the previous layout was
// followed (or the placement is not StableFirst).
const (
	// NotRelaid: every frame of the previous layout is still included and
	// kept its place (or the placement is not StableFirst).
	NotRelaid RelayReason = iota
	// RelayNoPrevious: Options.Previous was nil (a first turn).
	RelayNoPrevious
	// RelayInvalidLayout: Options.Previous failed Layout.Validate.
	RelayInvalidLayout
	// RelayDropped: a frame of the previous layout is no longer included;
	// the layout was kept up to it and re-laid from there.
	RelayDropped
)

var relayNames = [...]string{NotRelaid: "", RelayNoPrevious: "no_previous",
	RelayInvalidLayout: "invalid_layout", RelayDropped: "dropped"}

// String returns "", "no_previous", "invalid_layout" or "dropped".
func (r RelayReason) String() string {
	return enumName(r, NotRelaid, relayNames[:], "relay")
}

// CacheReport describes the prompt's split into a stable prefix, which a
// host can mark with a provider cache breakpoint, and a volatile tail.
// Result.Stable and Result.Volatile return the two parts.
type CacheReport struct {
	// Placement is the placement that ran.
	Placement Placement
	// StablePrefixBytes is the length in bytes of the stable prefix: the
	// preamble and the stable part's frames. The prompt splits there, at a
	// frame boundary.
	StablePrefixBytes int
	// StablePrefixTokens is the stable prefix's canonical budget tokens
	// (ceil(bytes/4)), the preamble included.
	StablePrefixTokens int
	// StablePrefixHash is "sha256:" and the lower-case hex SHA-256 of the
	// stable prefix's bytes: equal hashes on two turns mean the provider
	// can serve the prefix from its cache.
	StablePrefixHash string
	// StableFrames is how many frames the stable part holds: the leading
	// frames that the previous layout (Options.Previous) rendered first, in
	// the same order. Without a valid previous layout it is 0 and the
	// stable prefix is the preamble alone.
	StableFrames int
	// Relay says whether and why StableFirst re-laid frames.
	Relay RelayReason
	// MinPrefixTokens is the provider minimum the stable prefix was
	// compared with (0 when the warning is off).
	MinPrefixTokens int
	// Warning is set when the stable prefix is shorter than
	// MinPrefixTokens: a provider will not cache it.
	Warning string
}

// layoutVersion is the version of the Layout encoding this package writes
// and reads.
const layoutVersion = 1

// Layout is the compact state a host stores between turns so that the next
// composition can keep its prompt prefix: the identities of the frames in
// render order, and how many of them formed the stable part. Every
// ForPrompt result carries one (Result.Layout); pass it back as
// Options.Previous on the next turn. Its JSON form is
//
//	{"version":1,"placement":"stable-first","frames":[FrameID,...],"stable":N}
type Layout struct {
	// Version is 1, the only layout version.
	Version int
	// Placement is the placement that produced the layout (informational:
	// StableFirst follows any valid layout).
	Placement Placement
	// Frames are the rendered frames' identities in render order.
	Frames []frame.ID
	// Stable is how many leading Frames formed the stable part.
	Stable int
}

// layoutError reports a layout that cannot be followed.
type layoutError struct {
	// Field is the member at fault ("version", "placement", "frames[3]",
	// "stable", or "" for the document as a whole).
	Field string
	// Detail says what is wrong.
	Detail string
}

// Error returns "compose: layout FIELD: DETAIL".
func (e *layoutError) Error() string {
	if e.Field == "" {
		return "compose: layout: " + e.Detail
	}
	return "compose: layout " + e.Field + ": " + e.Detail
}

// validate reports the first reason the layout cannot be followed, as a
// *layoutError, or nil: the version must be layoutVersion, the placement a
// known one, every frame identity must name a provider and a frame, and
// Stable must lie within 0..len(Frames). Repeated identities are allowed
// (two offers may share one); they are matched in order.
func (l *Layout) validate() error {
	if l == nil {
		return &layoutError{Detail: "missing"}
	}
	if l.Version != layoutVersion {
		return &layoutError{Field: "version", Detail: "unsupported version " + strconv.Itoa(l.Version) +
			"; want " + strconv.Itoa(layoutVersion)}
	}
	if _, ok := ParsePlacement(l.Placement.String()); !ok {
		return &layoutError{Field: "placement", Detail: "unknown " + l.Placement.String()}
	}
	for i, id := range l.Frames {
		if id.Provider == "" || id.Frame == "" {
			return &layoutError{Field: "frames[" + strconv.Itoa(i) + "]", Detail: "provider_id and frame_id are required"}
		}
	}
	if l.Stable < 0 || l.Stable > len(l.Frames) {
		return &layoutError{Field: "stable", Detail: strconv.Itoa(l.Stable) + " is outside 0.." + strconv.Itoa(len(l.Frames))}
	}
	return nil
}

// arrangement is the placement stage's output: the render order, how many
// leading items form the stable part, and what StableFirst did.
type arrangement struct {
	placed []item
	stable int
	relay  RelayReason
}

// arrange maps the included items, in ranking order, to render order under
// the placement in o, and finds the stable part: the leading frames that
// the previous layout rendered first, in the same order.
func arrange(ranked []item, o *Options) arrangement {
	var a arrangement
	switch o.Placement {
	case Canonical:
		a.placed = slices.Clone(ranked)
		// Stable: items sharing an identity keep their ranking order, which
		// is itself a total order over the offers' values.
		slices.SortStableFunc(a.placed, func(x, y item) int { return x.id.Compare(y.id) })
	case StableFirst:
		a = stableFirst(ranked, o.Previous)
	default:
		a.placed = foldToEdges(ranked)
	}
	if o.Previous != nil && o.Previous.validate() == nil {
		for a.stable < len(a.placed) && a.stable < len(o.Previous.Frames) &&
			a.placed[a.stable].id == o.Previous.Frames[a.stable] {
			a.stable++
		}
	}
	return a
}

// stableFirst implements StableFirst: it keeps the longest prefix of the
// previous layout whose frames are all still included, and lays the other
// included frames out after it as a tail (tail).
func stableFirst(ranked []item, prev *Layout) arrangement {
	if prev == nil {
		return arrangement{placed: tail(ranked), relay: RelayNoPrevious}
	}
	if prev.validate() != nil {
		return arrangement{placed: tail(ranked), relay: RelayInvalidLayout}
	}
	// Index the included items by identity; repeated identities queue up in
	// ranking order, so they are matched deterministically. The map is only
	// looked up, never ranged over.
	byID := make(map[frame.ID][]int, len(ranked))
	for k, it := range ranked {
		byID[it.id] = append(byID[it.id], k)
	}
	taken := make([]bool, len(ranked))
	placed := make([]item, 0, len(ranked))
	keep := 0
	for _, id := range prev.Frames {
		q := byID[id]
		if len(q) == 0 {
			break // the first frame of the previous layout no longer included
		}
		byID[id] = q[1:]
		taken[q[0]] = true
		placed = append(placed, ranked[q[0]])
		keep++
	}
	rest := make([]item, 0, len(ranked)-keep)
	for k, it := range ranked {
		if !taken[k] {
			rest = append(rest, it)
		}
	}
	a := arrangement{placed: append(placed, tail(rest)...)}
	if keep < len(prev.Frames) {
		a.relay = RelayDropped
	}
	return a
}

// tail lays out StableFirst's volatile tail from frames in ranking order:
// the best first, the second best last (nearest whatever follows the
// evidence), and the others in ranking order between them, so that the
// weakest frames, the likeliest to drop out next turn, sit just before the
// last one and a drop there costs the next turn's prefix little.
func tail(ranked []item) []item {
	if len(ranked) < 3 {
		return slices.Clone(ranked)
	}
	out := make([]item, 0, len(ranked))
	out = append(out, ranked[0])
	out = append(out, ranked[2:]...)
	return append(out, ranked[1])
}

// cacheReport builds the report for a rendered prompt whose stable prefix
// is the first stableBytes bytes.
func cacheReport(prompt string, stableBytes int, a arrangement, o *Options) CacheReport {
	sum := sha256.Sum256([]byte(prompt[:stableBytes]))
	r := CacheReport{
		Placement:          o.Placement,
		StablePrefixBytes:  stableBytes,
		StablePrefixTokens: frame.BudgetTokens(prompt[:stableBytes]),
		StablePrefixHash:   "sha256:" + hex.EncodeToString(sum[:]),
		StableFrames:       a.stable,
		Relay:              a.relay,
		MinPrefixTokens:    o.Cache.minPrefix(),
	}
	if r.MinPrefixTokens > 0 && r.StablePrefixTokens < r.MinPrefixTokens {
		r.Warning = "stable prefix of " + strconv.Itoa(r.StablePrefixTokens) +
			" budget tokens is below the provider minimum of " + strconv.Itoa(r.MinPrefixTokens) +
			"; a provider will not cache it"
	}
	return r
}

// layoutOf is the layout state of a placement.
func layoutOf(a arrangement, p Placement) *Layout {
	l := &Layout{Version: layoutVersion, Placement: p, Frames: make([]frame.ID, len(a.placed)), Stable: a.stable}
	for i, it := range a.placed {
		l.Frames[i] = it.id
	}
	return l
}

// Stable returns the stable part of the prompt: the preamble and the
// stable frames, the prefix a host can mark with a cache breakpoint.
func (r *Result) Stable() string { return r.Prompt[:r.stableBytes()] }

// Volatile returns the rest of the prompt after Stable.
func (r *Result) Volatile() string { return r.Prompt[r.stableBytes():] }

// Blocks splits the prompt into content blocks: the preamble, then one
// block per rendered frame in render order, each ending with its closing
// fence line. The first 1 + Cache.StableFrames blocks make up Stable(). A
// host on explicit cache breakpoints (Anthropic's cache_control) sends
// each block as its own content block and marks the last stable one and
// the last one.
func (r *Result) Blocks() []string { return splitBlocks(r.Prompt) }

// splitBlocks splits a prompt that ForPrompt rendered into content blocks:
// Preamble, then one block per frame in render order, each ending with its
// closing fence line. Joined, the blocks are the prompt. The split is
// unambiguous because no frame's content or attributes can contain a
// closing fence (the fence guarantee). Text that does not start with
// Preamble is returned whole, as one block.
func splitBlocks(prompt string) []string {
	if !strings.HasPrefix(prompt, Preamble) {
		return []string{prompt}
	}
	blocks := []string{Preamble}
	for rest := prompt[len(Preamble):]; rest != ""; {
		i := strings.Index(rest, fenceClose)
		if i < 0 { // not a rendered prompt: keep what is left whole
			return append(blocks, rest)
		}
		blocks = append(blocks, rest[:i+len(fenceClose)])
		rest = rest[i+len(fenceClose):]
	}
	return blocks
}

// HasCacheReport reports whether the composition was asked for a placement,
// a previous layout, cache options or a sticky margin, and so whether its
// JSON encoding carries the "cache" member.
func (r *Result) HasCacheReport() bool { return r.reported }

func (r *Result) stableBytes() int {
	n := r.Cache.StablePrefixBytes
	if n < 0 || n > len(r.Prompt) {
		return len(r.Prompt)
	}
	return n
}

type cacheJSON struct {
	Placement          string  `json:"placement"`
	StablePrefixBytes  int     `json:"stable_prefix_bytes"`
	StablePrefixTokens int     `json:"stable_prefix_tokens"`
	StablePrefixHash   string  `json:"stable_prefix_hash"`
	StableFrames       int     `json:"stable_frames"`
	Relay              string  `json:"relay,omitempty"`
	MinPrefixTokens    int     `json:"min_prefix_tokens"`
	Warning            string  `json:"warning,omitempty"`
	Layout             *Layout `json:"layout"`
}

func (r *Result) cacheJSON() *cacheJSON {
	c := r.Cache
	return &cacheJSON{Placement: c.Placement.String(), StablePrefixBytes: c.StablePrefixBytes,
		StablePrefixTokens: c.StablePrefixTokens, StablePrefixHash: c.StablePrefixHash,
		StableFrames: c.StableFrames, Relay: c.Relay.String(),
		MinPrefixTokens: c.MinPrefixTokens, Warning: c.Warning, Layout: r.Layout}
}
