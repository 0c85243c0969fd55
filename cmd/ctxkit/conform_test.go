package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctxkit/ctxkit/conformance"
	"github.com/ctxkit/ctxkit/internal/tooltest"
)

// runBinary runs the built binary and returns its exit status and output.
func runBinary(t *testing.T, bin string, args ...string) (int, string, string) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Dir = filepath.Join("..", "..")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return code, out.String(), errb.String()
}

// jsonReport checks that stdout is exactly one JSON report and nothing else.
func jsonReport(t *testing.T, stdout string) *conformance.Report {
	t.Helper()
	if strings.Count(stdout, "\n") != 1 || !strings.HasPrefix(stdout, "{") {
		t.Fatalf("stdout is not one JSON line: %q", stdout)
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal([]byte(stdout), &raw); err != nil {
		t.Fatalf("stdout is not JSON: %v", err)
	}
	rep, err := conformance.ReadReport(strings.NewReader(stdout))
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// TestConformWithBinary runs the suites through the built command, which
// the harness re-executes as the fixture provider.
func TestConformWithBinary(t *testing.T) {
	bin := sharedCtxkit(t)
	t.Run("provider-honest-json", func(t *testing.T) { t.Parallel(); conformProviderHonestJSON(t, bin) })
	t.Run("provider-misbehaving", func(t *testing.T) { t.Parallel(); conformProviderMisbehaving(t, bin) })
	t.Run("composition-reference", func(t *testing.T) { t.Parallel(); conformCompositionReference(t, bin) })
	t.Run("composition-broken-python", func(t *testing.T) { t.Parallel(); conformCompositionBrokenPythonHost(t, bin) })
	t.Run("files-provider", func(t *testing.T) { t.Parallel(); conformFilesProvider(t, bin) })
	for _, tc := range []struct{ mode, check, rule string }{
		{"doc-for-every-kind", "kinds-filter", "Q1"},
		{"ignore-max-frames", "budget-honesty", "B4"},
		{"ignore-max-tokens", "budget-honesty", "B1"},
		{"sdk-example", "kinds-filter", "Q1"},
		{"sdk-example", "budget-honesty", "B4"},
	} {
		t.Run("provider-"+tc.mode+"-"+tc.rule, func(t *testing.T) {
			t.Parallel()
			conformProviderIgnoringLimits(t, bin, tc.mode, tc.check, tc.rule)
		})
	}
}

// conformProviderIgnoringLimits: a provider that ignores a kind other than
// the first it declares, max_frames or max_tokens is not certified: `ctxkit
// conform provider` exits 1 and the failed check's evidence names the rule.
// The sample query's generous budget (8 frames, 4096 tokens) and a probe of
// the first declared kind alone let each of these pass.
func conformProviderIgnoringLimits(t *testing.T, bin, mode, check, rule string) {
	code, out, errOut := runBinary(t, bin, "conform", "provider", "--json", "--", bin, "fixture-provider", "--misbehave", mode)
	if code != 1 {
		t.Fatalf("exit %d, want 1: %s %s", code, out, errOut)
	}
	rep := jsonReport(t, out)
	c, _ := rep.Check(check)
	if c.Status != conformance.Fail || !strings.Contains(c.Evidence, rule+": ") {
		t.Fatalf("%s: %s, want a failure naming %s; evidence: %s", check, c.Status, rule, c.Evidence)
	}
}

// conformFilesProvider: `ctxkit provider files DIR` passes
// `ctxkit conform provider` in full over stdio.
func conformFilesProvider(t *testing.T, bin string) {
	code, out, errOut := runBinary(t, bin, "conform", "provider", "--json", "--", bin, "provider", "files", "./docs")
	if code != 0 {
		t.Fatalf("exit %d: %s %s", code, out, errOut)
	}
	rep := jsonReport(t, out)
	if f := rep.Failed(); len(f) != 0 {
		t.Fatalf("failed %v: %+v", f, rep.Checks)
	}
	for _, name := range []string{"frame-validity", "budget-honesty", "verify-honesty",
		"provenance-fixture-consistency", "malformed-input-tolerance", "correlation", "unknown-envelope"} {
		if c, _ := rep.Check(name); c.Status != conformance.Pass {
			t.Errorf("%s is %s: %s", name, c.Status, c.Evidence)
		}
	}
}

func conformProviderHonestJSON(t *testing.T, bin string) {
	code, out, errOut := runBinary(t, bin, "conform", "provider", "--json", "--", bin, "fixture-provider")
	if code != 0 {
		t.Fatalf("exit %d; stderr %s; stdout %s", code, errOut, out)
	}
	rep := jsonReport(t, out)
	if p, f, s := rep.Tally(); p != 14 || f != 0 || s != 0 {
		t.Fatalf("tally %d/%d/%d: %+v", p, f, s, rep.Checks)
	}
}

func conformProviderMisbehaving(t *testing.T, bin string) {
	code, out, _ := runBinary(t, bin, "conform", "provider", "--json", "--", bin, "fixture-provider", "--misbehave", "under-report-cost")
	if code != 1 {
		t.Fatalf("exit %d", code)
	}
	rep := jsonReport(t, out)
	if c, _ := rep.Check("budget-honesty"); c.Status != conformance.Fail || !strings.Contains(c.Evidence, "B3") {
		t.Fatalf("budget-honesty: %+v", c)
	}
}

func TestConformProviderOverHTTP(t *testing.T) {
	t.Parallel()
	p, err := conformance.NewFixtureProvider(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	srv := httptest.NewServer(p)
	defer srv.Close()
	var out, errb bytes.Buffer
	code := run(context.Background(), []string{"conform", "provider", "--http", srv.URL, "--json"}, stdio{in: strings.NewReader(""), out: &out, err: &errb})
	if code != 0 {
		t.Fatalf("exit %d: %s %s", code, out.String(), errb.String())
	}
	rep := jsonReport(t, out.String())
	if p, f, s := rep.Tally(); p != 11 || f != 0 || s != 3 {
		t.Fatalf("tally %d/%d/%d", p, f, s)
	}
}

func TestConformHostText(t *testing.T) {
	t.Parallel()
	var out, errb bytes.Buffer
	code := run(context.Background(), []string{"conform", "host"}, stdio{in: strings.NewReader(""), out: &out, err: &errb})
	if code != 0 {
		t.Fatalf("exit %d: %s %s", code, out.String(), errb.String())
	}
	if !strings.Contains(out.String(), "host-crash-isolation") || !strings.Contains(out.String(), "CONFORMANT") {
		t.Fatalf("text report: %s", out.String())
	}
}

func conformCompositionReference(t *testing.T, bin string) {
	code, out, errOut := runBinary(t, bin, "conform", "composition", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s %s", code, out, errOut)
	}
	rep := jsonReport(t, out)
	if p, f, _ := rep.Tally(); p == 0 || p != len(rep.Checks) || f != 0 {
		t.Fatalf("report %+v", rep.Checks)
	}
}

// conformCompositionBrokenPythonHost is the acceptance run through the
// CLI: the broken variant of the Python example host exits 1 with evidence
// naming the violated check. (That the working example passes is shown, at
// the same cost, by conformance.TestPythonExampleHostPasses.)
func conformCompositionBrokenPythonHost(t *testing.T, bin string) {
	// The spelling: --json after the host command.
	code, out, errOut := runBinary(t, bin, "conform", "composition", "--exec", tooltest.Python(t), "examples/composing-host/broken_host.py", "--json")
	if code != 1 {
		t.Fatalf("exit %d, want 1: %s %s", code, out, errOut)
	}
	rep := jsonReport(t, out)
	if f := rep.Failed(); len(f) != 1 || f[0] != "composition-quarantine" {
		t.Fatalf("failed %v", f)
	}
	c, _ := rep.Check("composition-quarantine")
	if !strings.Contains(c.Evidence, "flooder") || !strings.Contains(c.Evidence, "expected:") {
		t.Fatalf("evidence %s", c.Evidence)
	}
}

func TestConformUsageErrorsExit2(t *testing.T) {
	for _, args := range [][]string{
		{"conform"},
		{"conform", "bogus"},
		{"conform", "provider"},
		{"conform", "provider", "--json"},
		{"conform", "provider", "--http", "http://127.0.0.1:1", "--", "x"},
		{"conform", "provider", "--", "/nonexistent/ctxkit-provider"},
		{"conform", "composition", "--exec"},
		{"conform", "composition", "--exec", "/nonexistent/host"},
		{"conform", "composition", "stray"},
		{"conform", "host", "stray"},
		{"conform", "provider", "--bogus-flag"},
	} {
		var out, errb bytes.Buffer
		code := run(context.Background(), args, stdio{in: strings.NewReader(""), out: &out, err: &errb})
		if code != 2 {
			t.Errorf("%v: exit %d, want 2", args, code)
		}
		if out.Len() != 0 {
			t.Errorf("%v: stdout %q on a usage error", args, out.String())
		}
		if errb.Len() == 0 {
			t.Errorf("%v: no message on stderr", args)
		}
	}
}

func TestFixtureProviderHelpListsEveryMode(t *testing.T) {
	var out, errb bytes.Buffer
	if code := run(context.Background(), []string{"fixture-provider", "--help"}, stdio{in: strings.NewReader(""), out: &out, err: &errb}); code != 0 {
		t.Fatalf("exit %d", code)
	}
	for _, m := range conformance.MisbehaveModes() {
		if !strings.Contains(out.String(), m.Name) {
			t.Errorf("--help does not list %s", m.Name)
		}
	}
	for _, args := range [][]string{{"fixture-provider", "--misbehave", "nope"}, {"fixture-provider", "--scenario", "quarantine"}, {"fixture-provider", "extra"}} {
		errb.Reset()
		if code := run(context.Background(), args, stdio{in: strings.NewReader(""), out: &out, err: &errb}); code != 2 {
			t.Errorf("%v: exit %d", args, code)
		}
	}
}

func TestSplitExec(t *testing.T) {
	for _, tc := range []struct {
		cmd, flags, host, rest []string
	}{
		{[]string{"python3", "h.py"}, nil, []string{"python3", "h.py"}, nil},
		{[]string{"python3", "h.py", "--json"}, []string{"--timeout", "5s"}, []string{"python3", "h.py"}, []string{"--timeout", "5s", "--json"}},
		{[]string{"host", "--json", "--"}, nil, []string{"host", "--json"}, nil},
		{[]string{"--json"}, nil, []string{}, []string{"--json"}},
	} {
		host, rest := splitExec(tc.cmd, tc.flags)
		if strings.Join(host, " ") != strings.Join(tc.host, " ") || strings.Join(rest, " ") != strings.Join(tc.rest, " ") {
			t.Errorf("splitExec(%q, %q) = %q, %q; want %q, %q", tc.cmd, tc.flags, host, rest, tc.host, tc.rest)
		}
	}
}
