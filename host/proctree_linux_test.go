//go:build linux

package host

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/ctxkit/ctxkit/internal/proctree"
	"github.com/ctxkit/ctxkit/internal/proctree/proctreetest"
)

// escapingProvider is a stdio provider (bash) that, before acknowledging
// the handshake, starts sleepers that leave its process group and session:
// through setsid after a double fork, through setsid with a cleared
// environment, and a plain double fork. With exitAfter it then exits
// instead of serving, leaving them orphaned.
func escapingProvider(marker string, exitAfter bool, linger string) string {
	tail := "sleep 30"
	if exitAfter {
		tail = "exit 0"
	}
	return fmt.Sprintf(`read h
( setsid bash -c 'exec -a %[1]s-setsid sleep 300' & )
( setsid env -i /usr/bin/bash -c 'exec -a %[1]s-envclear sleep 300' & sleep %[3]s )
( ( exec -a %[1]s-doublefork sleep 300 ) & )
printf '%%s\n' '%[2]s'
%[4]s`, marker, ackLine("contextgraph/1.0-draft", false, ""), linger, tail)
}

// TestProviderTreeEndsWithHost: every descendant of a stdio provider,
// those that left its process group and session included, is gone once
// Host.Close returns, whether the provider is still serving or has exited
// and left them orphaned; with a cgroup and with the fallback (subreaper,
// tracker and environment token).
func TestProviderTreeEndsWithHost(t *testing.T) {
	for _, c := range []struct {
		name      string
		noCgroup  bool
		exitAfter bool
		linger    string
	}{
		{"cgroup serving", false, false, "0"},
		{"cgroup orphaned", false, true, "0"},
		// The environment-clearing sleeper's parent lingers so that the
		// tracker sees it: the fallback's documented limit.
		{"fallback serving", true, false, "1"},
		{"fallback orphaned", true, true, "1"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if !c.noCgroup {
				if err := proctree.CgroupAvailable(); err != nil {
					t.Skipf("cgroup v2 is not writable here (%v); the fallback cases still run", err)
				}
			}
			marker := fmt.Sprintf("ctxkit-tree-%d-%d", os.Getpid(), time.Now().UnixNano())
			h := New(testOpts(nil))
			err := h.AddStdio("escaper", "bash", []string{"-c", escapingProvider(marker, c.exitAfter, c.linger)}, &StdioOptions{noCgroup: c.noCgroup})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := h.Connect(context.Background(), "escaper"); err != nil {
				t.Fatal(err)
			}
			tree := h.byID["escaper"].p.(*stdioProvider).c.proc.tree
			if tree.UsesCgroup() == c.noCgroup {
				t.Fatalf("cgroup used: %v, want %v", tree.UsesCgroup(), !c.noCgroup)
			}
			proctreetest.WaitMarked(t, marker, 3)
			if c.exitAfter {
				time.Sleep(200 * time.Millisecond) // the provider exits; its sleepers are orphans
			}
			if err := h.Close(context.Background()); err != nil {
				t.Logf("close: %v", err)
			}
			proctreetest.AssertNoneLeft(t, marker)
			if dir := tree.Cgroup(); dir != "" {
				if _, err := os.Stat(dir); !os.IsNotExist(err) {
					t.Errorf("cgroup %s left behind: %v", dir, err)
				}
			}
		})
	}
}
