package main

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/ctxkit/ctxkit/compose"
)

const workedVector = "testdata/compose/worked-vector.ndjson"

// The worked vector of docs/protocol.md §4.1 under a budget of 200 rendered
// tokens: the low duplicate is dropped in favour of beta/dup_high; the
// three survivors cost 20 + 24 + 118 = 162 tokens of rendered blocks
// (79, 95 and 472 bytes) and all fit.
func TestComposeWorkedVectorText(t *testing.T) {
	code, out, errOut := runCLI(t, "", "compose", "--budget", "200", workedVector)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	want, err := os.ReadFile("testdata/compose/worked-vector.budget200.audit")
	if err != nil {
		t.Fatal(err)
	}
	if errOut != string(want) {
		t.Fatalf("audit:\n%s\nwant:\n%s", errOut, want)
	}
	prompt := compose.Preamble +
		"<frame provider=\"alpha\" id=\"cheap\" kind=\"doc\" cite=\"cheap cite\">\nabcd\n</frame>\n" +
		"<frame provider=\"beta\" id=\"huge\" kind=\"doc\" cite=\"huge cite\">\n" + strings.Repeat("x", 400) + "\n</frame>\n" +
		"<frame provider=\"beta\" id=\"dup_high\" kind=\"doc\" cite=\"dup_high cite\">\nshared evidence\n</frame>\n"
	if out != prompt {
		t.Fatalf("prompt:\n%s\nwant:\n%s", out, prompt)
	}
	// A tighter budget drops the huge frame with its cost and what remained.
	code, _, errOut = runCLI(t, "", "compose", "--budget=60", workedVector)
	if code != exitOK || !strings.Contains(errOut, "excluded over_budget beta/huge@") ||
		!strings.Contains(errOut, "cost=118 remaining=16") || !strings.Contains(errOut, "tokens_used=44") {
		t.Fatalf("exit %d:\n%s", code, errOut)
	}
}

func TestComposeWorkedVectorJSON(t *testing.T) {
	in, err := os.ReadFile(workedVector)
	if err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runCLI(t, string(in), "compose", "--budget", "200", "--format", "json", "-")
	if code != exitOK || errOut != "" {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var res struct {
		Prompt string `json:"prompt"`
		Audit  struct {
			Budget     int `json:"budget"`
			TokensUsed int `json:"tokens_used"`
			Entries    []struct {
				Frame struct {
					Provider string `json:"provider_id"`
					Frame    string `json:"frame_id"`
				} `json:"frame"`
				Disposition string `json:"disposition"`
				Reason      *struct {
					Kind string `json:"kind"`
				} `json:"reason"`
			} `json:"entries"`
		} `json:"audit"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("output does not parse: %v\n%s", err, out)
	}
	// Total partition: each of the four offers exactly once, each excluded one
	// with a reason.
	seen := map[string]string{}
	for _, e := range res.Audit.Entries {
		key := e.Frame.Provider + "/" + e.Frame.Frame
		if _, dup := seen[key]; dup {
			t.Fatalf("%s listed twice", key)
		}
		seen[key] = e.Disposition
		if (e.Disposition == "excluded") != (e.Reason != nil) {
			t.Fatalf("entry %s: disposition %s with reason %v", key, e.Disposition, e.Reason)
		}
	}
	for _, k := range []string{"alpha/dup_low", "beta/dup_high", "alpha/cheap", "beta/huge"} {
		if seen[k] == "" {
			t.Fatalf("offer %s missing from the audit", k)
		}
	}
	if len(seen) != 4 || seen["alpha/dup_low"] != "excluded" || res.Audit.TokensUsed != 162 || res.Audit.Budget != 200 {
		t.Fatalf("audit %+v", res.Audit)
	}
	if !strings.HasPrefix(res.Prompt, compose.Preamble) {
		t.Fatal("prompt lacks the preamble")
	}
}

func TestComposeValidatesFirst(t *testing.T) {
	const bad = "testdata/compose/one-invalid.ndjson"
	code, out, errOut := runCLI(t, "", "compose", "--budget", "60", bad)
	if code != exitFailed || out != "" {
		t.Fatalf("exit %d, stdout %q", code, out)
	}
	for _, want := range []string{"line 2: invalid beta/bad@", "F2 frame.title", "B3 frame.token_cost", "nothing composed"} {
		if !strings.Contains(errOut, want) {
			t.Fatalf("stderr lacks %q:\n%s", want, errOut)
		}
	}
	code, out, errOut = runCLI(t, "", "compose", "--budget", "60", "--skip-invalid", bad)
	if code != exitOK || !strings.Contains(out, `id="good"`) || strings.Contains(out, `id="bad"`) {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	for _, want := range []string{"line 2: skipped beta/bad@", "F2 frame.title", "included verifiable alpha/good@", "skipped 1 invalid of 2 offers"} {
		if !strings.Contains(errOut, want) {
			t.Fatalf("stderr lacks %q:\n%s", want, errOut)
		}
	}
	// A blank provider id is invalid too.
	line := `{"provider":" ","frame":{"id":"a","kind":"doc","title":"t","content":"abcd","score":0.5,"token_cost":1,"citation_label":"a"}}`
	if code, _, errOut := runCLI(t, line, "compose", "--budget", "9"); code != exitFailed || !strings.Contains(errOut, "provider id is blank") {
		t.Fatalf("exit %d: %s", code, errOut)
	}
}

func TestComposeStrategiesAndPackers(t *testing.T) {
	for _, args := range [][]string{
		{"--strategy", "round-robin-by-rank"}, {"--strategy", "per-provider-quota"}, {"--strategy=per-provider-quota:2"},
		{"--strategy", "score-descending", "--packer", "stop-at-first-miss"},
	} {
		code, out, errOut := runCLI(t, "", append([]string{"compose", "--budget", "60", workedVector}, args...)...)
		if code != exitOK || !strings.HasPrefix(out, compose.Preamble) {
			t.Fatalf("%v: exit %d: %s", args, code, errOut)
		}
		name := strings.TrimPrefix(strings.SplitN(args[len(args)-1], ":", 2)[0], "--strategy=")
		if !strings.Contains(errOut, name) {
			t.Fatalf("%v: summary does not name %q:\n%s", args, name, errOut)
		}
	}
}

func TestComposeUsageErrors(t *testing.T) {
	for _, args := range [][]string{
		{"compose", workedVector},
		{"compose", "--budget", "-1", workedVector},
		{"compose", "--budget", "x", workedVector},
		{"compose", "--budget"},
		{"compose", "--budget", "5", "--strategy", "magic", workedVector},
		{"compose", "--budget", "5", "--packer", "knapsack", workedVector},
		{"compose", "--budget", "5", "--format", "yaml", workedVector},
		{"compose", "--budget", "5", "--frobnicate", workedVector},
		{"compose", "--budget", "5", workedVector, workedVector},
		{"compose", "--budget", "5", "testdata/compose/no-such-file.ndjson"},
	} {
		if code, _, errOut := runCLI(t, "", args...); code != exitUsage || !strings.Contains(errOut, "compose:") {
			t.Fatalf("%v: exit %d: %s", args, code, errOut)
		}
	}
	if code, _, errOut := runCLI(t, "{not json", "compose", "--budget", "5"); code != exitUsage {
		t.Fatalf("unparsable input: exit %d: %s", code, errOut)
	}
	if code, out, _ := runCLI(t, "", "compose", "--help"); code != exitOK || !strings.Contains(out, "usage: ctxkit compose") {
		t.Fatalf("help: exit %d", code)
	}
}
