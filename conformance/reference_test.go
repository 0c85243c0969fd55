package conformance

import (
	"context"
	"testing"
)

// TestReferenceComposingHostPasses certifies the reference host with the
// scenario providers in-process, and over stdio for one scenario here; the
// whole suite over stdio children runs through the CLI (cmd/ctxkit), where
// the children are the non-race command rather than this test binary.
func TestReferenceComposingHostPasses(t *testing.T) {
	stdio := &ReferenceComposingHost{FixtureCommand: fixtureCommand()}
	c, err := stdio.Compose(context.Background(), mustScenario(t, scenarioQuarantine))
	if err != nil {
		t.Fatal(err)
	}
	if want := []FrameRef{{Provider: providerHonest, Frame: "honest-f"}}; !sameRefs(c.Admitted, want) {
		t.Fatalf("over stdio: admitted %v, want %v", c.Admitted, want)
	}
	for _, tc := range []struct {
		name string
		h    *ReferenceComposingHost
	}{
		{"in-process", &ReferenceComposingHost{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rep := RunComposition(context.Background(), tc.h, &CompositionOptions{Target: tc.h.Target()})
			if len(rep.Checks) != len(compositionChecks()) {
				t.Fatalf("%d checks", len(rep.Checks))
			}
			for _, c := range rep.Checks {
				if c.Status != Pass {
					t.Errorf("%s: %s: %s", c.Name, c.Status, c.Evidence)
				}
			}
		})
	}
}
