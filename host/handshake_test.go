package host

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/ctxkit/ctxkit/frame"
)

// TestHandshakeFollowsQueryTimeout: with only the query timeout set, a
// provider that never answers its handshake fails its leg within that
// timeout, not after a fixed ten seconds.
func TestHandshakeFollowsQueryTimeout(t *testing.T) {
	noLeak(t)
	h := newTestHost(t, &Options{QueryTimeout: 300 * time.Millisecond})
	bash(t, h, "mute", `sleep 30`)
	if err := h.AddInProcess("docs", &honest{frames: []frame.Frame{mkFrame("a", "alpha", 0.5)}}); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	fo := h.QueryAll(context.Background(), probe())
	took := time.Since(start)
	if took > 3*time.Second {
		t.Fatalf("fan-out took %v with a 300ms timeout", took)
	}
	if o := fo.Outcomes[0]; o.Status != StatusTimeout || !strings.Contains(o.Error(), "handshake") {
		t.Fatalf("mute leg: %v %v", o.Status, o.Err)
	}
	if o := fo.Outcomes[1]; o.Status != StatusFrames || len(o.Frames) != 1 {
		t.Fatalf("docs leg: %v %v", o.Status, o.Err)
	}
}

// TestHandshakeFollowsCallerDeadline: a deadline on the caller's context
// shorter than the configured timeouts bounds the handshake, and the error
// says which deadline ran out.
func TestHandshakeFollowsCallerDeadline(t *testing.T) {
	noLeak(t)
	h := newTestHost(t, nil)
	bash(t, h, "mute", `sleep 30`)
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := h.Connect(ctx, "mute")
	if took := time.Since(start); took > 3*time.Second {
		t.Fatalf("handshake took %v under a 300ms caller deadline", took)
	}
	if !errors.Is(err, ErrTimeout) || !strings.Contains(err.Error(), "caller's deadline") {
		t.Fatalf("err = %v, want a timeout naming the caller's deadline", err)
	}
}

// TestUnstartedProviderFailsItsLegOnly: a stdio command that does not
// exist is a typed spawn error; registered with AddUnstarted, it is one
// failed leg of the fan-out while the other providers are served.
func TestUnstartedProviderFailsItsLegOnly(t *testing.T) {
	noLeak(t)
	h := newTestHost(t, nil)
	err := h.AddStdio("ghost", "/no/such/cmd", nil, nil)
	var he *Error
	if !errors.Is(err, ErrNotStarted) || !errors.As(err, &he) || he.Op != "spawn" || !strings.Contains(err.Error(), "/no/such/cmd") {
		t.Fatalf("AddStdio of a missing command: %v", err)
	}
	if err := h.AddUnstarted("ghost", err); err != nil {
		t.Fatal(err)
	}
	if err := h.AddUnstarted("none", nil); err == nil {
		t.Fatal("AddUnstarted with a nil error was accepted")
	}
	if err := h.AddInProcess("docs", &honest{frames: []frame.Frame{mkFrame("a", "alpha", 0.5)}}); err != nil {
		t.Fatal(err)
	}
	fo := h.QueryAll(context.Background(), probe())
	if len(fo.Outcomes) != 2 {
		t.Fatalf("outcomes: %+v", fo.Outcomes)
	}
	if o := fo.Outcomes[0]; o.Provider != "ghost" || o.Status != StatusNotStarted || !errors.Is(o.Err, ErrNotStarted) {
		t.Fatalf("ghost leg: %v %v", o.Status, o.Err)
	}
	if o := fo.Outcomes[1]; o.Status != StatusFrames || len(o.Frames) != 1 {
		t.Fatalf("docs leg: %v %v", o.Status, o.Err)
	}
	if got := StatusNotStarted.String(); got != "not_started" {
		t.Fatalf("status spelling %q", got)
	}
}
