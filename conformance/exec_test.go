package conformance

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ctxkit/ctxkit/internal/cgpjson"
	"github.com/ctxkit/ctxkit/internal/tooltest"
)

func pythonHost(t *testing.T, script string) *ExecComposingHost {
	t.Helper()
	path, err := filepath.Abs(filepath.Join("..", "examples", "composing-host", script))
	if err != nil {
		t.Fatal(err)
	}
	return &ExecComposingHost{Command: []string{tooltest.Python(t), path}, FixtureCommand: fixtureCommand(), Timeout: 20 * time.Second}
}

// TestPythonExampleHostPasses: the worked downstream host in examples/,
// written in Python against real stdio fixture providers, passes every
// composition check.
func TestPythonExampleHostPasses(t *testing.T) {
	t.Parallel()
	h := pythonHost(t, "host.py")
	rep := RunComposition(context.Background(), h, &CompositionOptions{Target: h.Target()})
	for _, c := range rep.Checks {
		if c.Status != Pass {
			t.Errorf("%s: %s: %s", c.Name, c.Status, c.Evidence)
		}
	}
	if len(rep.Checks) != len(compositionChecks()) {
		t.Fatalf("%d checks", len(rep.Checks))
	}
}

// TestPythonBrokenHostFailsQuarantine: the same host with its per-provider
// audit removed fails exactly the quarantine check, with evidence naming
// the leaked frames.
func TestPythonBrokenHostFailsQuarantine(t *testing.T) {
	t.Parallel()
	h := pythonHost(t, "broken_host.py")
	rep := RunComposition(context.Background(), h, &CompositionOptions{Target: h.Target()})
	if got := rep.Failed(); len(got) != 1 || got[0] != checkQuarantine {
		t.Fatalf("failed checks %v, want [%s]; report: %+v", got, checkQuarantine, rep.Checks)
	}
	c, _ := rep.Check(checkQuarantine)
	if !strings.Contains(c.Evidence, "leaked [flooder/flood-") {
		t.Errorf("evidence does not name the leaked frames: %s", c.Evidence)
	}
}

func TestExecHostErrorsFailChecksWithEvidence(t *testing.T) {
	for _, tc := range []struct{ name, script, want string }{
		{"garbage", "echo not json", "composition output"},
		{"no-admitted", `echo '{"dropped":[]}'`, `no "admitted" member`},
		{"exit-status", "echo oops >&2; exit 4", "oops"},
		{"two-values", `echo '{"admitted":[]} {"admitted":[]}'`, "more than one JSON value"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := &ExecComposingHost{Command: []string{"sh", "-c", "cat >/dev/null; " + tc.script}, FixtureCommand: fixtureCommand()}
			rep := RunComposition(context.Background(), h, nil)
			if rep.Passed() || len(rep.Failed()) != len(compositionChecks()) {
				t.Fatalf("failed %v", rep.Failed())
			}
			for _, c := range rep.Checks {
				if !strings.Contains(c.Evidence, tc.want) || !strings.Contains(c.Evidence, "host error") {
					t.Errorf("%s evidence: %s", c.Name, c.Evidence)
				}
			}
		})
	}
}

func TestExecHostTimeout(t *testing.T) {
	h := &ExecComposingHost{Command: []string{"sleep", "30"}, FixtureCommand: fixtureCommand(), Timeout: 200 * time.Millisecond}
	start := time.Now()
	_, err := h.Compose(context.Background(), mustScenario(t, scenarioDeterminism))
	if err == nil || !strings.Contains(err.Error(), "timeout") {
		t.Fatalf("err = %v", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("took %v", d)
	}
}

func TestExecInputNamesFixtureCommands(t *testing.T) {
	h := &ExecComposingHost{Command: []string{"host"}, FixtureCommand: []string{"/bin/ctxkit", "fixture-provider"}}
	in, err := h.input(mustScenario(t, scenarioQuarantine))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"protocol":"ctxkit-composition/1","scenario":"quarantine","query":{"goal":"conformance probe: return your most relevant frames","query_text":"conformance probe","max_frames":8,"max_tokens":1000},` +
		`"providers":[{"id":"flooder","command":["/bin/ctxkit","fixture-provider","--scenario","quarantine","--provider","flooder"]},` +
		`{"id":"honest","command":["/bin/ctxkit","fixture-provider","--scenario","quarantine","--provider","honest"]}]}` + "\n"
	if string(in) != want {
		t.Fatalf("got  %s\nwant %s", in, want)
	}
}

func mustScenario(t *testing.T, name string) *Scenario {
	t.Helper()
	s, ok := lookupScenario(name)
	if !ok {
		t.Fatalf("no scenario %s", name)
	}
	return s
}

func FuzzParseComposition(f *testing.F) {
	f.Add(`{"admitted":[["p","f"]],"dropped":[["q","g"]]}`)
	f.Add(`{"admitted":[]}`)
	f.Add(`{"admitted":[["p"]]}`)
	f.Add(`{"admitted":null}`)
	f.Add(`[]`)
	f.Fuzz(func(t *testing.T, in string) {
		c, err := parseComposition([]byte(in))
		if err != nil {
			return
		}
		b, err := cgpjson.MarshalNoEscape(c)
		if err != nil {
			t.Fatal(err)
		}
		back, err := parseComposition(b)
		if err != nil {
			t.Fatalf("re-parse %s: %v", b, err)
		}
		if !sameRefs(back.Admitted, c.Admitted) || !sameRefs(back.Dropped, c.Dropped) {
			t.Fatalf("round trip changed %s", in)
		}
	})
}

func TestParseCompositionReadsPairs(t *testing.T) {
	c, err := parseComposition([]byte(`{"admitted":[["honest","honest-f"]],"dropped":[["p2","p2-f"]]}`))
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(c.Admitted, c.Dropped); got != "[honest/honest-f] [p2/p2-f]" {
		t.Fatalf("parsed %s", got)
	}
}
