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

// filesService starts an in-process service whose one provider, "files",
// serves docs; config adds members to its configuration.
func filesService(t *testing.T, docs, config string) string {
	t.Helper()
	cfg, err := parseServeConfig([]byte(`{` + config + `"providers":[{"id":"files","files":` + jsonString(docs) + `}]}`))
	if err != nil {
		t.Fatal(err)
	}
	h, err := cfg.newHost(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close(context.Background()) })
	return remoteServer(t, &server.Options{Query: h})
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
		if lc != 0 || rc != 0 || lout != rout || lout == "" || lerr != rerr {
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
	if code, _, errs := runCLI(t, "", "compose", "--budget", "200", "testdata/compose/one-invalid.ndjson", "--remote", url); code != 1 || !strings.Contains(errs, "1 of 2 offers invalid; nothing composed") {
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

// Local and remote assess print the same bytes, in both formats, for
// bodies of every wire, with warnings, media and flags.
func TestRemoteAssessMatchesLocal(t *testing.T) {
	url := remoteServer(t, nil)
	pdf := "JVBERi0xLjQKMSAwIG9iaiA8PCAvVHlwZSAvUGFnZSA+PiBlbmRvYmoK" // "%PDF-1.4 … /Type /Page …"
	for name, tc := range map[string]struct{ body, flags string }{
		"anthropic": {`{"model":"claude-sonnet-4-5","system":"s","max_tokens":500,"messages":[{"role":"user","content":"hi"}]}`, "--window=9000"},
		"openai chat with media": {`{"model":"gpt-4o","messages":[{"role":"system","content":"be brief"},{"role":"user","content":[
			{"type":"image_url","image_url":{"url":"https://example.com/a.png","detail":"low"}},
			{"type":"file","file":{"file_data":"data:application/pdf;base64,` + pdf + `"}}]}]}`, "--tool-result-bytes=3000"},
		"gemini by file uri": {`{"contents":[{"role":"user","parts":[{"fileData":{"mimeType":"application/pdf","fileUri":"gs://b/x.pdf"}},{"text":"\u4f60\u597d"}]}]}`, "--model=gemini-2.5-pro"},
		"unknown model":      {`{"model":"mystery-1","messages":[{"role":"user","content":"hello"}]}`, "--page-tokens=100"},
	} {
		for _, format := range []string{"text", "json"} {
			args := []string{"assess", "--format", format, tc.flags, "-"}
			lc, lout, lerr := runCLI(t, tc.body, args...)
			rc, rout, rerr := runCLI(t, tc.body, append(args, "--remote", url)...)
			if lc != 0 || rc != 0 {
				t.Fatalf("%s %s: local %d %s; remote %d %s", name, format, lc, lerr, rc, rerr)
			}
			if lout != rout {
				t.Errorf("%s %s: outputs differ\nlocal:\n%s\nremote:\n%s", name, format, lout, rout)
			}
		}
	}
	// A wire that does not fit the body fails the same way on both.
	mismatch := `{"model":"gpt-4o","messages":[{"role":"system","content":"x"}]}`
	lc, _, lerr := runCLI(t, mismatch, "assess", "--wire", "gemini", "-")
	rc, _, rerr := runCLI(t, mismatch, "assess", "--wire", "gemini", "--remote", url, "-")
	if lc != 2 || rc != 2 || !strings.Contains(lerr, "wire gemini does not match") || !strings.Contains(rerr, "wire gemini does not match") {
		t.Fatalf("mismatch: local %d %q, remote %d %q", lc, lerr, rc, rerr)
	}
	if rc, _, _ := runCLI(t, "not json", "assess", "--remote", url); rc != 2 {
		t.Fatalf("non-JSON body: exit %d", rc)
	}
}

func TestRemoteQueryMatchesLocal(t *testing.T) {
	docs := writeDocs(t, map[string]string{"budget.md": "# Budget\n\nThe budget is split between providers equally.\n"})
	dir := filepath.Dir(docs)
	url := filesService(t, docs, `"consent_store":`+jsonString(filepath.Join(dir, "consent.ndjson"))+`,`)
	consent := filepath.Join(dir, "consent.ndjson")
	lc, lout, lerr := runCLI(t, "", "query", "--goal", "how is the budget split", "--budget", "500", "--consent-store", consent, docs)
	rc, rout, rerr := runCLI(t, "", "query", "--goal", "how is the budget split", "--budget", "500", "--remote", url)
	if lc != 0 || rc != 0 || lout != rout || !strings.Contains(rout, "split between providers equally") {
		t.Fatalf("local %d %q (%s)\nremote %d %q (%s)", lc, lout, lerr, rc, rout, rerr)
	}
	lc, lout, _ = runCLI(t, "", "query", "--goal", "budget", "--budget", "90", "--strategy", "per-provider-quota:2", "--packer", "stop-at-first-miss", "--consent-store", consent, docs)
	rc, rout, rerr = runCLI(t, "", "query", "--goal", "budget", "--budget", "90", "--strategy", "per-provider-quota:2", "--packer", "stop-at-first-miss", "--remote", url)
	if lc != rc || lout != rout {
		t.Fatalf("with a strategy and packer: local %d %q\nremote %d %q (%s)", lc, lout, rc, rout, rerr)
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
