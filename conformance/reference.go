package conformance

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/ctxkit/ctxkit/compose"
	"github.com/ctxkit/ctxkit/frame"
	"github.com/ctxkit/ctxkit/host"
	"github.com/ctxkit/ctxkit/wire"
)

// ReferenceComposingHost is ctxkit's own composing host: host.Host.QueryAll
// for the fan-out and its per-provider audit, then compose.ForPrompt over the
// accepted frames under the query's max_tokens. Admitted frames are read off
// the citation map (render order), dropped frames off the audit's
// exclusions. A fresh host is built for every scenario.
type ReferenceComposingHost struct {
	// FixtureCommand, when set, starts each scenario provider as a real
	// stdio child (`ctxkit fixture-provider`, with "--scenario NAME
	// --provider ID" appended); empty serves them in-process.
	FixtureCommand []string
	// Host configures each host (nil for the defaults).
	Host *host.Options
	// ComposeOptions configures the composer (nil for the defaults).
	ComposeOptions *compose.Options
}

// Target describes the reference host for a report.
func (r *ReferenceComposingHost) Target() string {
	return "reference composing host: ctxkit host.QueryAll + compose.ForPrompt"
}

// Compose runs one scenario through a fresh host and the composer.
func (r *ReferenceComposingHost) Compose(ctx context.Context, s *Scenario) (c *Composition, err error) {
	h := host.New(r.Host)
	defer func() {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		if cerr := h.Close(cctx); cerr != nil && err == nil {
			err = fmt.Errorf("reference host: close: %w", cerr)
		}
	}()
	for _, p := range s.Providers {
		if len(r.FixtureCommand) > 0 {
			args := append(append([]string(nil), r.FixtureCommand[1:]...), "--scenario", s.Name, "--provider", p.ID)
			err = h.AddStdio(p.ID, r.FixtureCommand[0], args, nil)
		} else {
			err = h.AddInProcess(p.ID, &scenarioServer{p: p})
		}
		if err != nil {
			return nil, fmt.Errorf("reference host: register %s: %w", p.ID, err)
		}
	}
	q := s.Query
	fan := h.QueryAll(ctx, &q)
	var offers []compose.Offer
	for _, pf := range fan.Accepted() {
		offers = append(offers, compose.Offer{Provider: pf.Provider, Frame: pf.Frame})
	}
	res := compose.ForPrompt(offers, int(q.MaxTokens), r.ComposeOptions)
	c = &Composition{Admitted: []FrameRef{}, Dropped: []FrameRef{}}
	for _, cit := range res.Citations {
		c.Admitted = append(c.Admitted, FrameRef{Provider: cit.Frame.Provider, Frame: cit.Frame.Frame})
	}
	for _, e := range res.Audit.Excluded() {
		c.Dropped = append(c.Dropped, FrameRef{Provider: e.Frame.Provider, Frame: e.Frame.Frame})
	}
	return c, nil
}

// scenarioServer serves one scenario provider's frames in-process.
type scenarioServer struct{ p ScenarioProvider }

func (s *scenarioServer) Handshake(context.Context, string) (*wire.HandshakeAck, error) {
	return &wire.HandshakeAck{
		ProtocolVersion: wire.ProtocolVersion,
		Provider: frame.ProviderInfo{Name: "ctxkit-fixture-" + s.p.ID, Version: "1.0.0",
			DataFlow: frame.DataFlow{Reads: true, EgressScopes: []frame.EgressScope{frame.ScopeLocalOnly}}},
		Capabilities: frame.Capabilities{Query: frame.QueryCapabilities{Kinds: []frame.Kind{"doc"}}},
	}, nil
}

func (s *scenarioServer) Query(context.Context, *frame.Query) (*wire.Result, error) {
	out := make([]frame.Frame, len(s.p.Frames))
	for i, f := range s.p.Frames {
		out[i] = *f
	}
	return &wire.Result{Frames: out}, nil
}

func (s *scenarioServer) Verify(context.Context, []frame.ID) ([]wire.Verdict, error) {
	return nil, errors.New("fixture scenario providers do not verify")
}
