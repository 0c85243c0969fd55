//go:build linux

package transport

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/ctxkit/ctxkit/internal/proctest"
)

// A descendant that leaves the tree's session, drops the token and keeps
// changing its pid (a fork, then the parent exits, every few
// milliseconds) is adopted by the host at each hop; EndAdopted looks
// again after each kill until none is left. (One look, as a probe found,
// kills a parent whose child has already hopped on.)
func TestEndAdoptedCatchesAProcessThatHops(t *testing.T) {
	marker := fmt.Sprintf("ctxkit-hop-%d-%d", os.Getpid(), time.Now().UnixNano())
	script := fmt.Sprintf(`read h
setsid env -i /usr/bin/bash -c 'exec -a %s /usr/bin/bash -c "hop() { sleep 0.002; hop & exit; }; hop"' &
printf '%%s\n' '{"type":"handshake_ack"}'
sleep 30`, marker)
	p, err := Stdio{Program: "bash", Args: []string{"-c", script}}.Start()
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Write(context.Background(), []byte(`{"type":"handshake","protocol_version":"contextgraph/1.0"}`)); err != nil {
		t.Fatal(err)
	}
	if line, err := p.Read(); err != nil || !bytes.Contains(line, []byte("handshake_ack")) {
		t.Fatalf("ack: %q %v", line, err)
	}
	proctest.WaitLive(t, marker, 1)
	time.Sleep(300 * time.Millisecond) // many hops: the first pids are long gone
	if err := p.Close(); err != nil && !strings.Contains(err.Error(), "WaitDelay") {
		t.Logf("close: %v", err)
	}
	EndAdopted()
	proctest.NoneLeft(t, marker, "Close and EndAdopted")
}
