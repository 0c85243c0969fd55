package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/ctxkit/ctxkit/server/api"
	"github.com/ctxkit/ctxkit/server/client"
)

// kill -9 of the granting process and of a serving replica in the middle
// of a stream of grants: every grant whose acknowledgement was printed is
// in the shared store afterwards, and a replica started after sees them.
func TestKillDuringGrantsLosesNoAcknowledgedGrant(t *testing.T) {
	pg := migratedStore(t)
	bin := sharedCtxkit(t)
	p := newScopedProvider(t)
	cfg := p.config(t, "store", pg.URL())
	if code, _, errs := runBinary(t, bin, p.grantArgs(pg.URL())...); code != exitOK {
		t.Fatalf("grant: %s", errs)
	}

	replica, replicaURL := serveBinary(t, bin, "--config", cfg)
	rc, _ := client.New(replicaURL, nil)
	stopLoad := make(chan struct{})
	var load sync.WaitGroup
	load.Add(1)
	go func() { // the replica serves while the grants go in
		defer load.Done()
		for {
			select {
			case <-stopLoad:
				return
			default:
				_, _ = rc.Query(context.Background(), &api.QueryRequest{Goal: "g"})
			}
		}
	}()

	script := fmt.Sprintf(`for i in $(seq 1 100000); do %q consent grant p$i --store %q --scope third-party-index --grantor ada --endpoint http://p$i.example/cgp --provider-name p$i || exit 1; done`, bin, pg.URL())
	writer := exec.Command("bash", "-c", script)
	writer.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	out, _ := writer.StdoutPipe()
	if err := writer.Start(); err != nil {
		t.Fatal(err)
	}
	acked := map[string]bool{}
	sc := bufio.NewScanner(out)
	deadline := time.Now().Add(3 * time.Second)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) > 1 && f[0] == "granted" {
			acked[f[1]] = true
		}
		if len(acked) >= 30 || time.Now().After(deadline) {
			break
		}
	}
	// Mid-stream: the writer (and the grant it is running) and the replica.
	_ = syscall.Kill(-writer.Process.Pid, syscall.SIGKILL)
	_ = replica.Process.Signal(syscall.SIGKILL)
	for sc.Scan() { // acknowledgements printed before the kill landed
		if f := strings.Fields(sc.Text()); len(f) > 1 && f[0] == "granted" {
			acked[f[1]] = true
		}
	}
	_ = writer.Wait()
	_ = replica.Wait()
	close(stopLoad)
	load.Wait()
	if len(acked) == 0 {
		t.Fatal("no grant was acknowledged before the kill")
	}

	code, listed, errs := runBinary(t, bin, "consent", "list", "--json", "--store", pg.URL())
	if code != exitOK {
		t.Fatalf("list: %s", errs)
	}
	var got struct {
		Receipts []struct {
			ProviderID string `json:"provider_id"`
		} `json:"receipts"`
	}
	if err := json.Unmarshal([]byte(listed), &got); err != nil {
		t.Fatal(err)
	}
	present := map[string]bool{}
	for _, r := range got.Receipts {
		present[r.ProviderID] = true
	}
	for id := range acked {
		if !present[id] {
			t.Errorf("acknowledged grant %s is missing after the kill", id)
		}
	}
	t.Logf("%d grants acknowledged before kill -9, %d in the store", len(acked), len(present))

	// A replica started afterwards serves from the same log.
	url, _ := startServe(t, cfg)
	c, _ := client.New(url, nil)
	if s := queryLeg(t, c); s != "frames" {
		t.Fatalf("a replica started after the kill: leg %s, want frames (wiki was granted before)", s)
	}
}
