package conformance

import (
	"context"
	"testing"
)

func TestReferenceComposingHostPasses(t *testing.T) {
	for _, tc := range []struct {
		name string
		h    *ReferenceComposingHost
	}{
		{"in-process", &ReferenceComposingHost{}},
		{"stdio", &ReferenceComposingHost{FixtureCommand: fixtureCommand()}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rep := RunComposition(context.Background(), tc.h, &CompositionOptions{Target: tc.h.Target()})
			if len(rep.Checks) != len(CompositionChecks()) {
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
