package server

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"strings"

	"github.com/ctxkit/ctxkit/compose"
	"github.com/ctxkit/ctxkit/frame"
	"github.com/ctxkit/ctxkit/host"
	"github.com/ctxkit/ctxkit/internal/safetext"
)

// Querier serves POST /v1/query: it fans a query out to its providers and
// audits each leg. *host.Host implements it; Config.NewHost builds one from
// a config file.
type Querier interface {
	QueryAllBudgeted(ctx context.Context, q *frame.Query, globalBudget uint32) *host.FanOut
}

// Defaults of a query request.
const (
	DefaultQueryBudget    = 2000
	DefaultQueryMaxFrames = 16
)

// QueryRequest is the body of POST /v1/query.
type QueryRequest struct {
	// Goal says what the evidence is for. Required.
	Goal string `json:"goal"`
	// QueryText is extra ranking text.
	QueryText string `json:"query_text,omitempty"`
	// Kinds restricts the frame kinds asked for (any kind when empty).
	Kinds []frame.Kind `json:"kinds,omitempty"`
	// Anchors are URIs a provider ranks first.
	Anchors []string `json:"anchors,omitempty"`
	// AsOf asks for the state at a protocol timestamp.
	AsOf string `json:"as_of,omitempty"`
	// Budget is the global budget in CGP budget tokens, shared equally by
	// the providers and then packed by the composer (default 2000).
	Budget int `json:"budget,omitempty"`
	// MaxFrames bounds each provider's reply (default 16).
	MaxFrames int `json:"max_frames,omitempty"`
	// Strategy, Quota, Weights, DefaultWeight and Packer choose the
	// composition policy as in ComposeRequest.
	Strategy string `json:"strategy,omitempty"`
	// Quota is K of per-provider-quota (default 3).
	Quota int `json:"quota,omitempty"`
	// Weights are the per-provider weights of trust-weighted.
	Weights map[string]uint32 `json:"weights,omitempty"`
	// DefaultWeight is the weight of providers absent from Weights (default 1).
	DefaultWeight *uint32 `json:"default_weight,omitempty"`
	// Packer is first-fit (default) or stop-at-first-miss.
	Packer string `json:"packer,omitempty"`
}

// queryAnswer is what the handler writes: the composer's result and the
// host's fan-out report (one outcome per provider leg).
type queryAnswer struct {
	// Composition is compose.Result's own JSON.
	Composition json.RawMessage `json:"composition"`
	// FanOut is the host report: one outcome per provider leg.
	FanOut *host.FanOut `json:"fanout"`
}

// QueryResult is the answer of POST /v1/query decoded.
type QueryResult struct {
	// Composition is the composed prompt, citations and audit.
	Composition ComposeResult `json:"composition"`
	// FanOut reports each provider leg.
	FanOut FanOutReport `json:"fanout"`
}

// FanOutReport is the part of host.FanOut's JSON a client usually reads.
type FanOutReport struct {
	// Budget is the global budget the legs shared.
	Budget uint32 `json:"budget,omitempty"`
	// Outcomes has one entry per provider, in registration order.
	Outcomes []LegOutcome `json:"outcomes"`
}

// LegOutcome is one provider's leg: its status (frames, timeout, crashed,
// consent_required, budget_lie, ...), the frames the audit refused, and the
// failure message.
type LegOutcome struct {
	// Provider is the host-side provider id.
	Provider string `json:"provider"`
	// Status is the leg outcome: frames, consent_required, timeout, crashed, budget_lie, frame_flood ...
	Status string `json:"status"`
	// Error is the failure message, empty when the leg succeeded.
	Error string `json:"error,omitempty"`
	// Frames are the frames the audit accepted, in CGP wire form.
	Frames []json.RawMessage `json:"frames,omitempty"`
	// Excluded lists the frames the audit refused, each with its rule.
	Excluded []json.RawMessage `json:"excluded,omitempty"`
}

func (h *Handler) queryRoute(ctx context.Context, req *QueryRequest) (any, error) {
	res, fo, err := h.Query(ctx, req)
	if err != nil {
		return nil, err
	}
	b, err := res.MarshalJSON()
	if err != nil {
		return nil, fmt.Errorf("encode result: %w", err)
	}
	return &queryAnswer{Composition: b, FanOut: fo}, nil
}

// Query runs req as POST /v1/query does, with the same defaults and
// checks, and returns the composition and the fan-out report unencoded. A
// bad request is an *Error naming the member at fault.
func (h *Handler) Query(ctx context.Context, req *QueryRequest) (*compose.Result, *host.FanOut, error) {
	if h.query == nil {
		return nil, nil, &Error{Status: http.StatusServiceUnavailable, Code: CodeUnavailable,
			Message: "query: no providers are configured; start the server with --config FILE listing them"}
	}
	if strings.TrimSpace(req.Goal) == "" {
		return nil, nil, badRequest("goal", "goal: required")
	}
	budget, maxFrames := req.Budget, req.MaxFrames
	switch {
	case budget < 0 || budget > 1<<30:
		return nil, nil, badRequest("budget", "budget: %d is outside 1..%d", budget, 1<<30)
	case budget == 0:
		budget = DefaultQueryBudget
	}
	switch {
	case maxFrames < 0 || maxFrames > h.maxFrames:
		return nil, nil, badRequest("max_frames", "max_frames: %d is outside 1..%d", maxFrames, h.maxFrames)
	case maxFrames == 0:
		maxFrames = DefaultQueryMaxFrames
	}
	cr := ComposeRequest{Strategy: req.Strategy, Quota: req.Quota, Weights: req.Weights, DefaultWeight: req.DefaultWeight}
	strat, e := cr.strategy()
	if e != nil {
		return nil, nil, e
	}
	packer, e := parsePacker(req.Packer)
	if e != nil {
		return nil, nil, e
	}
	q := &frame.Query{Goal: req.Goal, QueryText: req.QueryText, Kinds: req.Kinds, Anchors: req.Anchors, AsOf: req.AsOf,
		MaxFrames: uint32(maxFrames), MaxTokens: uint32(budget)}
	if v := q.Validate(); len(v) > 0 {
		return nil, nil, &Error{Status: http.StatusUnprocessableEntity, Code: CodeRuleViolation, Rule: v[0].Rule, Field: v[0].Field,
			Message: "invalid query: " + v.Error()}
	}
	fo := h.query.QueryAllBudgeted(ctx, q, uint32(budget))
	for _, o := range fo.Outcomes {
		h.metrics.addProviderOutcome(o.Status.String())
		if o.Status != host.StatusFrames {
			// The message carries what the provider said (its error
			// envelope, its stderr), credentials already scrubbed by the
			// host; escaped, it is one log value whatever the handler.
			h.log.LogAttrs(ctx, slog.LevelWarn, "provider leg failed", slog.String("provider", safetext.Escape(o.Provider)),
				slog.String("status", o.Status.String()), slog.String("error", safetext.Escape(o.Error())))
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}
	h.recordUsage(fo)
	res := fo.Compose(budget, &compose.Options{Strategy: strat, Packer: packer})
	h.countComposition(res)
	return res, fo, nil
}
