package conformance_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"os"

	"github.com/ctxkit/ctxkit/conformance"
)

// A composing host that admits every frame it is offered, in arrival order,
// quarantines the frame flood but fails four checks: three honest 400-token
// frames overflow a 1000-token query together, its order follows
// registration, it admits duplicate evidence twice, and it admits frames
// that break protocol rules.
func ExampleRunComposition() {
	admitAll := conformance.ComposingHostFunc(func(_ context.Context, s *conformance.Scenario) (*conformance.Composition, error) {
		c := &conformance.Composition{}
		for _, p := range s.Providers {
			if len(p.Frames) > int(s.Query.MaxFrames) {
				continue // the per-provider audit: a frame flood is quarantined
			}
			for _, f := range p.Frames {
				c.Admitted = append(c.Admitted, conformance.FrameRef{Provider: p.ID, Frame: f.ID})
			}
		}
		return c, nil
	})
	rep := conformance.RunComposition(context.Background(), admitAll, &conformance.CompositionOptions{Target: "admit-all"})
	fmt.Println(rep.Passed(), rep.Failed())
	// Output: false [composition-budget-bound composition-arrival-order composition-duplicate-evidence composition-invalid-frames]
}

// The reference composing host — ctxkit's host fan-out and composer —
// passes every composition check.
func ExampleReferenceComposingHost() {
	h := &conformance.ReferenceComposingHost{}
	rep := conformance.RunComposition(context.Background(), h, &conformance.CompositionOptions{Target: h.Target()})
	pass, fail, skipped := rep.Tally()
	fmt.Println(pass, fail, skipped)
	// Output: 7 0 0
}

// Certify a provider over HTTP: here the honest fixture provider, served
// in-process. The three stdio-only wire probes are skipped.
func ExampleRunProvider() {
	p, err := conformance.NewFixtureProvider(nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer p.Close()
	srv := httptest.NewServer(p)
	defer srv.Close()
	rep, err := conformance.RunProvider(context.Background(), conformance.ProviderTarget{URL: srv.URL}, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	pass, fail, skipped := rep.Tally()
	fmt.Println(pass, fail, skipped)
	// Output: 11 0 3
}

func ExampleReport_WriteJSON() {
	rep := conformance.Report{Target: "demo", Checks: []conformance.Check{
		{Name: "handshake", Status: conformance.Pass, Evidence: "acknowledged contextgraph/1.0-draft"},
		{Name: "budget-honesty", Status: conformance.Fail, Evidence: "sent: query; got: token_cost 1 for 100 tokens; expected: token_cost 100"},
	}}
	_ = rep.WriteJSON(os.Stdout)
	// Output: {"target":"demo","checks":[{"name":"handshake","status":"pass","evidence":"acknowledged contextgraph/1.0-draft"},{"name":"budget-honesty","status":"fail","evidence":"sent: query; got: token_cost 1 for 100 tokens; expected: token_cost 100"}]}
}

func ExampleRunHost() {
	rep := conformance.RunHost(context.Background(), nil)
	for _, c := range rep.Checks[:3] {
		fmt.Println(c.Name, c.Status)
	}
	// Output:
	// host-version-reject pass
	// host-budget-drop pass
	// host-frame-limit pass
}
