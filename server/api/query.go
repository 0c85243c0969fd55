package api

import (
	"github.com/ctxkit/ctxkit/compose"
	"github.com/ctxkit/ctxkit/frame"
	"github.com/ctxkit/ctxkit/host"
)

// DefaultQueryBudget is the budget of a query request that names none.
const DefaultQueryBudget = 2000

// DefaultQueryMaxFrames bounds each provider's reply to a query request
// that names no max_frames.
const DefaultQueryMaxFrames = 16

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

// QueryResponse is the answer of POST /v1/query: the composition and the
// host's fan-out report, one outcome per provider leg.
type QueryResponse struct {
	// Composition is the composed prompt, citations and audit.
	Composition compose.Result `json:"composition"`
	// FanOut reports each provider leg.
	FanOut host.FanOut `json:"fanout"`
}

// Options is the composition the request asks for (strategy and packer),
// as for a compose request.
func (r *QueryRequest) Options() (*compose.Options, error) {
	cr := ComposeRequest{Strategy: r.Strategy, Quota: r.Quota, Weights: r.Weights, DefaultWeight: r.DefaultWeight, Packer: r.Packer}
	return cr.Options()
}
