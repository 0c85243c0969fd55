//go:build linux

package mcpbridge_test

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/ctxkit/ctxkit/frame"
	"github.com/ctxkit/ctxkit/host"
	"github.com/ctxkit/ctxkit/internal/proctest"
	"github.com/ctxkit/ctxkit/mcpbridge"
)

// TestStdioServerTreeEndsWithHost: a stdio MCP server launched through a
// wrapper that, before it execs the server, starts sleepers that leave the
// server's process group (setsid, also after a double fork) has every one
// of them ended by Host.Close, as a stdio CGP provider's are; a process
// group kill alone leaves them running.
func TestStdioServerTreeEndsWithHost(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	marker := fmt.Sprintf("ctxkit-mcptree-%d-%d", os.Getpid(), time.Now().UnixNano())
	wrapper := fmt.Sprintf(`( setsid bash -c 'exec -a %[1]s-setsid sleep 300' & )
( ( setsid bash -c 'exec -a %[1]s-doublefork sleep 300' & ) & )
exec "$0"`, marker)
	h := host.New(&host.Options{QueryTimeout: 20 * time.Second})
	target := mcpbridge.Target{Command: []string{"bash", "-c", wrapper, exe}}
	if _, err := mcpbridge.Register(h, "wrapped", target, &mcpbridge.Options{Env: []string{"MCPBRIDGE_TEST_SERVER=good"}}); err != nil {
		t.Fatal(err)
	}
	fo := h.QueryAllBudgeted(context.Background(), &frame.Query{Goal: "budget split", MaxFrames: 4, MaxTokens: 500}, 500)
	if len(fo.Outcomes) != 1 || fo.Outcomes[0].Status != host.StatusFrames {
		t.Fatalf("the wrapped server did not serve: %+v", fo.Outcomes)
	}
	proctest.WaitLive(t, marker, 2)
	if err := h.Close(context.Background()); err != nil {
		t.Logf("close: %v", err)
	}
	proctest.NoneLeft(t, marker, "Host.Close")
}
