package server

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"strings"

	"github.com/ctxkit/ctxkit/compose"
	"github.com/ctxkit/ctxkit/frame"
	"github.com/ctxkit/ctxkit/rule"
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

// checkOffers validates every offer. It returns the valid ones; with skip
// it lists the invalid ones, otherwise the first invalid offer is an error.
// The caller has bounded their number (convertOffers).
func (h *Handler) checkOffers(offers []compose.Offer, skip bool) ([]compose.Offer, []Skipped, error) {
	out := make([]compose.Offer, 0, len(offers))
	var skipped []Skipped
	for i, o := range offers {
		if o.Frame == nil {
			path := fmt.Sprintf("offers[%d]", i)
			return nil, nil, badRequest(path+".frame", "%s.frame: required", path)
		}
		var v frame.Violations
		if strings.TrimSpace(o.Provider) == "" {
			v = append(v, &frame.RuleError{Rule: rule.Schema, Field: "provider", Detail: "provider is blank"})
		}
		fv := o.Frame.Validate()
		v = append(v, fv.Prefix("frame")...)
		if len(v) > 0 {
			v.Prefix(fmt.Sprintf("offers[%d]", i))
			if !skip {
				return nil, nil, &Error{Status: http.StatusUnprocessableEntity, Code: CodeRuleViolation,
					Rule: v[0].Rule, Field: v[0].Field, Message: "invalid offer: " + v.Error()}
			}
			skipped = append(skipped, Skipped{Index: i, Rule: v[0].Rule, Field: v[0].Field, Message: v.Error()})
			continue
		}
		out = append(out, o)
	}
	return out, skipped, nil
}

func (h *Handler) tooManyFrames(n int) *Error {
	return &Error{Status: http.StatusRequestEntityTooLarge, Code: CodeTooManyFrames, Field: "offers",
		Message: fmt.Sprintf("offers: %d offers exceed the limit of %d per request", n, h.maxFrames)}
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
			return nil, badRequest("quota", "quota: %d is negative", r.Quota)
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
	return nil, badRequest("strategy", "strategy: unknown %q; want %s, %s, %s or %s", r.Strategy,
		compose.NameScoreDescending, compose.NameRoundRobinByRank, compose.NamePerProviderQuota, compose.NameTrustWeighted)
}

func parsePacker(s string) (compose.Packer, *Error) {
	if s == "" {
		return compose.FirstFit, nil
	}
	p, ok := compose.ParsePacker(s)
	if !ok {
		return 0, badRequest("packer", "packer: unknown %q; want first-fit or stop-at-first-miss", s)
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
			return badRequest("placement", "placement: unknown %q; want edges-by-rank, canonical or stable-first", r.Placement)
		}
		opts.Placement = p
		// Naming a placement, even the default one, asks for the report.
		opts.Cache = &compose.CacheOptions{}
	}
	if len(r.Previous) > 0 && !bytes.Equal(bytes.TrimSpace(r.Previous), []byte("null")) {
		l, err := compose.ParseLayout(r.Previous)
		if err != nil {
			return badRequest("previous", "previous: %v", err)
		}
		opts.Previous = l
	}
	if r.MinPrefixTokens != nil {
		// Zero is the default minimum, as in compose.CacheOptions.
		opts.Cache = &compose.CacheOptions{MinPrefixTokens: *r.MinPrefixTokens}
	}
	if r.StickyMargin != 0 {
		if !(r.StickyMargin > 0) || r.StickyMargin > math.MaxFloat32 {
			return badRequest("sticky_margin", "sticky_margin: %v is not a score margin ≥ 0", r.StickyMargin)
		}
		opts.StickyMargin = float32(r.StickyMargin)
	}
	return nil
}

// composeBody is ComposeRequest as the handler decodes it.
// encoding/json fills Offers; the fast reader fills ComposeRequest.Offers
// and leaves Offers nil.
type composeBody struct {
	ComposeRequest
	Offers []wireOffer `json:"offers"`
}

// contextBody is ContextRequest as the handler decodes it.
// encoding/json fills Offers; the fast reader fills ContextRequest.Offers
// and leaves Offers nil.
type contextBody struct {
	ContextRequest
	Offers []wireOffer `json:"offers"`
}

// offers converts the decoded offers unless the fast decoder did.
func (b *composeBody) offers(h *Handler) *Error {
	return convertOffers(h, b.Offers, &b.ComposeRequest.Offers)
}

// offers converts the decoded offers unless the fast decoder did.
func (b *contextBody) offers(h *Handler) *Error {
	return convertOffers(h, b.Offers, &b.ContextRequest.Offers)
}

// convertOffers bounds the number of offers, then decodes the frames
// encoding/json left raw; offers the fast reader decoded are in *dst
// already, with wire nil.
func convertOffers(h *Handler, wire []wireOffer, dst *[]compose.Offer) *Error {
	if wire == nil {
		if len(*dst) > h.maxFrames {
			return h.tooManyFrames(len(*dst))
		}
		return nil
	}
	if len(wire) > h.maxFrames {
		return h.tooManyFrames(len(wire))
	}
	var e *Error
	*dst, e = offersFrom(wire)
	return e
}

func (h *Handler) compose(ctx context.Context, body *composeBody) (any, error) {
	req := &body.ComposeRequest
	if e := body.offers(h); e != nil {
		return nil, e
	}
	if req.Budget == nil {
		return nil, badRequest("budget", "budget: required (CGP budget tokens)")
	}
	if *req.Budget < 0 {
		return nil, badRequest("budget", "budget: %d is negative", *req.Budget)
	}
	opts, err := req.Options()
	if err != nil {
		return nil, err
	}
	offers, skipped, err := h.checkOffers(req.Offers, req.SkipInvalid)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	res := compose.ForPrompt(offers, *req.Budget, opts)
	h.countComposition(res)
	return composeAnswer(res, skipped)
}

func (h *Handler) context(ctx context.Context, body *contextBody) (any, error) {
	req := &body.ContextRequest
	if e := body.offers(h); e != nil {
		return nil, e
	}
	offers, skipped, err := h.checkOffers(req.Offers, req.SkipInvalid)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return &ContextResponse{Context: compose.Context(offers), Skipped: skipped}, nil
}

// countComposition adds a result to the frame metrics, in one pass over
// the audit without copying its entries.
func (h *Handler) countComposition(res *compose.Result) {
	included := 0
	var byReason map[compose.ReasonKind]int
	for i := range res.Audit.Entries {
		switch e := &res.Audit.Entries[i]; e.Disposition {
		case compose.Included:
			included++
		case compose.Excluded:
			if byReason == nil {
				byReason = make(map[compose.ReasonKind]int, 3)
			}
			byReason[e.Reason.Kind]++
		}
	}
	h.metrics.addComposed(included)
	for k, n := range byReason {
		h.metrics.addExcluded(k.String(), n)
	}
}

// composeAnswer is compose.Result's own stable JSON, with a "skipped"
// member appended when offers were skipped.
func composeAnswer(res *compose.Result, skipped []Skipped) (any, error) {
	// The answer is encoded into a pooled buffer, which writeJSON returns
	// to the pool once it is written.
	a := getAnswer()
	b, err := res.AppendJSON(*a.b)
	if err != nil {
		a.release()
		return nil, fmt.Errorf("encode result: %w", err)
	}
	*a.b = b
	if len(skipped) == 0 {
		return a, nil
	}
	b = bytes.Clone(b)
	a.release()
	s, err := json.Marshal(skipped)
	if err != nil {
		return nil, fmt.Errorf("encode skipped: %w", err)
	}
	b = bytes.TrimSuffix(b, []byte("}"))
	b = append(b, `,"skipped":`...)
	b = append(b, s...)
	return json.RawMessage(append(b, '}')), nil
}
