package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/ctxkit/ctxkit/compose"
	"github.com/ctxkit/ctxkit/frame"
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

// offersFile writes one turn's offers of provider "p" as NDJSON: frames of
// equal size with the given scores.
func offersFile(t *testing.T, dir, name string, scores map[string]float32) string {
	t.Helper()
	var b strings.Builder
	for _, id := range []string{"a", "b", "c"} {
		content := "evidence of " + id + strings.Repeat(" with some length", 3)
		sum := sha256.Sum256([]byte(content))
		f := frame.Frame{ID: id, Kind: frame.KindDoc, Title: id, Content: content,
			ContentDigest: "sha256:" + hex.EncodeToString(sum[:]), Score: scores[id],
			TokenCost: uint32(frame.BudgetTokens(content)), CitationLabel: "p:" + id}
		line, err := json.Marshal(map[string]any{"provider": "p", "frame": &f})
		if err != nil {
			t.Fatal(err)
		}
		b.Write(line)
		b.WriteByte('\n')
	}
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// Two turns through the CLI where jitter lifts c 0.03 above b at the
// budget's edge: without a margin c swaps in and the prefix breaks; with
// --sticky-margin 0.1 b is held and the prompt does not change.
func TestComposeStickyMargin(t *testing.T) {
	dir := t.TempDir()
	turn1 := offersFile(t, dir, "turn1.ndjson", map[string]float32{"a": .9, "b": .6, "c": .5})
	turn2 := offersFile(t, dir, "turn2.ndjson", map[string]float32{"a": .9, "b": .55, "c": .58})
	// The budget holds two of the three equal frames.
	f := frame.Frame{ID: "a", Kind: frame.KindDoc, Content: "evidence of a" + strings.Repeat(" with some length", 3), CitationLabel: "p:a"}
	budget := strconv.Itoa(2 * compose.RenderedCost("p", &f))

	code, out, errOut := runCLI(t, "", "compose", "--budget", budget, "--placement", "stable-first", "--format", "json", turn1)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	prev := filepath.Join(dir, "turn1.json")
	if err := os.WriteFile(prev, []byte(out), 0o644); err != nil {
		t.Fatal(err)
	}
	var first struct {
		Prompt string `json:"prompt"`
	}
	if err := json.Unmarshal([]byte(out), &first); err != nil {
		t.Fatal(err)
	}
	args := []string{"compose", "--budget", budget, "--placement", "stable-first", "--previous", prev}
	code, plain, errOut := runCLI(t, "", append(args, turn2)...)
	if code != exitOK || plain == first.Prompt || strings.Contains(errOut, "sticky") {
		t.Fatalf("without a margin: exit %d, prompt unchanged %v, stderr:\n%s", code, plain == first.Prompt, errOut)
	}
	code, held, errOut := runCLI(t, "", append(args, "--sticky-margin", "0.1", turn2)...)
	if code != exitOK || held != first.Prompt {
		t.Fatalf("with --sticky-margin 0.1: exit %d, the prompt changed; stderr:\n%s", code, errOut)
	}
	for _, want := range []string{"included verifiable p/b@", " sticky=held\n", "excluded over_budget p/c@",
		" sticky=displaced\n", "sticky_margin=0.1 held=1 displaced=1\n", "stable_frames=2 "} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errOut)
		}
	}
	for _, bad := range []string{"-0.1", "x", "NaN", "Inf", "1e40"} {
		code, _, errOut := runCLI(t, "", append(args, "--sticky-margin", bad, turn2)...)
		if code != exitUsage || !strings.Contains(errOut, "--sticky-margin wants a finite score margin") {
			t.Errorf("--sticky-margin %s: exit %d, stderr:\n%s", bad, code, errOut)
		}
	}
}
