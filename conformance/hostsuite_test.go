package conformance

import (
	"context"
	"testing"
)

func TestRunHostPassesAgainstOurHost(t *testing.T) {
	rep := RunHost(context.Background(), nil)
	if len(rep.Checks) != len(HostChecks()) {
		t.Fatalf("%d checks", len(rep.Checks))
	}
	for i, c := range rep.Checks {
		if c.Name != HostChecks()[i] {
			t.Errorf("check %d is %s", i, c.Name)
		}
		if c.Status == Fail {
			t.Errorf("%s: %s", c.Name, c.Evidence)
		}
		t.Logf("%s %s: %s", c.Status, c.Name, c.Evidence)
	}
}
