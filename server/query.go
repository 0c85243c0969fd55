package server

import (
	"context"
	"log/slog"
	"net/http"
	"strings"

	"github.com/ctxkit/ctxkit/compose"
	"github.com/ctxkit/ctxkit/frame"
	"github.com/ctxkit/ctxkit/host"
	"github.com/ctxkit/ctxkit/internal/safetext"
	"github.com/ctxkit/ctxkit/server/api"
)

// Querier serves POST /v1/query: it fans a query out to its providers and
// audits each leg. *host.Host implements it; Config.NewHost builds one from
// a config file.
type Querier interface {
	QueryAllBudgeted(ctx context.Context, q *frame.Query, globalBudget uint32) *host.FanOut
}

func (h *Handler) queryRoute(ctx context.Context, req *api.QueryRequest) (any, error) {
	res, fo, err := h.Query(ctx, req)
	if err != nil {
		return nil, err
	}
	return &api.QueryResponse{Composition: *res, FanOut: *fo}, nil
}

// Query runs req as POST /v1/query does, with the same defaults and
// checks, and returns the composition and the fan-out report unencoded. A
// bad request is an *api.Error naming the member at fault.
func (h *Handler) Query(ctx context.Context, req *api.QueryRequest) (*compose.Result, *host.FanOut, error) {
	if h.query == nil {
		return nil, nil, &api.Error{Status: http.StatusServiceUnavailable, Code: api.CodeUnavailable,
			Message: "query: no providers are configured; start the server with --config FILE listing them"}
	}
	if strings.TrimSpace(req.Goal) == "" {
		return nil, nil, api.BadRequest("goal", "goal: required")
	}
	budget, maxFrames := req.Budget, req.MaxFrames
	switch {
	case budget < 0 || budget > 1<<30:
		return nil, nil, api.BadRequest("budget", "budget: %d is outside 1..%d", budget, 1<<30)
	case budget == 0:
		budget = api.DefaultQueryBudget
	}
	switch {
	case maxFrames < 0 || maxFrames > h.maxFrames:
		return nil, nil, api.BadRequest("max_frames", "max_frames: %d is outside 1..%d", maxFrames, h.maxFrames)
	case maxFrames == 0:
		maxFrames = api.DefaultQueryMaxFrames
	}
	opts, err := req.Options()
	if err != nil {
		return nil, nil, err
	}
	q := &frame.Query{Goal: req.Goal, QueryText: req.QueryText, Kinds: req.Kinds, Anchors: req.Anchors, AsOf: req.AsOf,
		MaxFrames: uint32(maxFrames), MaxTokens: uint32(budget)}
	if v := q.Validate(); len(v) > 0 {
		return nil, nil, &api.Error{Status: http.StatusUnprocessableEntity, Code: api.CodeRuleViolation, Rule: v[0].Rule, Field: v[0].Field,
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
	res := fo.Compose(budget, opts)
	h.countComposition(res)
	return res, fo, nil
}
