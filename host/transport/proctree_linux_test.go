//go:build linux

package transport

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/ctxkit/ctxkit/internal/proctest"
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
%[4]s`, marker, `{"type":"handshake_ack"}`, linger, tail)
}

// TestProviderTreeEndsWithClose: every descendant of a stdio child, those
// that left its process group and session included, is gone once Close
// returns, whether the child is still serving or has exited and left them
// orphaned; with a cgroup and with the fallback (subreaper, tracker and
// environment token).
func TestProviderTreeEndsWithClose(t *testing.T) {
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
				if _, _, err := makeCgroupProbe(); err != nil {
					t.Skipf("cgroup v2 is not writable here (%v); the fallback cases still run", err)
				}
			}
			marker := fmt.Sprintf("ctxkit-tree-%d-%d", os.Getpid(), time.Now().UnixNano())
			p, err := Stdio{Program: "bash", Args: []string{"-c", escapingProvider(marker, c.exitAfter, c.linger)}, NoCgroup: c.noCgroup}.Start()
			if err != nil {
				t.Fatal(err)
			}
			if err := p.Write(context.Background(), []byte(`{"type":"handshake","protocol_version":"contextgraph/1.0"}`)); err != nil {
				t.Fatal(err)
			}
			if line, err := p.Read(); err != nil || !bytes.Contains(line, []byte("handshake_ack")) {
				t.Fatalf("ack: %q %v", line, err)
			}
			if p.tree.usesCgroup() == c.noCgroup {
				t.Fatalf("cgroup used: %v, want %v", p.tree.usesCgroup(), !c.noCgroup)
			}
			proctest.WaitLive(t, marker, 3)
			if c.exitAfter {
				time.Sleep(200 * time.Millisecond) // the provider exits; its sleepers are orphans
			}
			if err := p.Close(); err != nil {
				t.Logf("close: %v", err)
			}
			proctest.NoneLeft(t, marker, "Close")
			if p.tree.cgroup != "" {
				if _, err := os.Stat(p.tree.cgroup); !os.IsNotExist(err) {
					t.Errorf("cgroup %s left behind: %v", p.tree.cgroup, err)
				}
			}
		})
	}
}

// makeCgroupProbe reports whether this machine lets the host make a cgroup.
func makeCgroupProbe() (string, bool, error) {
	dir, f, err := makeCgroup()
	if err != nil {
		return "", false, err
	}
	f.Close()
	return dir, true, os.Remove(dir)
}
