package main

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/ctxkit/ctxkit/server"
)

func remoteServer(t *testing.T, opts *server.Options) string {
	t.Helper()
	ts := httptest.NewServer(server.New(opts))
	t.Cleanup(ts.Close)
	return ts.URL
}

func sameJSON(t *testing.T, a, b string) {
	t.Helper()
	var x, y any
	if err := json.Unmarshal([]byte(a), &x); err != nil {
		t.Fatalf("%v: %q", err, a)
	}
	if err := json.Unmarshal([]byte(b), &y); err != nil {
		t.Fatalf("%v: %q", err, b)
	}
	if !reflect.DeepEqual(x, y) {
		t.Fatalf("JSON differs:\n%s\n%s", a, b)
	}
}

func TestRemoteComposeMatchesLocal(t *testing.T) {
	url := remoteServer(t, nil)
	in := "testdata/compose/worked-vector.ndjson"
	for _, extra := range [][]string{nil, {"--strategy", "round-robin-by-rank", "--packer", "stop-at-first-miss"}, {"--strategy", "per-provider-quota:2"}} {
		args := append([]string{"compose", "--budget", "200", in}, extra...)
		lc, lout, lerr := runCLI(t, "", args...)
		rc, rout, rerr := runCLI(t, "", append(args, "--remote", url)...)
		if lc != 0 || rc != 0 || lout != rout || lout == "" {
			t.Fatalf("%v: local %d %q (%s)\nremote %d %q (%s)", extra, lc, lout, lerr, rc, rout, rerr)
		}
		_, ljson, _ := runCLI(t, "", append(args, "--format", "json")...)
		_, rjson, _ := runCLI(t, "", append(args, "--format=json", "--remote="+url)...)
		sameJSON(t, ljson, rjson)
	}
	// Standard input works as locally.
	data, err := os.ReadFile(in)
	if err != nil {
		t.Fatal(err)
	}
	_, lout, _ := runCLI(t, string(data), "compose", "--budget", "200", "-")
	rc, rout, _ := runCLI(t, string(data), "compose", "--remote", url, "--budget", "200")
	if rc != 0 || lout != rout {
		t.Fatalf("stdin: remote %d, differs: %q vs %q", rc, rout, lout)
	}
}

func TestRemoteComposeExitCodes(t *testing.T) {
	url := remoteServer(t, nil)
	if code, _, errs := runCLI(t, "", "compose", "--budget", "200", "testdata/compose/one-invalid.ndjson", "--remote", url); code != 1 || !strings.Contains(errs, "rule_violation") {
		t.Fatalf("invalid offer: exit %d, %q", code, errs)
	}
	if code, _, _ := runCLI(t, "", "compose", "--budget", "200", "--skip-invalid", "testdata/compose/one-invalid.ndjson", "--remote", url); code != 0 {
		t.Fatalf("--skip-invalid: exit %d", code)
	}
	for _, args := range [][]string{
		{"compose", "testdata/compose/worked-vector.ndjson", "--remote", url},                                        // no budget
		{"compose", "--budget", "9", "--strategy", "nope", "testdata/compose/worked-vector.ndjson", "--remote", url}, // 400
		{"compose", "--budget", "9", "--bogus", "--remote", url},
		{"compose", "--budget", "9", "missing.ndjson", "--remote", url},
		{"compose", "--budget", "9", "testdata/compose/worked-vector.ndjson", "--remote", "http://127.0.0.1:1"}, // nothing listens
		{"compose", "--budget", "9", "--remote"},
		{"compose", "--budget", "9", "--remote", "ftp://x"},
		{"validate", "--remote", url},
	} {
		if code, _, errs := runCLI(t, "", args...); code != 2 || errs == "" {
			t.Errorf("%v: exit %d, stderr %q; want 2 with a message", args, code, errs)
		}
	}
	if code, out, _ := runCLI(t, "", "compose", "--remote", url, "--help"); code != 0 || !strings.Contains(out, "usage: ctxkit compose") {
		t.Fatalf("--help with --remote: %d %q", code, out)
	}
}

func TestRemoteAssessMatchesLocal(t *testing.T) {
	url := remoteServer(t, nil)
	body := `{"model":"claude-sonnet-4-5","system":"s","max_tokens":500,"messages":[{"role":"user","content":"hi"}]}`
	p := filepath.Join(t.TempDir(), "req.json")
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	lc, lout, lerr := runCLI(t, "", "assess", "--format", "json", "--window", "9000", p)
	rc, rout, rerr := runCLI(t, "", "assess", "--format", "json", "--window", "9000", "--remote", url, p)
	if lc != 0 || rc != 0 {
		t.Fatalf("local %d %s; remote %d %s", lc, lerr, rc, rerr)
	}
	sameJSON(t, lout, rout)
	rc, rout, _ = runCLI(t, body, "assess", "--remote", url, "-")
	if rc != 0 || !strings.Contains(rout, "decision: fits") {
		t.Fatalf("text: %d %q", rc, rout)
	}
	if rc, _, _ := runCLI(t, "not json", "assess", "--remote", url); rc != 2 {
		t.Fatalf("non-JSON body: exit %d", rc)
	}
}

func TestRemoteQueryMatchesLocal(t *testing.T) {
	dir := t.TempDir()
	docs := filepath.Join(dir, "docs")
	if err := os.MkdirAll(docs, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(docs, "budget.md"), []byte("# Budget\n\nThe budget is split between providers equally.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := server.ParseConfig([]byte(`{"consent_store":` + jsonString(filepath.Join(dir, "consent.ndjson")) + `,"providers":[{"id":"files","files":` + jsonString(docs) + `}]}`))
	if err != nil {
		t.Fatal(err)
	}
	h, err := cfg.NewHost(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close(context.Background())
	url := remoteServer(t, &server.Options{Query: h})
	consent := filepath.Join(dir, "consent.ndjson")
	lc, lout, lerr := runCLI(t, "", "query", "--goal", "how is the budget split", "--budget", "500", "--consent-store", consent, docs)
	rc, rout, rerr := runCLI(t, "", "query", "--goal", "how is the budget split", "--budget", "500", "--remote", url)
	if lc != 0 || rc != 0 || lout != rout || !strings.Contains(rout, "split between providers equally") {
		t.Fatalf("local %d %q (%s)\nremote %d %q (%s)", lc, lout, lerr, rc, rout, rerr)
	}
	if rc, _, _ := runCLI(t, "", "query", "--goal", "g", "--remote", url, docs); rc != 2 {
		t.Fatalf("DIR with --remote: exit %d", rc)
	}
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func TestCutRemote(t *testing.T) {
	for _, tc := range []struct {
		args []string
		url  string
		rest []string
		ok   bool
	}{
		{[]string{"--budget", "3", "--remote", "http://h", "f"}, "http://h", []string{"--budget", "3", "f"}, true},
		{[]string{"-remote=http://h"}, "http://h", []string{}, true},
		{[]string{"f", "--remote"}, "", []string{"f"}, true},
		{[]string{"--", "--remote", "x"}, "", []string{"--", "--remote", "x"}, false},
		{[]string{"--remoteness", "x"}, "", []string{"--remoteness", "x"}, false},
	} {
		url, rest, ok := cutRemote(tc.args)
		if url != tc.url || ok != tc.ok || strings.Join(rest, " ") != strings.Join(tc.rest, " ") {
			t.Errorf("cutRemote(%q) = %q %q %v", tc.args, url, rest, ok)
		}
	}
}
