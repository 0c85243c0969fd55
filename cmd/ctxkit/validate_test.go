package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctxkit/ctxkit/internal/fixtures"
)

// runCLI runs ctxkit in-process and returns exit code, stdout and stderr.
func runCLI(t testing.TB, stdin string, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(context.Background(), args, stdio{in: strings.NewReader(stdin), out: &out, err: &errb})
	return code, out.String(), errb.String()
}

func writeTemp(t testing.TB, name string, data []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestValidateValidFixturesExitZero(t *testing.T) {
	for _, name := range []string{fixtures.ValidFrames, fixtures.CompactFrame,
		fixtures.ReferenceFrame, fixtures.ReferenceVectors, fixtures.StdioSession} {
		p := writeTemp(t, name, fixtures.File(name))
		code, out, errs := runCLI(t, "", "validate", p)
		if code != exitOK || !strings.Contains(out, "valid") || errs != "" {
			t.Errorf("%s: exit %d\n%s%s", name, code, out, errs)
		}
	}
	// The README's main job runs on the in-repo copy.
	code, _, errs := runCLI(t, "", "validate", "../../internal/fixtures/cgp/context-frame.valid.json")
	if code != exitOK {
		t.Errorf("in-repo fixture: exit %d %s", code, errs)
	}
}

func TestValidateBlankCitationLabelNamesF3(t *testing.T) {
	doc := strings.Replace(string(fixtures.File(fixtures.ValidFrames)), `"citation_label": "retry policy.md L10-18"`, `"citation_label": "  "`, 1)
	code, out, _ := runCLI(t, "", "validate", writeTemp(t, "f.json", []byte(doc)))
	if code != exitFailed || !strings.Contains(out, "line 1: F3 cases[0].source.citation_label: citation_label is blank") {
		t.Fatalf("exit %d\n%s", code, out)
	}
}

func TestValidateWrongTokenCostNamesB3(t *testing.T) {
	f := `{"id":"f","kind":"doc","title":"t","content":"abcdefghi","score":0.5,"token_cost":2,"citation_label":"c"}`
	code, out, _ := runCLI(t, f+"\n", "validate", "-")
	if code != exitFailed || !strings.Contains(out, "line 1: B3 token_cost: token_cost 2 is not ceil(9 content bytes / 4) = 3") {
		t.Fatalf("exit %d\n%s", code, out)
	}
}

func TestValidateOffersFromStdin(t *testing.T) {
	in := `{"provider":"alpha","frame":{"id":"a","kind":"doc","title":"t","content":"abcd","score":0.5,"token_cost":1,"citation_label":"c"}}
{"provider":"beta","frame":{"id":"b","kind":"doc","title":"t","content":"abcd","score":1.5,"token_cost":1,"citation_label":"c"}}
`
	code, out, _ := runCLI(t, in, "validate")
	if code != exitFailed || !strings.Contains(out, "line 2: F1 frame.score:") || strings.Contains(out, "line 1:") {
		t.Fatalf("exit %d\n%s", code, out)
	}
}

func TestValidateJSONReport(t *testing.T) {
	in := `{"type":"handshake","protocol_version":"contextgraph/2.0"}
not json
`
	code, out, _ := runCLI(t, in, "validate", "--json", "-")
	if code != exitUsage {
		t.Fatalf("exit %d", code)
	}
	var rep struct {
		Input      string `json:"input"`
		Valid      bool   `json:"valid"`
		Items      int    `json:"items"`
		Violations []struct {
			Line                int
			Rule, Field, Detail string
		} `json:"violations"`
		Errors []struct {
			Line  int    `json:"line"`
			Error string `json:"error"`
		} `json:"errors"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if rep.Input != "-" || rep.Valid || rep.Items != 1 || len(rep.Violations) != 1 || rep.Violations[0].Rule != "H1" ||
		rep.Violations[0].Line != 1 || rep.Violations[0].Field != "protocol_version" || len(rep.Errors) != 1 || rep.Errors[0].Line != 2 {
		t.Fatalf("report %+v", rep)
	}
	code, out, _ = runCLI(t, `{"type":"shutdown"}`, "validate", "--json")
	if code != exitOK || !strings.Contains(out, `"valid": true`) || !strings.Contains(out, `"violations": []`) {
		t.Fatalf("exit %d %s", code, out)
	}
}

func TestValidateSessionFlag(t *testing.T) {
	in := `{"type":"query","query":{"goal":"g","max_frames":1,"max_tokens":1}}
{"type":"frames","result":{"frames":[{"id":"a","kind":"doc","title":"t","content":"abcdefgh","score":0.5,"token_cost":2,"citation_label":"c"}],"truncated":false}}
`
	if code, out, _ := runCLI(t, in, "validate"); code != exitOK {
		t.Fatalf("without --session: exit %d %s", code, out)
	}
	code, out, _ := runCLI(t, in, "validate", "--session")
	if code != exitFailed || !strings.Contains(out, "line 2: B1 result.frames:") {
		t.Fatalf("with --session: exit %d %s", code, out)
	}
}

func TestValidateUsageAndUnreadableInput(t *testing.T) {
	cases := []struct {
		stdin string
		args  []string
		code  int
	}{
		{"", []string{"validate", "--help"}, exitOK},
		{"", []string{"help", "validate"}, exitOK},
		{"", []string{"validate", "--frobnicate"}, exitUsage},
		{"", []string{"validate", "a", "b"}, exitUsage},
		{"", []string{"validate", filepath.Join(t.TempDir(), "missing.json")}, exitUsage},
		{"{\"id\":", []string{"validate"}, exitUsage},
		{"\xff\xfe\n", []string{"validate"}, exitUsage},
		{"[1, 2]", []string{"validate"}, exitUsage},
		{"", []string{"validate"}, exitFailed}, // nothing to validate
	}
	for _, tc := range cases {
		code, out, errs := runCLI(t, tc.stdin, tc.args...)
		if code != tc.code {
			t.Errorf("%q %v: exit %d, want %d\n%s%s", tc.stdin, tc.args, code, tc.code, out, errs)
		}
		if tc.code == exitUsage && errs == "" {
			t.Errorf("%v: no message on stderr", tc.args)
		}
	}
}

func TestValidateArrayAndMultiLineDocument(t *testing.T) {
	doc := "[\n  {\"id\":\"a\",\"kind\":\"doc\",\"title\":\"t\",\"score\":0.5,\"token_cost\":0,\"citation_label\":\"c\"},\n" +
		"  {\"type\":\"error\",\"message\":\" \"}\n]\n"
	code, out, _ := runCLI(t, doc, "validate")
	if code != exitFailed || !strings.Contains(out, "line 1: schema [1].message: error message is blank") || !strings.Contains(out, "in 2 items") {
		t.Fatalf("exit %d\n%s", code, out)
	}
}

// TestValidateSaysWhenNothingWasChecked: input holding no frame, envelope,
// offer or query exits 1 with "nothing to validate" on stderr, in text and
// JSON alike, and never prints "valid".
func TestValidateSaysWhenNothingWasChecked(t *testing.T) {
	for _, in := range []string{"", "\n\n", "[]", "{}", `{"cases":[]}`, "[[], {}]",
		`{"vectors":[{"name":"unicode","input_json":"{}","expected_normalized":{"1":"One"}}]}`} {
		for _, args := range [][]string{{"validate"}, {"validate", "--json"}} {
			code, out, errs := runCLI(t, in, args...)
			if code != exitFailed || !strings.Contains(errs, "nothing to validate") {
				t.Errorf("%q %v: exit %d, stderr %q; want 1 and \"nothing to validate\"", in, args, code, errs)
			}
			if strings.Contains(out, ": valid") || strings.Contains(out, `"valid": true`) {
				t.Errorf("%q %v: stdout claims valid: %s", in, args, out)
			}
		}
	}
}

// TestValidateReadsQueriesAndUpstreamFixtureShapes: a bare query object, the
// upstream invalid-fixture pair {"missing": FRAME, "blank": FRAME}, and a
// {"cases": [...]} document whose sources are queries or whose cases carry
// "input" are each read and checked, not refused as a frame without an id.
func TestValidateReadsQueriesAndUpstreamFixtureShapes(t *testing.T) {
	const q = `{"goal":"find retry guidance","max_frames":8,"max_tokens":2048}`
	const noLabel = `{"id":"m","kind":"snippet","title":"t","content":"abcd","score":0.5,"token_cost":1}`
	const blankLabel = `{"id":"b","kind":"snippet","title":"t","content":"abcd","score":0.5,"token_cost":1,"citation_label":" \t "}`
	for _, tc := range []struct {
		name, in string
		code     int
		want     []string // stdout lines that must appear
	}{
		{"bare query", q, exitOK, []string{"-: valid (1 item)"}},
		{"bare query, bad pin", `{"goal":"g","max_frames":1,"max_tokens":1,"as_of":"2026-07-01T00:00:00+00:00"}`, exitFailed,
			[]string{"line 1: F4 as_of:"}},
		{"missing/blank pair", "{\n\"missing\": " + noLabel + ",\n\"blank\": " + blankLabel + "\n}", exitFailed,
			[]string{"line 1: F3 missing.citation_label:", "line 1: F3 blank.citation_label:", "2 violations in 2 items"}},
		{"query cases", `{"cases":[{"name":"minimal_query","source":` + q + `,"expected_normalized":` + q + `}]}`, exitOK,
			[]string{"-: valid (2 items)"}},
		{"strict cases with input", `{"cases":[{"name":"n","target":"query","input":` + q + `,"unknown_path":"query.x"},` +
			`{"name":"f","target":"frame","input":` + noLabel + `}]}`, exitFailed, []string{"line 1: F3 cases[1].input.citation_label:"}},
	} {
		code, out, errs := runCLI(t, tc.in, "validate")
		if code != tc.code {
			t.Errorf("%s: exit %d, want %d\n%s%s", tc.name, code, tc.code, out, errs)
		}
		for _, w := range tc.want {
			if !strings.Contains(out, w) {
				t.Errorf("%s: stdout lacks %q:\n%s", tc.name, w, out)
			}
		}
	}
}
