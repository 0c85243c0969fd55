package conformance

import (
	"context"
	"testing"
)

func TestRunHostPassesAgainstOurHost(t *testing.T) {
	rep := RunHost(context.Background(), nil)
	if len(rep.Checks) != len(hostChecks()) {
		t.Fatalf("%d checks", len(rep.Checks))
	}
	for i, c := range rep.Checks {
		if c.Name != hostChecks()[i] {
			t.Errorf("check %d is %s", i, c.Name)
		}
		if c.Status != Pass {
			t.Errorf("%s is %s: %s", c.Name, c.Status, c.Evidence)
		}
	}
}
