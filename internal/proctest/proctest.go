//go:build linux

// Package proctest finds and reaps test processes by the argv[0] prefix a
// test gave them, so that tests of process-tree cleanup (host/transport,
// cmd/ctxkit) share one way to ask "is anything of it still running?".
package proctest

import (
	"bytes"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/ctxkit/ctxkit/internal/procstat"
)

// live lists the running (non-zombie) processes whose argv[0] starts with
// prefix.
func live(prefix string) []int {
	ents, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		cmd, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err != nil || !bytes.HasPrefix(cmd, []byte(prefix)) {
			continue
		}
		if st, err := procstat.Read(pid); err == nil && !st.Zombie() {
			out = append(out, pid)
		}
	}
	return out
}

// WaitLive waits up to five seconds for n processes named prefix… to run.
func WaitLive(t testing.TB, prefix string, n int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for len(live(prefix)) < n {
		if time.Now().After(deadline) {
			t.Fatalf("the provider's processes did not start: %v", live(prefix))
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// NoneLeft fails t if a process named prefix… is still running three
// seconds after what (the step that should have ended them), and kills the
// survivors so they do not outlive the test.
func NoneLeft(t testing.TB, prefix, what string) {
	t.Helper()
	deadline := time.Now().Add(3 * time.Second)
	for {
		left := live(prefix)
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			for _, pid := range left {
				if p, err := os.FindProcess(pid); err == nil {
					_ = p.Kill()
				}
			}
			t.Fatalf("%d process(es) of the provider outlived %s: %v", len(left), what, left)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
