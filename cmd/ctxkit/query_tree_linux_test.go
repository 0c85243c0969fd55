//go:build linux

package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// liveWithArgv0 lists the running (non-zombie) processes whose argv[0]
// starts with prefix.
func liveWithArgv0(prefix string) []int {
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
		stat, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		if f := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:])); len(f) > 0 && f[0] != "Z" {
			out = append(out, pid)
		}
	}
	return out
}

// TestQueryEndsProviderTree: once `ctxkit query` returns, no process of a
// stdio provider is left, not even one that left the provider's process
// group and session by a double fork and setsid.
func TestQueryEndsProviderTree(t *testing.T) {
	dir := t.TempDir()
	marker := fmt.Sprintf("ctxkit-query-tree-%d-%d", os.Getpid(), time.Now().UnixNano())
	script := filepath.Join(dir, "provider.sh")
	body := fmt.Sprintf(`#!/usr/bin/env bash
read h
( setsid bash -c 'exec -a %[1]s sleep 300' & )
( ( exec -a %[1]s-group sleep 300 ) & )
printf '%%s\n' '{"type":"handshake_ack","protocol_version":"contextgraph/1.0-draft","provider":{"name":"escaper","version":"1","data_flow":{"reads":true,"writes":false,"egress":false}},"capabilities":{"query":{"kinds":[]},"correlation":false,"graph":false,"verify":false,"resolve":false}}'
read q
printf '%%s\n' '{"type":"frames","result":{"frames":[],"truncated":false}}'
sleep 30
`, marker)
	if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	docs := retryDocs(t)
	code, _, errs := runCLI(t, "", "query", "--goal", "how often to retry", "--provider", "escaper=stdio:"+script, docs)
	if !strings.Contains(errs, "escaper") {
		t.Fatalf("exit %d, no escaper leg:\n%s", code, errs)
	}
	deadline := time.Now().Add(3 * time.Second)
	for {
		left := liveWithArgv0(marker)
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			for _, pid := range left {
				if p, err := os.FindProcess(pid); err == nil {
					_ = p.Kill()
				}
			}
			t.Fatalf("%d process(es) of the provider outlived ctxkit query: %v", len(left), left)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
