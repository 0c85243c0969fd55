//go:build linux

package transport

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
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
			p := startShaken(t, escapingProvider(marker, c.exitAfter, c.linger), c.noCgroup)
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

// TestProviderTreeEndsWhenADescendantLeavesTheCgroup: a descendant that
// moves itself out of the provider's cgroup (into the host's own, which
// root, or a user owning a delegated subtree, may write) and then leaves
// the session with a cleared environment is still ended by Close. An
// outside probe's escaper survived when the cgroup was the only means.
func TestProviderTreeEndsWhenADescendantLeavesTheCgroup(t *testing.T) {
	if _, _, err := makeCgroupProbe(); err != nil {
		t.Skipf("cgroup v2 is not writable here (%v): no cgroup to leave", err)
	}
	own, err := hostCgroupDir()
	if err != nil {
		t.Fatal(err)
	}
	marker := fmt.Sprintf("ctxkit-cgesc-%d-%d", os.Getpid(), time.Now().UnixNano())
	script := fmt.Sprintf(`read h
( bash -c 'echo $BASHPID > %[1]s/cgroup.procs && exec setsid env -i /usr/bin/bash -c "exec -a %[2]s-left sleep 300"' & sleep 1 )
printf '%%s
' '{"type":"handshake_ack"}'
sleep 30`, own, marker)
	p := startShaken(t, script, false)
	if !p.tree.usesCgroup() {
		t.Fatal("the provider was not started in a cgroup")
	}
	proctest.WaitLive(t, marker, 1)
	cg := cgroupOf(marker)
	if cg == "" || strings.Contains(cg, filepath.Base(p.tree.cgroup)) {
		t.Skipf("the descendant could not leave the provider's cgroup here (%q): no escape to end", cg)
	}
	if err := p.Close(); err != nil {
		t.Logf("close: %v", err)
	}
	proctest.NoneLeft(t, marker, "Close")
}

// cgroupOf returns /proc/PID/cgroup of the process whose command line
// starts with prefix ("" when there is none).
func cgroupOf(prefix string) string {
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		cmd, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err != nil || !bytes.HasPrefix(cmd, []byte(prefix)) {
			continue
		}
		if cg, err := os.ReadFile("/proc/" + e.Name() + "/cgroup"); err == nil {
			return strings.TrimSpace(string(cg))
		}
	}
	return ""
}

// TestEndAdoptedEndsWhatEscapedTheTree: the one escape the trees leave, a
// descendant that clears its environment and is orphaned (here at once,
// and with a cgroup, after leaving it) before a walk of the tracker, is
// adopted by the host as a subreaper, and EndAdopted ends it.
func TestEndAdoptedEndsWhatEscapedTheTree(t *testing.T) {
	for _, noCgroup := range []bool{false, true} {
		t.Run(fmt.Sprintf("noCgroup=%v", noCgroup), func(t *testing.T) {
			move := ""
			if !noCgroup {
				if _, _, err := makeCgroupProbe(); err != nil {
					t.Skipf("cgroup v2 is not writable here (%v)", err)
				}
				own, err := hostCgroupDir()
				if err != nil {
					t.Fatal(err)
				}
				move = "echo $BASHPID > " + own + "/cgroup.procs; "
			}
			marker := fmt.Sprintf("ctxkit-adopt-%d-%d", os.Getpid(), time.Now().UnixNano())
			script := fmt.Sprintf(`read h
bash -c '%[1]s( setsid env -i /usr/bin/bash -c "exec -a %[2]s-orphan sleep 300" & )' &
printf '%%s
' '{"type":"handshake_ack"}'
sleep 30`, move, marker)
			p := startShaken(t, script, noCgroup)
			proctest.WaitLive(t, marker, 1)
			if err := p.Close(); err != nil {
				t.Logf("close: %v", err)
			}
			EndAdopted()
			proctest.NoneLeft(t, marker, "Close and EndAdopted")
		})
	}
}

// hostCgroupDir is the directory of the test process's own cgroup v2.
func hostCgroupDir() (string, error) {
	root, err := cgroup2Mount()
	if err != nil {
		return "", err
	}
	b, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return "", err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rel, ok := strings.CutPrefix(line, "0::"); ok {
			return filepath.Join(root, rel), nil
		}
	}
	return "", fmt.Errorf("no cgroup v2 membership in %q", b)
}

// startShaken starts a bash provider running script (NoCgroup as given)
// and exchanges its handshake, so that what it starts before acknowledging
// is running.
func startShaken(t *testing.T, script string, noCgroup bool) *Process {
	t.Helper()
	p, err := Stdio{Program: "bash", Args: []string{"-c", script}, NoCgroup: noCgroup}.Start()
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Write(context.Background(), []byte(`{"type":"handshake","protocol_version":"contextgraph/1.0"}`)); err != nil {
		t.Fatal(err)
	}
	if line, err := p.Read(); err != nil || !bytes.Contains(line, []byte("handshake_ack")) {
		t.Fatalf("ack: %q %v", line, err)
	}
	return p
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

// The tracker's walk over children lists finds the same tree as a walk of
// all of /proc.
func TestSubtreeProcsMatchesFullScan(t *testing.T) {
	cmd := exec.Command("bash", "-c", "sleep 30 & (sleep 30 & wait) & wait")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	root := cmd.Process.Pid
	deadline := time.Now().Add(5 * time.Second)
	for {
		want := descendants(scanProcs(), root, 0)
		got := subtreeProcs([]int{root})
		if len(want) == 3 {
			for _, pid := range append(want, root) {
				if _, ok := got[pid]; !ok {
					t.Fatalf("subtreeProcs(%d) = %v misses %d of %v", root, got, pid, want)
				}
			}
			if len(got) != len(want)+1 {
				t.Fatalf("subtreeProcs(%d) has %d processes, the scan %d", root, len(got), len(want)+1)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the tree did not form: %v", want)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

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
	p := startShaken(t, script, false)
	proctest.WaitLive(t, marker, 1)
	time.Sleep(300 * time.Millisecond) // many hops: the first pids are long gone
	if err := p.Close(); err != nil && !strings.Contains(err.Error(), "WaitDelay") {
		t.Logf("close: %v", err)
	}
	EndAdopted()
	proctest.NoneLeft(t, marker, "Close and EndAdopted")
}
