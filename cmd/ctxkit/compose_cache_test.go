package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// Two turns of stable-first composition through the CLI: the second reads
// the first's JSON result as its previous layout and keeps all three frames
// as its stable part.
func TestComposePlacementAcrossTurns(t *testing.T) {
	code, out, errOut := runCLI(t, "", "compose", "--budget", "200", "--placement", "stable-first", "--format", "json", workedVector)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var first struct {
		Prompt string `json:"prompt"`
		Cache  struct {
			Bytes        int             `json:"stable_prefix_bytes"`
			StableFrames int             `json:"stable_frames"`
			Relay        string          `json:"relay"`
			Layout       json.RawMessage `json:"layout"`
		} `json:"cache"`
	}
	if err := json.Unmarshal([]byte(out), &first); err != nil {
		t.Fatal(err)
	}
	if first.Cache.StableFrames != 0 || first.Cache.Relay != "no_previous" || len(first.Cache.Layout) == 0 {
		t.Fatalf("first turn cache member: %+v", first.Cache)
	}
	dir := t.TempDir()
	prev := filepath.Join(dir, "turn1.json")
	if err := os.WriteFile(prev, []byte(out), 0o644); err != nil {
		t.Fatal(err)
	}
	code, prompt, errOut := runCLI(t, "", "compose", "--budget", "200", "--placement", "stable-first", "--previous", prev, workedVector)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if prompt != first.Prompt {
		t.Fatal("same offers, same previous layout: the prompt changed")
	}
	if !strings.Contains(errOut, "placement=stable-first stable_prefix_bytes="+strconv.Itoa(len(prompt))+" ") ||
		!strings.Contains(errOut, "stable_frames=3 ") || strings.Contains(errOut, "relay=") {
		t.Fatalf("second turn report:\n%s", errOut)
	}
	// 257 budget tokens is under the default minimum: warned; under
	// --min-prefix 200 it is not.
	if !strings.Contains(errOut, "warning: stable prefix of 257 budget tokens is below the provider minimum of 1024") {
		t.Fatalf("no warning:\n%s", errOut)
	}
	_, _, errOut = runCLI(t, "", "compose", "--budget", "200", "--placement", "stable-first", "--previous", prev, "--min-prefix", "200", workedVector)
	if strings.Contains(errOut, "warning:") {
		t.Fatalf("warned under --min-prefix 200:\n%s", errOut)
	}
	// A bare layout file works too.
	bare := filepath.Join(dir, "layout.json")
	if err := os.WriteFile(bare, first.Cache.Layout, 0o644); err != nil {
		t.Fatal(err)
	}
	if code, again, _ := runCLI(t, "", "compose", "--budget", "200", "--placement", "stable-first", "--previous", bare, workedVector); code != exitOK || again != prompt {
		t.Fatalf("exit %d with a bare layout", code)
	}
}

func TestComposePlacementErrors(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(bad, []byte(`{"version":9,"placement":"canonical","frames":[],"stable":0}`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--placement", "folded"}, `unknown placement "folded"`},
		{[]string{"--min-prefix", "0"}, "--min-prefix wants a positive integer"},
		{[]string{"--previous", filepath.Join(dir, "missing.json")}, "--previous:"},
		{[]string{"--previous", bad}, "compose: layout version: unsupported version 9"},
	} {
		args := append([]string{"compose", "--budget", "200"}, tc.args...)
		code, _, errOut := runCLI(t, "", append(args, workedVector)...)
		if code != exitUsage || !strings.Contains(errOut, tc.want) {
			t.Errorf("%v: exit %d, stderr:\n%s\nwant %q", tc.args, code, errOut, tc.want)
		}
	}
	// Without placement flags the text output carries no cache line.
	if _, _, errOut := runCLI(t, "", "compose", "--budget", "200", workedVector); strings.Contains(errOut, "stable_prefix") {
		t.Fatalf("default composition reported a stable prefix:\n%s", errOut)
	}
}
