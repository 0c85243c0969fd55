// Package cachesim simulates an agent session that re-composes its evidence
// every turn, and measures how much of each prompt a provider prompt cache
// can serve under each compose.Placement.
//
// The session model: Offered frames over three providers, with base scores
// drawn uniformly from [0, 1) and contents of 300 to 1,500 bytes. Every turn
// after the first re-offers the previous set with ChurnPercent of the
// frames replaced by new ones (new identity, content and base score) and
// every score re-drawn as base ± Jitter (uniform, clamped to [0, 1]); the
// jitter is around the base, not a random walk. The budget holds about half
// of the offered frames. The same session (same offers on every turn) is
// composed under every placement, so the placements are compared on equal
// terms. Everything is seeded: a Config yields the same Report every time.
//
// Two cache models, the same for every placement. The ideal prefix cache:
// a request reads the longest prefix it shares with the previous turn's
// prompt, cut back to the end of a frame (or of the preamble), provided that
// prefix is at least MinPrefixTokens long; every other token is written to
// the cache (when the prompt reaches MinPrefixTokens) or billed at the base
// price. That is OpenAI's automatic prefix caching up to its 128-token
// granularity. The marked host (Report.MarkedCostPerTurn) follows
// Anthropic's explicit breakpoints, two per request, and reads only where
// the previous request marked. Token counts are canonical budget tokens
// (ceil(bytes/4)), an estimate of model tokens.
package cachesim

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"strings"

	"github.com/ctxkit/ctxkit/compose"
	"github.com/ctxkit/ctxkit/frame"
)

// Anthropic's prompt-caching multipliers of the base input price: a
// five-minute cache write costs 1.25×, a cache read 0.1×.
const (
	anthropicWrite = 1.25
	anthropicRead  = 0.1
)

// DefaultBaseUSDPerMTok is the base input price assumed for cost estimates:
// $3 per million input tokens (Anthropic's Sonnet tier).
const DefaultBaseUSDPerMTok = 3.0

// Churn says which frames a turn replaces.
type Churn uint8

// Churn models. The zero value is UniformChurn.
const (
	// UniformChurn replaces frames drawn uniformly from the offered set.
	UniformChurn Churn = iota
	// TailChurn replaces frames drawn from the lower-scoring half of the
	// offered set (by base score): retrieval churn at the fringe, with the
	// strongest evidence persisting. New frames still get uniform scores,
	// so they can enter anywhere in the ranking. Issue #10's acceptance
	// figure is measured under this model; under UniformChurn it is out
	// of reach for any placement (BENCHMARKS.md).
	TailChurn
)

// String returns "uniform" or "tail".
func (c Churn) String() string {
	if c == TailChurn {
		return "tail"
	}
	return "uniform"
}

// Config describes one simulated session. Zero members take the defaults
// noted on each.
type Config struct {
	// Turns is T, the number of compositions (default 30).
	Turns int
	// Offered is how many frames each turn offers (default 60).
	Offered int
	// ChurnPercent is C: the percentage of offered frames replaced each
	// turn (0 means none; rounded to whole frames).
	ChurnPercent float64
	// Jitter is J: each score is its frame's base score plus a uniform draw
	// from [-J, J].
	Jitter float64
	// Churn chooses which frames are replaced (default UniformChurn).
	Churn Churn
	// Budget is the global budget in budget tokens; 0 sizes it to hold
	// about half of the first turn's offers.
	Budget int
	// Seed seeds the session.
	Seed uint64
	// MinPrefixTokens is the provider's minimum cacheable prefix (default
	// compose.DefaultMinPrefixTokens).
	MinPrefixTokens int
	// BaseUSDPerMTok is the base input price (default
	// DefaultBaseUSDPerMTok).
	BaseUSDPerMTok float64
	// StickyMargin is compose.Options.StickyMargin for every turn (0, the
	// default, is off). It changes how the session is composed, never the
	// session itself: NewSession ignores it.
	StickyMargin float32
}

func (c Config) withDefaults() Config {
	if c.Turns <= 0 {
		c.Turns = 30
	}
	if c.Offered <= 0 {
		c.Offered = 60
	}
	if c.MinPrefixTokens <= 0 {
		c.MinPrefixTokens = compose.DefaultMinPrefixTokens
	}
	if c.BaseUSDPerMTok <= 0 {
		c.BaseUSDPerMTok = DefaultBaseUSDPerMTok
	}
	return c
}

// Report is what one placement achieved over a session. Means over
// "compared turns" run over turns 2..T, each against its predecessor;
// cost means run over all T turns (the first one writes the cache).
type Report struct {
	// Placement is the placement the session was composed under.
	Placement compose.Placement
	// StickyMargin is the sticky margin it was composed with (0: none).
	StickyMargin float32
	// Turns is T.
	Turns int
	// Budget is the budget that was used, in budget tokens.
	Budget int
	// MeanPromptBytes is the mean prompt length over all turns.
	MeanPromptBytes float64
	// MeanSharedPrefixBytes is the mean length of the prefix each prompt
	// shares with the previous turn's prompt (compared turns).
	MeanSharedPrefixBytes float64
	// SharedPrefixFraction is the mean of shared prefix bytes over prompt
	// bytes (compared turns).
	SharedPrefixFraction float64
	// ReusableFraction is the mean fraction of each prompt's tokens read
	// from the cache (compared turns).
	ReusableFraction float64
	// BestAtEdge is the fraction of turns whose best-ranked included frame
	// (the highest score of the turn among the included frames) is the
	// first or the last frame of its part (stable or volatile).
	BestAtEdge float64
	// MeanStablePrefixTokens is the mean of Result.Cache.StablePrefixTokens.
	MeanStablePrefixTokens float64
	// Relaid counts the turns on which Result.Cache.Relay was set: for
	// StableFirst, the first turn and every turn on which a frame of the
	// previous layout dropped out.
	Relaid int
	// CostPerTurn is the mean estimated input cost per turn in US dollars
	// under Anthropic's multipliers (write 1.25×, read 0.1×).
	CostPerTurn float64
	// UncachedCostPerTurn is the mean cost per turn without any caching.
	UncachedCostPerTurn float64
	// MarkedReusableFraction and MarkedCostPerTurn are ReusableFraction and
	// CostPerTurn for a host that follows Anthropic's explicit breakpoints:
	// the preamble and each frame are content blocks, a breakpoint marks
	// the end of Result.Stable and another the end of the prompt, and a
	// request reads the longest prefix that the previous request marked
	// (or read), found at one of its own block boundaries no more than
	// lookbackBlocks before one of its breakpoints.
	MarkedReusableFraction float64
	// MarkedCostPerTurn is the mean estimated input cost per turn in US
	// dollars under the marked-breakpoint host described above.
	MarkedCostPerTurn float64
	// HeldPerTurn and DisplacedPerTurn are the mean numbers of audit
	// entries per turn marked compose.StickyHeld and
	// compose.StickyDisplaced: how many frames the sticky margin kept in
	// the prompt, and how many frames a fresh ranking would have included
	// instead (the relevance traded for cache reuse). Both 0 without a
	// margin.
	HeldPerTurn, DisplacedPerTurn float64
}

// Session is the seeded sequence of offers a Config describes.
type Session struct {
	// Budget is the budget every turn is composed under, in budget tokens.
	// NewSession sets it to Config.Budget or, when that is not positive,
	// to half the summed rendered cost of the first turn's offers.
	Budget int
	// Turns holds each turn's offers, first turn first: Config.Turns
	// slices of Config.Offered offers.
	Turns [][]compose.Offer
}

type simFrame struct {
	provider, id, content, digest string
	base                          float64
}

// NewSession generates the offers of every turn of c.
func NewSession(c Config) *Session {
	c = c.withDefaults()
	rng := rand.New(rand.NewPCG(c.Seed, 0x636163686573696d)) // "cachesim"
	next := 0
	newFrame := func() simFrame {
		next++
		n := 300 + rng.IntN(1201)
		content := text(rng, n)
		sum := sha256.Sum256([]byte(content))
		return simFrame{provider: fmt.Sprintf("p%d", rng.IntN(3)), id: fmt.Sprintf("f%05d", next),
			content: content, digest: "sha256:" + hex.EncodeToString(sum[:]), base: rng.Float64()}
	}
	cur := make([]simFrame, c.Offered)
	for i := range cur {
		cur[i] = newFrame()
	}
	replace := int(float64(c.Offered)*c.ChurnPercent/100 + 0.5)
	s := &Session{Turns: make([][]compose.Offer, c.Turns)}
	for t := range c.Turns {
		if t > 0 && replace > 0 {
			pool := make([]int, len(cur))
			for i := range pool {
				pool[i] = i
			}
			if c.Churn == TailChurn {
				// The lower-scoring half by base score, ties by identity.
				sortBy(pool, func(a, b int) bool {
					if cur[a].base != cur[b].base {
						return cur[a].base < cur[b].base
					}
					return cur[a].id < cur[b].id
				})
				pool = pool[:max(len(pool)/2, min(replace, len(pool)))]
			}
			rng.Shuffle(len(pool), func(i, j int) { pool[i], pool[j] = pool[j], pool[i] })
			for _, i := range pool[:min(replace, len(pool))] {
				cur[i] = newFrame()
			}
		}
		offers := make([]compose.Offer, len(cur))
		for i, f := range cur {
			score := f.base + (2*rng.Float64()-1)*c.Jitter
			score = min(max(score, 0), 1)
			offers[i] = compose.Offer{Provider: f.provider, Frame: &frame.Frame{ID: f.id, Kind: frame.KindDoc,
				Title: f.id, Content: f.content, ContentDigest: f.digest, Score: float32(score),
				TokenCost: uint32(frame.BudgetTokens(f.content)), CitationLabel: f.provider + ":" + f.id}}
		}
		s.Turns[t] = offers
	}
	s.Budget = c.Budget
	if s.Budget <= 0 {
		total := 0
		for _, o := range s.Turns[0] {
			total += compose.RenderedCost(o.Provider, o.Frame)
		}
		s.Budget = total / 2
	}
	return s
}

// sortBy is an insertion sort (the pools are small) with a strict less.
func sortBy(x []int, less func(a, b int) bool) {
	for i := 1; i < len(x); i++ {
		for j := i; j > 0 && less(x[j], x[j-1]); j-- {
			x[j], x[j-1] = x[j-1], x[j]
		}
	}
}

var words = strings.Fields("the retry loop backs off when a request fails and the cache keeps " +
	"recent answers so a handler can read them without waiting for the store to respond " +
	"config values load once at start and every worker shares the same pool of connections")

// text returns about n bytes of word salad.
func text(rng *rand.Rand, n int) string {
	var b strings.Builder
	for b.Len() < n {
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(words[rng.IntN(len(words))])
	}
	return b.String()
}

// Run composes the session of c under each placement and reports each.
func Run(c Config, placements ...compose.Placement) []Report {
	c = c.withDefaults()
	s := NewSession(c)
	out := make([]Report, len(placements))
	for i, p := range placements {
		out[i] = s.Run(c, p)
	}
	return out
}

// turn is one composition of a simulated session with its cache outcome.
type turn struct {
	// Result is the turn's composition under the walked placement, with
	// the previous turn's Result.Layout as Options.Previous (none on the
	// first turn).
	Result *compose.Result
	// SharedPrefixBytes is the prefix shared with the previous prompt.
	SharedPrefixBytes int
	// ReadTokens, WriteTokens and BaseTokens split the prompt's tokens by
	// how they are billed under the idealised prefix cache.
	ReadTokens, WriteTokens, BaseTokens int
	// MarkedReadTokens, MarkedWriteTokens and MarkedBaseTokens split them
	// under the marked-breakpoint host (see MarkedCostPerTurn).
	MarkedReadTokens, MarkedWriteTokens, MarkedBaseTokens int
	// BestAtEdge: the best-ranked included frame is first or last in its
	// part.
	BestAtEdge bool
}

// Run composes the session under placement p, turn by turn, passing each
// result's layout to the next turn, and reports the means.
func (s *Session) Run(c Config, p compose.Placement) Report {
	c = c.withDefaults()
	r := Report{Placement: p, StickyMargin: c.StickyMargin, Turns: len(s.Turns), Budget: s.Budget}
	s.walk(c, p, func(t int, tr turn) {
		res := tr.Result
		r.MeanPromptBytes += float64(len(res.Prompt))
		r.MeanStablePrefixTokens += float64(res.Cache.StablePrefixTokens)
		if res.Cache.Relay != compose.NotRelaid {
			r.Relaid++
		}
		if tr.BestAtEdge {
			r.BestAtEdge++
		}
		for _, e := range res.Audit.Entries {
			switch e.Sticky {
			case compose.StickyHeld:
				r.HeldPerTurn++
			case compose.StickyDisplaced:
				r.DisplacedPerTurn++
			}
		}
		total := tr.ReadTokens + tr.WriteTokens + tr.BaseTokens
		r.CostPerTurn += (anthropicRead*float64(tr.ReadTokens) + anthropicWrite*float64(tr.WriteTokens) +
			float64(tr.BaseTokens)) * c.BaseUSDPerMTok / 1e6
		r.UncachedCostPerTurn += float64(total) * c.BaseUSDPerMTok / 1e6
		r.MarkedCostPerTurn += (anthropicRead*float64(tr.MarkedReadTokens) + anthropicWrite*float64(tr.MarkedWriteTokens) +
			float64(tr.MarkedBaseTokens)) * c.BaseUSDPerMTok / 1e6
		if t == 0 {
			return
		}
		r.MeanSharedPrefixBytes += float64(tr.SharedPrefixBytes)
		if len(res.Prompt) > 0 {
			r.SharedPrefixFraction += float64(tr.SharedPrefixBytes) / float64(len(res.Prompt))
		}
		if total > 0 {
			r.ReusableFraction += float64(tr.ReadTokens) / float64(total)
			r.MarkedReusableFraction += float64(tr.MarkedReadTokens) / float64(total)
		}
	})
	n, m := float64(len(s.Turns)), float64(len(s.Turns)-1)
	if n > 0 {
		r.MeanPromptBytes /= n
		r.MeanStablePrefixTokens /= n
		r.BestAtEdge /= n
		r.CostPerTurn /= n
		r.UncachedCostPerTurn /= n
		r.MarkedCostPerTurn /= n
		r.HeldPerTurn /= n
		r.DisplacedPerTurn /= n
	}
	if m > 0 {
		r.MeanSharedPrefixBytes /= m
		r.SharedPrefixFraction /= m
		r.ReusableFraction /= m
		r.MarkedReusableFraction /= m
	}
	return r
}

// walk composes the session under placement p and calls fn with each turn.
func (s *Session) walk(c Config, p compose.Placement, fn func(t int, tr turn)) {
	c = c.withDefaults()
	var prev *compose.Result
	var marked map[string]bool // prefixes the previous request marked or read
	for t, offers := range s.Turns {
		opts := &compose.Options{Placement: p, Cache: &compose.CacheOptions{MinPrefixTokens: c.MinPrefixTokens},
			StickyMargin: c.StickyMargin}
		if prev != nil {
			opts.Previous = prev.Layout
		}
		res := compose.ForPrompt(offers, s.Budget, opts)
		tr := turn{Result: res, BestAtEdge: bestAtEdge(res, offers)}
		if prev != nil {
			tr.SharedPrefixBytes = commonPrefix(prev.Prompt, res.Prompt)
		}
		bounds := boundaries(res.Blocks())
		read := 0
		if prev != nil {
			read = frameBoundary(bounds, tr.SharedPrefixBytes)
		}
		total := frame.BudgetTokens(res.Prompt)
		tr.ReadTokens = frame.BudgetTokens(res.Prompt[:read])
		if tr.ReadTokens < c.MinPrefixTokens {
			tr.ReadTokens = 0
		}
		if total >= c.MinPrefixTokens {
			tr.WriteTokens = total - tr.ReadTokens
		} else {
			tr.BaseTokens = total
		}
		marked = markedHost(c, res, bounds, marked, &tr)
		fn(t, tr)
		prev = res
	}
}

// lookbackBlocks is how many content-block boundaries before a breakpoint
// Anthropic checks for a cached prefix (about 20, per its documentation).
const lookbackBlocks = 20

// markedHost bills res under the marked-breakpoint host (see
// Report.MarkedCostPerTurn), given its prompt's block boundaries and the
// prefixes the previous request marked or read, and returns the prefixes
// this request marks or reads.
func markedHost(c Config, res *compose.Result, bounds []int, cached map[string]bool, tr *turn) map[string]bool {
	p := res.Prompt
	marks := make([]int, 0, 2) // indices into bounds
	for i, b := range bounds {
		if b == res.Cache.StablePrefixBytes || b == len(p) {
			marks = append(marks, i)
		}
	}
	read := 0
	for _, mi := range marks {
		for j := mi; j >= 0 && j >= mi-lookbackBlocks; j-- {
			if cached[p[:bounds[j]]] {
				read = max(read, bounds[j])
				break
			}
		}
	}
	total := frame.BudgetTokens(p)
	tr.MarkedReadTokens = frame.BudgetTokens(p[:read])
	if total >= c.MinPrefixTokens {
		tr.MarkedWriteTokens = total - tr.MarkedReadTokens
	} else {
		tr.MarkedBaseTokens = total - tr.MarkedReadTokens
	}
	next := map[string]bool{}
	if read > 0 {
		next[p[:read]] = true
	}
	for _, mi := range marks {
		if frame.BudgetTokens(p[:bounds[mi]]) >= c.MinPrefixTokens {
			next[p[:bounds[mi]]] = true
		}
	}
	return next
}

// boundaries returns the content-block boundaries of a prompt's blocks
// (compose.Result.Blocks): the end of the preamble and the end of each
// frame block.
func boundaries(blocks []string) []int {
	out := make([]int, len(blocks))
	end := 0
	for i, b := range blocks {
		end += len(b)
		out[i] = end
	}
	return out
}

// frameBoundary returns the largest of a prompt's block boundaries (the end
// of the preamble or of a frame block) at or before n, or 0 when there is
// none.
func frameBoundary(bounds []int, n int) int {
	at := 0
	for _, b := range bounds {
		if b > n {
			break
		}
		at = b
	}
	return at
}

// commonPrefix is the length of the longest common prefix of a and b.
func commonPrefix(a, b string) int {
	n := min(len(a), len(b))
	for i := range n {
		if a[i] != b[i] {
			return i
		}
	}
	return n
}

// bestAtEdge reports whether the best-ranked included frame is the first or
// the last frame of its part. The session is ranked by score (the default
// strategy), so the best is the included frame with the highest score on
// this turn, ties to the smaller identity: the first included audit entry
// without a sticky margin, and the best by this turn's scores with one
// (the margin decides selection, not which frame is best).
func bestAtEdge(res *compose.Result, offers []compose.Offer) bool {
	if len(res.Citations) == 0 {
		return false
	}
	score := make(map[frame.ID]float32, len(offers))
	for _, o := range offers {
		score[o.ID()] = o.Frame.Score
	}
	best := res.Citations[0].Frame
	for _, c := range res.Citations[1:] {
		if d := compose.CompareScores(score[c.Frame], score[best]); d > 0 || d == 0 && c.Frame.Compare(best) < 0 {
			best = c.Frame
		}
	}
	at := -1
	for i, c := range res.Citations {
		if c.Frame == best {
			at = i
			break
		}
	}
	k := res.Cache.StableFrames
	if at < k {
		return at == 0 || at == k-1
	}
	return at == k || at == len(res.Citations)-1
}
