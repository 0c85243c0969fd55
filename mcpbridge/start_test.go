package mcpbridge_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/ctxkit/ctxkit/frame"
	"github.com/ctxkit/ctxkit/host"
	"github.com/ctxkit/ctxkit/mcpbridge"
)

// startLeg queries a stdio test server in mode through a host whose query
// timeout is 1 s, giving the server start (its start-up allowance).
func startLeg(t *testing.T, mode, delay string, start time.Duration) host.Outcome {
	t.Helper()
	h := host.New(&host.Options{QueryTimeout: time.Second})
	defer h.Close(context.Background())
	target, o := selfTarget(t, mode)
	o.Env = append(o.Env, "MCPBRIDGE_TEST_DELAY="+delay)
	o.StartTimeout = start
	if _, err := mcpbridge.Register(h, "slow", target, o); err != nil {
		t.Fatal(err)
	}
	return h.QueryAllBudgeted(context.Background(), &frame.Query{Goal: "how often is a failed request retried", MaxFrames: 8, MaxTokens: 1000}, 1000).Outcomes[0]
}

// A local server that takes longer to start than the query timeout (npx
// downloading the package) is served: its start-up has an allowance of its
// own, and the query timeout runs from its answer to initialize.
func TestSlowStartHasItsOwnAllowance(t *testing.T) {
	o := startLeg(t, "slowstart", "2500ms", 30*time.Second)
	if o.Status != host.StatusFrames || len(o.Frames) == 0 || o.Frames[0].URI != "notes://retry" {
		t.Fatalf("leg %v %q: want the retry resource, after a 2.5 s start under a 1 s query timeout", o.Status, o.Error())
	}
	if o.Elapsed < 2500*time.Millisecond {
		t.Errorf("elapsed %v: the server did not take its 2.5 s to start", o.Elapsed)
	}
}

// A start-up that outlasts its allowance fails the leg as a timeout whose
// message says the start-up allowance is what ran out.
func TestStartAllowanceRunsOut(t *testing.T) {
	o := startLeg(t, "slowstart", "20s", 1500*time.Millisecond)
	if o.Status != host.StatusTimeout || !strings.Contains(o.Error(), "start-up allowance of 1.5s") {
		t.Fatalf("leg %v %q: want a timeout naming the start-up allowance", o.Status, o.Error())
	}
	if o.Elapsed > 10*time.Second {
		t.Errorf("elapsed %v: the allowance did not bound the start", o.Elapsed)
	}
}

// Once the server has started, the query timeout (--timeout) bounds the
// rest: a server that answers initialize and then nothing fails its leg
// after the query timeout, not after the start-up allowance.
func TestQueryTimeoutRunsAfterStart(t *testing.T) {
	o := startLeg(t, "hanglist", "0s", time.Minute)
	if o.Status != host.StatusTimeout || !strings.Contains(o.Error(), "no reply within 1s") {
		t.Fatalf("leg %v %q: want the query timeout", o.Status, o.Error())
	}
	if o.Elapsed > 10*time.Second {
		t.Errorf("elapsed %v: the start-up allowance bounded the query", o.Elapsed)
	}
}
