package host

import (
	"context"
	"testing"

	"github.com/ctxkit/ctxkit/frame"
	"github.com/ctxkit/ctxkit/host/serve"
	"github.com/ctxkit/ctxkit/host/transport"
)

// TestSessionOverAnyConnection: the host's session (correlation, audits)
// runs over any transport.Connection, here an in-memory pipe to the
// provider-side server, and tears down cleanly.
func TestSessionOverAnyConnection(t *testing.T) {
	noLeak(t)
	hostEnd, provEnd := transport.Pipe()
	served := make(chan error, 1)
	prov := &honest{name: "piped", frames: []frame.Frame{mkFrame("a", "alpha evidence", 0.5), mkFrame("b", "beta evidence", 0.4)}}
	go func() { served <- serve.Conn(context.Background(), prov, provEnd) }()
	opts := (*StdioOptions)(nil).withDefaults()
	p := &stdioProvider{id: "mem", opts: opts, c: newConn("mem", hostEnd, nil)}
	h := New(testOpts(nil))
	if err := h.add("mem", p); err != nil {
		t.Fatal(err)
	}
	fo := h.QueryAll(context.Background(), probe())
	if len(fo.Outcomes) != 1 || fo.Outcomes[0].Status != StatusFrames || len(fo.Outcomes[0].Frames) != 2 {
		t.Fatalf("fan-out over a pipe: %+v", fo.Outcomes)
	}
	if err := h.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := <-served; err != nil {
		t.Fatalf("provider side after shutdown: %v", err)
	}
}
