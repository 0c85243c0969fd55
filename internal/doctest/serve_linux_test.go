//go:build linux

package doctest

import (
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ctxkit/ctxkit/internal/announce"
	"github.com/ctxkit/ctxkit/internal/procstat"
)

// children returns the pids whose parent is pid, from /proc.
func children(t *testing.T, pid int) []int {
	t.Helper()
	ents, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	var out []int
	for _, e := range ents {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if st, err := procstat.Read(p); err == nil && st.PPID == pid {
			out = append(out, p)
		}
	}
	return out
}

func alive(pid int) bool {
	st, err := procstat.Read(pid)
	return err == nil && !st.Zombie() // a zombie has exited
}

// TestServeShutsDownStdioProviders starts `ctxkit serve` with a stdio
// provider (ctxkit's own files provider as a child process), queries it so
// the child is running, sends SIGTERM, and checks that the server exits 0
// and the child is gone.
func TestServeShutsDownStdioProviders(t *testing.T) {
	root, err := filepath.Abs(repoRoot)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	bin := filepath.Join(builtTools(t), "ctxkit")
	cfg := filepath.Join(dir, "ctxkit.json")
	doc := fmt.Sprintf(`{"providers":[{"id":"docs","command":[%q,"provider","files",%q]}]}`, bin, filepath.Join(root, "docs"))
	if err := os.WriteFile(cfg, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	srv := exec.Command(bin, "serve", "--addr", "127.0.0.1:0", "--config", cfg)
	stderr, err := srv.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	defer srv.Process.Kill()
	urlc, _ := announce.Watch(stderr, nil)
	var url string
	select {
	case url = <-urlc:
	case <-time.After(30 * time.Second):
		t.Fatal("ctxkit serve did not start")
	}
	resp, err := http.Post(url+"/v1/query", "application/json", strings.NewReader(`{"goal":"graceful shutdown of providers","budget":800}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("query: status %d", resp.StatusCode)
	}
	kids := children(t, srv.Process.Pid)
	if len(kids) == 0 {
		t.Fatal("no provider child process is running after a query")
	}
	if err := srv.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- srv.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("ctxkit serve after SIGTERM: %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("ctxkit serve did not stop within 20 s of SIGTERM")
	}
	deadline := time.Now().Add(5 * time.Second)
	for _, k := range kids {
		for alive(k) {
			if time.Now().After(deadline) {
				t.Fatalf("provider process %d still runs after the server stopped", k)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
}
