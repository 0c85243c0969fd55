package api

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"

	"github.com/ctxkit/ctxkit/rule"

	"github.com/ctxkit/ctxkit/compose"
)

// ComposeRequest is the body of POST /v1/compose.
type ComposeRequest struct {
	// Offers are the frames to compose, at most Options.MaxFrames.
	Offers []compose.Offer `json:"offers"`
	// Budget is the global budget in CGP budget tokens (ceil(bytes/4) of
	// the rendered blocks). Required, ≥ 0.
	Budget *int `json:"budget"`
	// Strategy ranks the offers: score-descending (default),
	// round-robin-by-rank, per-provider-quota, trust-weighted.
	Strategy string `json:"strategy,omitempty"`
	// Quota is K of per-provider-quota (default 3).
	Quota int `json:"quota,omitempty"`
	// Weights are the per-provider weights of trust-weighted; providers
	// not listed get DefaultWeight (default 1).
	Weights map[string]uint32 `json:"weights,omitempty"`
	// DefaultWeight is the weight of providers absent from Weights (default 1).
	DefaultWeight *uint32 `json:"default_weight,omitempty"`
	// Packer is first-fit (default) or stop-at-first-miss.
	Packer string `json:"packer,omitempty"`
	// SkipInvalid composes the valid offers and lists the others under
	// "skipped" in the answer; by default any invalid offer refuses the
	// whole request with 422 naming the rule.
	SkipInvalid bool `json:"skip_invalid,omitempty"`
	// Placement is the render order of the included frames: edges-by-rank
	// (default), canonical or stable-first. Naming any placement, a previous
	// layout or a minimum prefix adds the "cache" member to the answer.
	Placement string `json:"placement,omitempty"`
	// Previous is the previous turn's layout, the "layout" inside the
	// previous answer's "cache" member, sent back unchanged. Stable-first
	// keeps the frames it lists that are still included at the front.
	Previous json.RawMessage `json:"previous,omitempty"`
	// MinPrefixTokens is the provider's minimum cacheable prefix (default
	// 1024; negative turns the warning off): a shorter stable prefix is
	// reported with a warning.
	MinPrefixTokens *int `json:"min_prefix_tokens,omitempty"`
	// StickyMargin (≥ 0, default 0: off) ranks the frames Previous lists
	// as if their score were higher by this margin, so score jitter
	// smaller than it does not swap them out of the budget (see
	// compose.Options.StickyMargin); the audit then carries
	// "sticky_margin" and marks each entry whose fate the margin changed
	// with "sticky": "held" or "displaced". A margin adds the "cache"
	// member to the answer.
	StickyMargin float64 `json:"sticky_margin,omitempty"`
}

// ContextRequest is the body of POST /v1/context.
type ContextRequest struct {
	// Offers are the frames to render, at most Options.MaxFrames.
	Offers []compose.Offer `json:"offers"`
	// SkipInvalid renders the valid offers and lists the others.
	SkipInvalid bool `json:"skip_invalid,omitempty"`
}

// ContextResponse is the answer of POST /v1/context: the determinism floor,
// the same bytes for the same set of offers whatever their order or scores.
type ContextResponse struct {
	// Context is the canonical rendering of the set.
	Context string `json:"context"`
	// Skipped lists the invalid offers left out (skip_invalid only).
	Skipped []Skipped `json:"skipped,omitempty"`
}

// Skipped is an offer left out of a skip_invalid request, with the first
// rule it breaks.
type Skipped struct {
	// Index is the offer's position in the request, from 0.
	Index int `json:"index"`
	// Rule is the first protocol rule the offer breaks.
	Rule rule.Rule `json:"rule"`
	// Field is the JSON path of the member at fault.
	Field string `json:"field"`
	// Message lists every violation of the offer.
	Message string `json:"message"`
}

// strategy maps the request's strategy name and parameters to a
// compose.Strategy.
func (r *ComposeRequest) strategy() (compose.Strategy, *Error) {
	switch r.Strategy {
	case "", compose.NameScoreDescending:
		return compose.ScoreDescending{}, nil
	case compose.NameRoundRobinByRank:
		return compose.RoundRobinByRank{}, nil
	case compose.NamePerProviderQuota:
		if r.Quota < 0 {
			return nil, BadRequest("quota", "quota: %d is negative", r.Quota)
		}
		k := r.Quota
		if k == 0 {
			k = compose.DefaultQuota
		}
		return compose.PerProviderQuota{K: k}, nil
	case compose.NameTrustWeighted:
		d := uint32(1)
		if r.DefaultWeight != nil {
			d = *r.DefaultWeight
		}
		return compose.TrustWeighted{Weights: r.Weights, Default: d}, nil
	}
	return nil, BadRequest("strategy", "strategy: unknown %q; want %s, %s, %s or %s", r.Strategy,
		compose.NameScoreDescending, compose.NameRoundRobinByRank, compose.NamePerProviderQuota, compose.NameTrustWeighted)
}

func parsePacker(s string) (compose.Packer, *Error) {
	if s == "" {
		return compose.FirstFit, nil
	}
	p, ok := compose.ParsePacker(s)
	if !ok {
		return 0, BadRequest("packer", "packer: unknown %q; want first-fit or stop-at-first-miss", s)
	}
	return p, nil
}

// Options is the composition the request asks for: its strategy, packer,
// placement, previous layout, cache options and sticky margin. A member
// out of range is an *Error naming it. The CLI composes locally through
// it too, so that a request means the same in both places.
func (r *ComposeRequest) Options() (*compose.Options, error) {
	strat, e := r.strategy()
	if e != nil {
		return nil, e
	}
	packer, e := parsePacker(r.Packer)
	if e != nil {
		return nil, e
	}
	opts := &compose.Options{Strategy: strat, Packer: packer}
	if e := r.placement(opts); e != nil {
		return nil, e
	}
	return opts, nil
}

// placement fills the cache-stable members of opts from the request.
func (r *ComposeRequest) placement(opts *compose.Options) *Error {
	if r.Placement != "" {
		p, ok := compose.ParsePlacement(r.Placement)
		if !ok {
			return BadRequest("placement", "placement: unknown %q; want edges-by-rank, canonical or stable-first", r.Placement)
		}
		opts.Placement = p
		// Naming a placement, even the default one, asks for the report.
		opts.Cache = &compose.CacheOptions{}
	}
	if len(r.Previous) > 0 && !bytes.Equal(bytes.TrimSpace(r.Previous), []byte("null")) {
		l, err := compose.ParseLayout(r.Previous)
		if err != nil {
			return BadRequest("previous", "previous: %v", err)
		}
		opts.Previous = l
	}
	if r.MinPrefixTokens != nil {
		// Zero is the default minimum, as in compose.CacheOptions.
		opts.Cache = &compose.CacheOptions{MinPrefixTokens: *r.MinPrefixTokens}
	}
	if r.StickyMargin != 0 {
		if !(r.StickyMargin > 0) || r.StickyMargin > math.MaxFloat32 {
			return BadRequest("sticky_margin", "sticky_margin: %v is not a score margin ≥ 0", r.StickyMargin)
		}
		opts.StickyMargin = float32(r.StickyMargin)
	}
	return nil
}

// ComposeResponse is the answer of POST /v1/compose: compose.Result's own
// encoding, with a "skipped" member last when the request asked for
// skip_invalid and offers were left out.
type ComposeResponse struct {
	compose.Result
	// Skipped lists the invalid offers left out (skip_invalid only).
	Skipped []Skipped
}

// AppendJSON appends the answer's encoding to dst.
func (r *ComposeResponse) AppendJSON(dst []byte) ([]byte, error) {
	b, err := r.Result.AppendJSON(dst)
	if err != nil || len(r.Skipped) == 0 {
		return b, err
	}
	s, err := json.Marshal(r.Skipped)
	if err != nil {
		return nil, fmt.Errorf("encode skipped: %w", err)
	}
	b = append(b[:len(b)-1], `,"skipped":`...) // drop the result's closing brace
	b = append(b, s...)
	return append(b, '}'), nil
}

// MarshalJSON returns the answer's encoding.
func (r ComposeResponse) MarshalJSON() ([]byte, error) { return r.AppendJSON(nil) }

// UnmarshalJSON decodes what MarshalJSON writes.
func (r *ComposeResponse) UnmarshalJSON(b []byte) error {
	var s struct {
		Skipped []Skipped `json:"skipped"`
	}
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("api: decode compose answer: %w", err)
	}
	if err := r.Result.UnmarshalJSON(b); err != nil {
		return err
	}
	r.Skipped = s.Skipped
	return nil
}
