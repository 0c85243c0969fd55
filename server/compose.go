package server

import (
	"context"
	"fmt"
	"net/http"

	"github.com/ctxkit/ctxkit/compose"
	"github.com/ctxkit/ctxkit/server/api"
)

// checkOffers validates every offer. It returns the valid ones; with skip
// it lists the invalid ones, otherwise the first invalid offer is an error.
// The caller has bounded their number (convertOffers). A request whose
// deadline passed meanwhile is not worth composing: its error is ctx's.
func (h *Handler) checkOffers(ctx context.Context, offers []compose.Offer, skip bool) ([]compose.Offer, []api.Skipped, error) {
	out := make([]compose.Offer, 0, len(offers))
	var skipped []api.Skipped
	for i, o := range offers {
		if o.Frame == nil {
			path := fmt.Sprintf("offers[%d]", i)
			return nil, nil, api.BadRequest(path+".frame", "%s.frame: required", path)
		}
		if v := o.Validate(); len(v) > 0 {
			v.Prefix(fmt.Sprintf("offers[%d]", i))
			if !skip {
				return nil, nil, &api.Error{Status: http.StatusUnprocessableEntity, Code: api.CodeRuleViolation,
					Rule: v[0].Rule, Field: v[0].Field, Message: "invalid offer: " + v.Error()}
			}
			skipped = append(skipped, api.Skipped{Index: i, Rule: v[0].Rule, Field: v[0].Field, Message: v.Error()})
			continue
		}
		out = append(out, o)
	}
	return out, skipped, ctx.Err()
}

func (h *Handler) tooManyFrames(n int) *api.Error { return h.tooMany("offers", n) }

// tooMany refuses n offers or prompt parts (field) over the limit: each
// is a fenced frame of the answer.
func (h *Handler) tooMany(field string, n int) *api.Error {
	return &api.Error{Status: http.StatusRequestEntityTooLarge, Code: api.CodeTooManyFrames, Field: field,
		Message: fmt.Sprintf("%s: %d %s exceed the limit of %d per request", field, n, field, h.maxFrames)}
}

// composeBody is api.ComposeRequest as the handler decodes it.
// encoding/json fills Offers; the fast reader fills api.ComposeRequest.Offers
// and leaves Offers nil.
type composeBody struct {
	api.ComposeRequest
	Offers []wireOffer `json:"offers"`
}

// contextBody is api.ContextRequest as the handler decodes it.
// encoding/json fills Offers; the fast reader fills api.ContextRequest.Offers
// and leaves Offers nil.
type contextBody struct {
	api.ContextRequest
	Offers []wireOffer `json:"offers"`
}

// offers converts the decoded offers unless the fast decoder did.
func (b *composeBody) offers(h *Handler) *api.Error {
	return convertOffers(h, b.Offers, &b.ComposeRequest.Offers)
}

// offers converts the decoded offers unless the fast decoder did.
func (b *contextBody) offers(h *Handler) *api.Error {
	return convertOffers(h, b.Offers, &b.ContextRequest.Offers)
}

// convertOffers bounds the number of offers, then decodes the frames
// encoding/json left raw; offers the fast reader decoded are in *dst
// already, with wire nil.
func convertOffers(h *Handler, wire []wireOffer, dst *[]compose.Offer) *api.Error {
	if wire == nil {
		if len(*dst) > h.maxFrames {
			return h.tooManyFrames(len(*dst))
		}
		return nil
	}
	if len(wire) > h.maxFrames {
		return h.tooManyFrames(len(wire))
	}
	var e *api.Error
	*dst, e = offersFrom(wire)
	return e
}

func (h *Handler) compose(ctx context.Context, body *composeBody) (any, error) {
	req := &body.ComposeRequest
	if e := body.offers(h); e != nil {
		return nil, e
	}
	if req.Budget == nil {
		return nil, api.BadRequest("budget", "budget: required (CGP budget tokens)")
	}
	if *req.Budget < 0 {
		return nil, api.BadRequest("budget", "budget: %d is negative", *req.Budget)
	}
	opts, err := req.Options()
	if err != nil {
		return nil, err
	}
	offers, skipped, err := h.checkOffers(ctx, req.Offers, req.SkipInvalid)
	if err != nil {
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
	offers, skipped, err := h.checkOffers(ctx, req.Offers, req.SkipInvalid)
	if err != nil {
		return nil, err
	}
	return &api.ContextResponse{Context: compose.Context(offers), Skipped: skipped}, nil
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

// composeAnswer encodes the answer into a pooled buffer, which writeJSON
// returns to the pool once it is written.
func composeAnswer(res *compose.Result, skipped []api.Skipped) (any, error) {
	a := getAnswer()
	r := api.ComposeResponse{Result: *res, Skipped: skipped}
	b, err := r.AppendJSON(*a.b)
	if err != nil {
		a.release()
		return nil, fmt.Errorf("encode result: %w", err)
	}
	*a.b = b
	return a, nil
}
