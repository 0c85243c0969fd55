//go:build linux

package main

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ctxkit/ctxkit/internal/proctest"
)

// escapingScript writes a stdio provider (bash) that starts sleepers
// named marker…: one that leaves its process group and session by a double
// fork and setsid, one by a plain double fork; then serves empty answers.
func escapingScript(t *testing.T, marker string) string {
	t.Helper()
	script := filepath.Join(t.TempDir(), "provider.sh")
	body := fmt.Sprintf(`#!/usr/bin/env bash
read h
( setsid bash -c 'exec -a %[1]s sleep 300' & )
( ( exec -a %[1]s-group sleep 300 ) & )
printf '%%s\n' '{"type":"handshake_ack","protocol_version":"contextgraph/1.0-draft","provider":{"name":"escaper","version":"1","data_flow":{"reads":true,"writes":false,"egress":false}},"capabilities":{"query":{"kinds":[]},"correlation":false,"graph":false,"verify":false,"resolve":false}}'
while read q; do
  printf '%%s\n' '{"type":"frames","result":{"frames":[],"truncated":false}}'
done
sleep 30
`, marker)
	if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	return script
}

// TestQueryEndsProviderTree: once `ctxkit query` returns, no process of a
// stdio provider is left, not even one that left the provider's process
// group and session by a double fork and setsid.
func TestQueryEndsProviderTree(t *testing.T) {
	marker := fmt.Sprintf("ctxkit-query-tree-%d-%d", os.Getpid(), time.Now().UnixNano())
	script := escapingScript(t, marker)
	code, _, errs := runCLI(t, "", "query", "--goal", "how often to retry", "--provider", "escaper=stdio:"+script, retryDocs(t))
	if !strings.Contains(errs, "escaper") {
		t.Fatalf("exit %d, no escaper leg:\n%s", code, errs)
	}
	proctest.NoneLeft(t, marker, "ctxkit query")
}

// TestServeEndsProviderTree: the same for `ctxkit serve`, whose providers
// end when it shuts down (what SIGTERM does).
func TestServeEndsProviderTree(t *testing.T) {
	marker := fmt.Sprintf("ctxkit-serve-tree-%d-%d", os.Getpid(), time.Now().UnixNano())
	script := escapingScript(t, marker)
	cfg := filepath.Join(t.TempDir(), "ctxkit.json")
	if err := os.WriteFile(cfg, []byte(fmt.Sprintf(`{"providers":[{"id":"escaper","command":[%q]}]}`, script)), 0o644); err != nil {
		t.Fatal(err)
	}
	srv := serveInProcess(t, "--config", cfg)
	base := srv.url
	resp, err := http.Post(base+"/v1/query", "application/json", strings.NewReader(`{"goal":"retry","budget":200}`))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("query: %d %s", resp.StatusCode, b)
	}
	proctest.WaitLive(t, marker, 2)
	if srv.stop() == -1 {
		t.Fatal("serve did not stop")
	}
	proctest.NoneLeft(t, marker, "ctxkit serve's shutdown")
}
