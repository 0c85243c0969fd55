//go:build linux

package main

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

// statusKB reads a "VmRSS:"-style field of /proc/PID/status in KiB.
func statusKB(t *testing.T, pid int, field string) int64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			n, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			if err != nil {
				t.Fatalf("%s: %q: %v", field, line, err)
			}
			return n
		}
	}
	t.Fatalf("no %s in /proc/%d/status", field, pid)
	return 0
}

// TestServeMemoryBoundedUnderUnsentBodies starts a real `ctxkit serve`,
// opens 100 connections that each send only headers announcing an 8 MiB
// body, and keeps sending ordinary requests meanwhile. Every ordinary
// request must succeed and the server's resident memory (its own, read from
// /proc, peak included) must stay under 100 MB: the server must not size a
// buffer from a Content-Length whose bytes have not arrived.
func TestServeMemoryBoundedUnderUnsentBodies(t *testing.T) {
	bin := sharedCtxkit(t)
	cmd, base := serveBinary(t, bin, "--timeout", "20s")
	pid := cmd.Process.Pid
	before := statusKB(t, pid, "VmRSS")

	const conns, declared = 100, 8 << 20
	for range conns {
		c, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		if _, err := fmt.Fprintf(c, "POST /v1/compose HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n", declared); err != nil {
			t.Fatal(err)
		}
	}
	offer := `{"budget":100,"offers":[{"provider":"docs","frame":{"id":"r","kind":"doc","title":"Retry","content":"Retry at most 3 times.","score":0.5,"token_cost":6,"citation_label":"retry.md"}}]}`
	client := &http.Client{Timeout: 10 * time.Second}
	var peak int64
	for i := range 40 { // about two seconds of ordinary traffic
		resp, err := client.Post(base+"/v1/compose", "application/json", strings.NewReader(offer))
		if err != nil {
			t.Fatalf("ordinary request %d beside %d stalled uploads: %v", i, conns, err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || !strings.Contains(string(b), "Retry at most 3 times.") {
			t.Fatalf("ordinary request %d: %d %s", i, resp.StatusCode, b)
		}
		peak = max(peak, statusKB(t, pid, "VmRSS"))
		time.Sleep(50 * time.Millisecond)
	}
	hwm := statusKB(t, pid, "VmHWM")
	t.Logf("ctxkit serve RSS: %d KiB before, %d KiB peak sampled, %d KiB high-water mark, with %d connections each announcing %d bytes",
		before, peak, hwm, conns, declared)
	if limit := int64(100 * 1000 * 1000 / 1024); hwm >= limit {
		t.Fatalf("server RSS high-water mark %d KiB, want under 100 MB (%d KiB)", hwm, limit)
	}
}
