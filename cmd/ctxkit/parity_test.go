package main

import (
	"encoding/json"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// elapsed matches the wall-clock figures of a query report, the one part
// of its output that differs from run to run wherever it runs.
var elapsed = regexp.MustCompile(`("(?:compose_)?elapsed_ns": )\d+|\b\d+(\.\d+)?(ns|µs|ms|s)\b|"as_of": "[^"]*"`)

// localOnlyReport drops what only a local query with DIR arguments prints:
// the report of the index it built (a service indexes at its start).
var localOnlyReport = regexp.MustCompile(`(?s)^.*?\n# fan-out`)

func normalizeQuery(out string, stderr bool) string {
	if stderr && strings.Contains(out, "# fan-out") {
		out = localOnlyReport.ReplaceAllString(out, "# fan-out")
	}
	if !stderr && strings.HasPrefix(out, "{") {
		var doc map[string]json.RawMessage
		if json.Unmarshal([]byte(out), &doc) == nil {
			delete(doc, "index")
			b, _ := json.MarshalIndent(doc, "", "  ")
			out = string(b)
		}
	}
	return elapsed.ReplaceAllString(out, "${1}T")
}

// TestLocalRemoteParity runs every flag of compose, assess and query in
// this process and on an in-process service, and requires the same
// standard output, standard error and exit code. Flags a service cannot
// honour (they configure the local host) are refused by name with --remote.
func TestLocalRemoteParity(t *testing.T) {
	dir := docsDir(t)
	url := filesService(t, dir, "")

	vec := filepath.Join("testdata", "compose", "worked-vector.ndjson")
	bad := filepath.Join("testdata", "compose", "one-invalid.ndjson")
	_, prev, _ := runCLI(t, "", "compose", "--budget", "200", "--placement", "stable-first", "--format", "json", vec)
	previous := writeTemp(t, "previous.json", []byte(prev))
	req := filepath.Join("..", "..", "docs", "examples", "anthropic-request.json")

	type tc struct {
		stdin string
		args  []string
	}
	cases := []tc{
		{"", []string{"compose", "--budget", "200", vec}},
		{"", []string{"compose", "--budget", "5", vec}},
		{"", []string{"compose", vec}},
		{"", []string{"compose", "--budget", "-1", vec}},
		{"", []string{"compose", "--budget", "200", "missing.ndjson"}},
		{"", []string{"compose", "--budget", "200", "--bogus", vec}},
		{"", []string{"compose", "--budget", "200", bad}},
		{"", []string{"compose", "--budget", "200", "--skip-invalid", bad}},
		{"", []string{"compose", "--budget", "200", "--placement", "stable-first", "--previous", previous, vec}},
		{"", []string{"compose", "--budget", "200", "--placement", "nope", vec}},
		{"", []string{"compose", "--budget", "200", "--previous", "missing.json", vec}},
		{"", []string{"compose", "--budget", "200", "--min-prefix", "2048", vec}},
		{"", []string{"compose", "--budget", "200", "--min-prefix", "0", vec}},
		{"", []string{"compose", "--budget", "200", "--sticky-margin", "0.3", "--previous", previous, vec}},
		{"", []string{"compose", "--budget", "200", "--sticky-margin", "-1", vec}},
		{"", []string{"compose", "--help"}},
	}
	for _, p := range []string{"edges-by-rank", "canonical", "stable-first"} {
		cases = append(cases, tc{"", []string{"compose", "--budget", "120", "--placement", p, vec}})
	}
	for _, st := range []string{"score-descending", "round-robin-by-rank", "per-provider-quota", "per-provider-quota:0", "per-provider-quota:2", "per-provider-quota:x", "nope"} {
		for _, pk := range []string{"first-fit", "stop-at-first-miss"} {
			cases = append(cases, tc{"", []string{"compose", "--budget", "150", "--strategy", st, "--packer", pk, vec}})
		}
	}
	cases = append(cases, tc{"", []string{"compose", "--budget", "150", "--packer", "nope", vec}})
	for _, args := range [][]string{
		{req}, {"--model", "gpt-4o", req}, {"--wire", "openai", req}, {"--wire", "nope", req}, {"--window", "50000", req},
		{"--window", "-1", req}, {"--image-tokens", "100", "--page-tokens", "200", req}, {"--tool-result-bytes", "4096", req},
		{"missing.json"}, {req, req}, {"--format", "yaml", req},
	} {
		cases = append(cases, tc{"", append([]string{"assess"}, args...)})
	}
	cases = append(cases, tc{`{"model":"claude-sonnet-4-5","messages":[]}`, []string{"assess", "-"}}, tc{"not json", []string{"assess"}})
	for _, args := range [][]string{
		{"--goal", "retry"}, {"--goal", "retry", "--budget", "30"}, {"--goal", "retry", "--kind", "nosuch"},
		{"--goal", "retry", "--kind", "doc", "--max-frames", "1"}, {"--goal", "retry", "--query-text", "backs off"},
		{"--goal", "retry", "--strategy", "round-robin-by-rank", "--packer", "stop-at-first-miss"},
		{"--goal", "retry", "--strategy", "per-provider-quota:1"}, {"--goal", ""}, {"--goal", "retry", "--kind", "Bad!"},
		{"--goal", "retry", "--budget", "0"}, {"--goal", "retry", "--strategy", "nope"},
	} {
		cases = append(cases, tc{"", append([]string{"query"}, args...)})
	}
	t.Logf("%d cases, each in text and json", len(cases))
	for _, c := range cases {
		for _, format := range []string{"text", "json"} {
			args := c.args
			if c.args[0] != "compose" || args[1] != "--help" {
				args = append(append([]string(nil), args...), "--format", format)
			}
			if len(c.args) > 1 && c.args[len(c.args)-2] == "--format" {
				args = c.args
			}
			local := args
			if args[0] == "query" {
				local = append(append([]string(nil), args...), dir)
			}
			lc, lout, lerr := runCLI(t, c.stdin, local...)
			rc, rout, rerr := runCLI(t, c.stdin, append(append([]string(nil), args...), "--remote", url)...)
			if args[0] == "query" {
				lout, rout = normalizeQuery(lout, false), normalizeQuery(rout, false)
				lerr, rerr = normalizeQuery(lerr, true), normalizeQuery(rerr, true)
			}
			if lc != rc || lout != rout || lerr != rerr {
				t.Errorf("%q:\nlocal  exit %d\n%s\n%s\nremote exit %d\n%s\n%s", args, lc, lout, lerr, rc, rout, rerr)
			}
		}
	}
}

// Query flags that configure the local host are refused by name with
// --remote, not parsed as unknown flags.
func TestRemoteQueryRefusesLocalFlagsByName(t *testing.T) {
	for _, args := range [][]string{
		{"--policy", "drop-leg"}, {"--consent-store", "x"}, {"--store", "x"}, {"--trust-store", "x"},
		{"--timeout", "1s"}, {"--provider", "a=stdio:x"}, {"--bearer-env", "a=B"}, {"--mcp-tool", "a=b"},
	} {
		all := append([]string{"query", "--goal", "g", "--remote", "http://127.0.0.1:1"}, args...)
		code, _, errs := runCLI(t, "", all...)
		if code != exitUsage || !strings.Contains(errs, args[0]+" configures the local host") {
			t.Errorf("%q: exit %d, %s", all, code, errs)
		}
	}
}
