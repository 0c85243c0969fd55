package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestQueryDocs(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "split.md"), []byte("# Budget split\n\nThe global budget is split equally between providers.\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "other.md"), []byte("# Other\n\nNothing about money here.\n"), 0o644)
	code, out, errs := runCLI(t, "", "query", "--goal", "how is the budget split between providers", "--budget", "1500", dir)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if !strings.Contains(out, `<frame provider="files" id="split.md#L1-3" kind="doc"`) || !strings.Contains(out, "split equally") {
		t.Errorf("prompt:\n%s", out)
	}
	if !strings.Contains(errs, "files ") || !strings.Contains(errs, "included") || !strings.Contains(errs, "budget=1500") {
		t.Errorf("audit:\n%s", errs)
	}
	code, out, _ = runCLI(t, "", "query", "--goal", "budget", "--format", "json", dir)
	if code != exitOK || !strings.Contains(out, `"outcomes"`) || !strings.Contains(out, `"usage"`) {
		t.Errorf("json exit %d:\n%s", code, out)
	}
	for _, bad := range [][]string{{"query", dir}, {"query", "--goal", "g"}, {"query", "--goal", "g", "--budget", "0", dir}, {"query", "--goal", "g", filepath.Join(dir, "missing")},
		{"query", "--goal", "g", "--provider", "x=ftp://h"}, {"query", "--goal", "g", "--provider", "x=http://example.com/"}} {
		if code, _, _ := runCLI(t, "", bad...); code != exitUsage {
			t.Errorf("%v: exit %d, want 2", bad, code)
		}
	}
}

func TestQueryConsentFlow(t *testing.T) {
	store := filepath.Join(t.TempDir(), "consent.ndjson")
	ack := `{"type":"handshake_ack","protocol_version":"contextgraph/1.0-draft","provider":{"name":"cloud","version":"1","data_flow":{"reads":true,"writes":false,"egress":true,"egress_scopes":["third-party-index"]}},"capabilities":{"query":{"kinds":[]},"correlation":false,"graph":false,"verify":false,"resolve":false}}`
	frames := `{"type":"frames","result":{"frames":[{"id":"c1","kind":"doc","title":"cloud","content":"from the cloud","score":0.5,"token_cost":4,"citation_label":"c1"}],"truncated":false}}`
	script := "stdio:bash " + writeScript(t, "read h; printf '%s\\n' '"+ack+"'; read q; printf '%s\\n' '"+frames+"'; read s")
	code, _, errs := runCLI(t, "", "query", "--goal", "g", "--consent-store", store, "--provider", "cloud="+script)
	if code != exitFailed || !strings.Contains(errs, "ctxkit consent grant cloud --scope third-party-index") {
		t.Fatalf("without consent: exit %d\n%s", code, errs)
	}
	if code, _, errs := runCLI(t, "", "consent", "grant", "cloud", "--scope", "third-party-index", "--store", store); code != exitUsage {
		t.Errorf("grant without grantor: %d %s", code, errs)
	}
	endpoint := strings.TrimPrefix(script, "stdio:")
	if !strings.Contains(errs, "--endpoint '"+endpoint+"' --provider-name cloud") {
		t.Errorf("the refusal does not name the endpoint and name to grant for:\n%s", errs)
	}
	if code, out, errs := runCLI(t, "", "consent", "--store", store, "grant", "cloud", "--scope", "third-party-index", "--grantor", "ada",
		"--endpoint", endpoint, "--provider-name", "cloud"); code != exitOK {
		t.Fatalf("grant: %d %s %s", code, out, errs)
	}
	code, out, errs := runCLI(t, "", "query", "--goal", "g", "--consent-store", store, "--provider", "cloud="+script)
	if code != exitOK || !strings.Contains(out, "from the cloud") {
		t.Fatalf("with consent: exit %d\n%s\n%s", code, out, errs)
	}
	if code, out, _ := runCLI(t, "", "consent", "list", "--store", store); code != exitOK || !strings.Contains(out, "third-party-index") {
		t.Errorf("list: %s", out)
	}
	if code, _, _ := runCLI(t, "", "consent", "revoke", "cloud", "--store", store); code != exitOK {
		t.Errorf("revoke failed")
	}
	if code, _, _ := runCLI(t, "", "consent", "revoke", "cloud", "--store", store); code != exitFailed {
		t.Errorf("second revoke should find nothing")
	}
	if code, out, _ := runCLI(t, "", "consent", "list", "--store", store); code != exitOK || !strings.Contains(out, "no consent in force") {
		t.Errorf("list after revoke: %q", out)
	}
	if code, out, _ := runCLI(t, "", "consent", "list", "--json", "--store", store); code != exitOK || strings.Contains(out, "null") {
		t.Errorf("list --json after revoke: %q", out)
	}
	if code, _, _ := runCLI(t, "", "query", "--goal", "g", "--consent-store", store, "--provider", "cloud="+script); code != exitFailed {
		t.Errorf("query after revoke succeeded")
	}
}

func writeScript(t *testing.T, body string) string {
	p := filepath.Join(t.TempDir(), "provider.sh")
	if err := os.WriteFile(p, []byte(body+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestProviderFilesStdio(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "a.md"), []byte("# Retry\n\nRetries back off.\n"), 0o644)
	in := `{"type":"handshake","protocol_version":"contextgraph/1.0-draft"}` + "\n" +
		`{"type":"query","id":"q1","query":{"goal":"retry","max_frames":2,"max_tokens":100}}` + "\n" +
		`{"type":"shutdown"}` + "\n"
	var out, errb strings.Builder
	code := run(context.Background(), []string{"provider", "files", dir}, stdio{in: strings.NewReader(in), out: &out, err: &errb})
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if code != exitOK || len(lines) != 2 || !strings.HasPrefix(lines[0], `{"type":"handshake_ack"`) ||
		!strings.HasPrefix(lines[1], `{"type":"frames","id":"q1"`) || !strings.Contains(lines[1], `"citation_label":"a.md:1-3"`) {
		t.Fatalf("exit %d\n%s\n%s", code, out.String(), errb.String())
	}
	if code, _, _ := runCLI(t, "provider", "files"); code != exitUsage {
		t.Errorf("missing DIR: exit %d", code)
	}
	if code, _, _ := runCLI(t, "provider", "nope", dir); code != exitUsage {
		t.Errorf("unknown provider: exit %d", code)
	}
}

// The legacy (scope-less) consent keeps who gave it, as a receipt does,
// and a revoke that finds nothing names the scope it looked for.
func TestConsentLegacyKeepsGrantor(t *testing.T) {
	store := filepath.Join(t.TempDir(), "consent.ndjson")
	grant := []string{"consent", "grant", "old", "--store", store, "--grantor", "ada", "--policy", "--endpoint", "https://old.example/cgp", "--provider-name", "old"}
	if code, out, errs := runCLI(t, "", grant...); code != exitOK || !strings.Contains(out, "(by policy ada)") {
		t.Fatalf("legacy grant: exit %d %q %q", code, out, errs)
	}
	if code, out, _ := runCLI(t, "", "consent", "list", "--store", store); code != exitOK || !strings.Contains(out, "by policy ada") {
		t.Errorf("list does not say who consented: %q", out)
	}
	if code, out, _ := runCLI(t, "", "consent", "list", "--json", "--store", store); code != exitOK || !strings.Contains(out, `"grantor": {`) {
		t.Errorf("list --json has no grantor: %q", out)
	}
	if code, _, errs := runCLI(t, "", "consent", "revoke", "old", "--scope", "org-tenant", "--store", store); code != exitFailed || !strings.Contains(errs, "nothing in force for old scope org-tenant") {
		t.Errorf("scoped revoke of nothing: exit %d %q", code, errs)
	}
}

// With --format json nothing is reported on stderr but the reason, so the
// reason points at the JSON's fanout rather than at a report "above".
func TestQueryJSONNothingComposedPointsAtFanout(t *testing.T) {
	script := "stdio:bash " + writeScript(t, "exit 3")
	code, _, errs := runCLI(t, "", "query", "--goal", "g", "--format", "json", "--provider", "dead="+script)
	if code != exitFailed || !strings.Contains(errs, "see fanout in the JSON on stdout") || strings.Contains(errs, "above") {
		t.Errorf("exit %d, stderr %q", code, errs)
	}
}

// --mcp-start-timeout bounds a local MCP server's start-up: one that never
// answers initialize fails its leg after the allowance given, not after the
// default two minutes, and the other providers answer.
func TestMCPStartTimeoutFlag(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "a.md"), []byte("# Budget\n\nThe budget is split equally between providers.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	code, _, errs := runCLI(t, "", "query", "--goal", "budget", "--no-index", "--mcp-start-timeout", "1s",
		"--provider", "mute=mcp:stdio:sleep 60", dir)
	if took := time.Since(start); code != exitFailed || took > 30*time.Second || !strings.Contains(errs, "start-up allowance of 1s") {
		t.Fatalf("exit %d after %v:\n%s", code, took, errs)
	}
	if !strings.Contains(errs, "included") {
		t.Errorf("the files provider's frames were not composed:\n%s", errs)
	}
	for _, args := range [][]string{
		{"query", "--goal", "g", "--mcp-start-timeout", "-1s", dir},
		{"mcp", "--mcp-start-timeout", "-1s", dir},
		{"query", "--goal", "g", "--remote", "http://127.0.0.1:1", "--mcp-start-timeout", "5s"},
	} {
		if code, _, errs := runCLI(t, "", args...); code != exitUsage || !strings.Contains(errs, "mcp-start-timeout") {
			t.Errorf("%v: exit %d, %q", args, code, errs)
		}
	}
}
