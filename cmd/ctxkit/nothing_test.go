package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/ctxkit/ctxkit/frame"
	"github.com/ctxkit/ctxkit/server"
)

// stdioProvider returns a --provider spec for a bash child that declares
// kinds and answers one query with the frames JSON (a ContextQueryResult's
// frames array).
func stdioProvider(t *testing.T, kinds, frames string) string {
	t.Helper()
	ack := `{"type":"handshake_ack","protocol_version":"contextgraph/1.0-draft","provider":{"name":"p","version":"1","data_flow":{"reads":true,"writes":false,"egress":false}},"capabilities":{"query":{"kinds":` + kinds + `},"correlation":false,"graph":false,"verify":false,"resolve":false}}`
	res := `{"type":"frames","result":{"frames":` + frames + `,"truncated":false}}`
	return "stdio:bash " + writeScript(t, "read h; printf '%s\\n' '"+ack+"'; read q; printf '%s\\n' '"+res+"'; read s")
}

func docsDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "retry.txt"), []byte("the retry policy backs off exponentially ok\n"), 0o644)
	return dir
}

// A --kind nobody serves used to print an empty prompt and exit 0; a
// --kind that is no kind name was sent as is.
func TestQueryKindNobodyServesIsRefused(t *testing.T) {
	dir := docsDir(t)
	code, out, errs := runCLI(t, "", "query", "--goal", "retry", "--kind", "nosuch", dir)
	if code != exitFailed || !strings.Contains(errs, "no provider serves kind nosuch (files declares doc, snippet)") {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errs)
	}
	if !strings.Contains(errs, "kinds_not_served") {
		t.Errorf("the skipped provider is not in the fan-out report:\n%s", errs)
	}
	for _, k := range []string{"Bad Kind!", " ", "doc snippet", "1doc"} {
		code, _, errs := runCLI(t, "", "query", "--goal", "retry", "--kind", k, dir)
		if code != exitUsage || !strings.Contains(errs, "--kind") {
			t.Errorf("--kind %q: exit %d\n%s", k, code, errs)
		}
	}
	if code, _, errs := runCLI(t, "", "query", "--goal", "retry", "--kind", "Doc", dir); code != exitUsage || !strings.Contains(errs, `did you mean "doc"`) {
		t.Errorf("--kind Doc: exit %d\n%s", code, errs)
	}
	// A vendor kind is a kind name; refused only because nobody serves it.
	if code, _, _ := runCLI(t, "", "query", "--goal", "retry", "--kind", "acme:ticket", dir); code != exitFailed {
		t.Errorf("--kind acme:ticket: exit %d", code)
	}
}

// A provider that serves none of the asked kinds is listed with that
// reason, and does not fail a query another provider answers.
func TestQuerySkippedProviderIsReported(t *testing.T) {
	dir := docsDir(t)
	sym := stdioProvider(t, `["symbol"]`, `[]`)
	code, out, errs := runCLI(t, "", "query", "--goal", "retry", "--kind", "doc", "--provider", "syms="+sym, dir)
	if code != exitOK || !strings.Contains(out, "backs off") {
		t.Fatalf("exit %d\n%s\n%s", code, out, errs)
	}
	if !strings.Contains(errs, "syms             kinds_not_served") || !strings.Contains(errs, "skipped: not queried: the query asks for kinds [doc], the provider declares [symbol]") {
		t.Errorf("fan-out report:\n%s", errs)
	}
}

// refused=N counts frames: one frame breaking two rules is one refusal
// (with both rules listed), not two.
func TestQueryRefusedCountsFrames(t *testing.T) {
	bad := `[{"id":"s1","kind":"symbol","title":"s","content":"abcd","score":1.5,"token_cost":1,"citation_label":"s1"},` +
		`{"id":"d1","kind":"doc","title":"d","content":"good evidence","score":0.5,"token_cost":4,"citation_label":"d1"}]`
	spec := stdioProvider(t, `["doc","symbol"]`, bad)
	code, out, errs := runCLI(t, "", "query", "--goal", "g", "--kind", "doc", "--provider", "p="+spec)
	if code != exitFailed || !strings.Contains(out, "good evidence") {
		t.Fatalf("exit %d\n%s\n%s", code, out, errs)
	}
	if !strings.Contains(errs, " accepted=1 refused=1 ") {
		t.Errorf("refused count is not one frame:\n%s", errs)
	}
	if !strings.Contains(errs, "refused p/s1: Q1 ") || !strings.Contains(errs, "refused p/s1: F1 ") {
		t.Errorf("the two rules of the refused frame are not both listed:\n%s", errs)
	}
}

func TestQueryBudgetLimitIsNamed(t *testing.T) {
	code, _, errs := runCLI(t, "", "query", "--goal", "g", "--budget", "2000000000", docsDir(t))
	if code != exitUsage || !strings.Contains(errs, "1073741824") {
		t.Errorf("exit %d: %s", code, errs)
	}
	code, _, errs = runCLI(t, "", "query", "--goal", "g", "--max-frames", "100000", docsDir(t))
	if code != exitUsage || !strings.Contains(errs, "65536") {
		t.Errorf("exit %d: %s", code, errs)
	}
}

// The case: an 11-token frame renders at 33 tokens, so --budget 30
// cannot hold it. The query used to print an empty prompt and exit 0; it
// now says why nothing was composed and exits 1.
func TestQueryNothingComposedIsSaid(t *testing.T) {
	dir := docsDir(t)
	for _, format := range []string{"text", "json"} {
		code, _, errs := runCLI(t, "", "query", "--goal", "retry", "--budget", "30", "--format", format, dir)
		if code != exitFailed || !strings.Contains(errs, "query: nothing composed: ") || !strings.Contains(errs, "raise --budget") {
			t.Errorf("%s: exit %d\n%s", format, code, errs)
		}
	}
	code, _, errs := runCLI(t, "", "query", "--goal", "zebra unicorn", dir)
	if code != exitFailed || !strings.Contains(errs, "query: nothing composed: no provider returned a frame") {
		t.Errorf("no match: exit %d\n%s", code, errs)
	}
}

// The files provider, asked through the host, fills what it is given. The
// host used to give it the whole share as max_tokens, so the fences pushed
// frames over the budget it had filled; now every frame it returns fits.
func TestQueryHonestProviderFitsItsShare(t *testing.T) {
	dir := t.TempDir()
	for i := range 12 {
		var b strings.Builder
		for j := range 5 {
			fmt.Fprintf(&b, "line %d of note %d: the retry budget is shared between providers\n", j, i)
		}
		os.WriteFile(filepath.Join(dir, fmt.Sprintf("n%02d.md", i)), []byte(b.String()), 0o644)
	}
	for _, budget := range []string{"300", "800", "2000"} {
		code, _, errs := runCLI(t, "", "query", "--goal", "retry budget providers", "--budget", budget, dir)
		if code != exitOK || strings.Contains(errs, "over_budget") || !strings.Contains(errs, "included verifiable") {
			t.Errorf("--budget %s: exit %d\n%s", budget, code, errs)
		}
	}
}

func TestComposeNothingComposedIsSaid(t *testing.T) {
	vec := filepath.Join("testdata", "compose", "worked-vector.ndjson")
	code, _, errs := runCLI(t, "", "compose", "--budget", "5", vec)
	if code != exitFailed || !strings.Contains(errs, "nothing composed: all 4 frame(s) excluded (duplicate=1 over_budget=3)") {
		t.Errorf("budget 5: exit %d\n%s", code, errs)
	}
	for _, in := range []string{"", "[]", "\n\n"} {
		code, _, errs := runCLI(t, in, "compose", "--budget", "100", "-")
		if code != exitFailed || !strings.Contains(errs, "nothing to compose") {
			t.Errorf("input %q: exit %d\n%s", in, code, errs)
		}
	}
	// Only a reference frame: nothing to render, and the audit says why.
	ref := `{"provider":"p","frame":{"id":"r","kind":"doc","title":"r","representation":"reference","content_ref":{"provider_id":"p","uri":"cgp://p/r"},"canonical_content_hash":"sha256:2ed05eae1a65ab65f77f6246aa7bc35c7b939bbad8c5c116c880ba8cbd0732f5","score":0.5,"token_cost":0,"citation_label":"r"}}`
	code, out, errs := runCLI(t, ref, "compose", "--budget", "100", "-")
	if code != exitFailed || strings.Contains(out, `id="r"`) || !strings.Contains(errs, "excluded unresolved_reference p/r") {
		t.Errorf("reference frame: exit %d\n%s\n%s", code, out, errs)
	}
}

// With --remote the same refusals hold: the service's answer is read for
// skipped legs and an empty composition, and said as the local command says it.
func TestRemoteNothingComposedIsSaid(t *testing.T) {
	docs := docsDir(t)
	cfg, err := server.ParseConfig([]byte(`{"providers":[{"id":"files","files":` + jsonString(docs) + `}]}`))
	if err != nil {
		t.Fatal(err)
	}
	h, err := cfg.NewHost(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close(context.Background())
	url := remoteServer(t, &server.Options{Query: h})
	code, _, errs := runCLI(t, "", "query", "--goal", "retry", "--kind", "nosuch", "--remote", url)
	if code != exitFailed || !strings.Contains(errs, "kinds_not_served") || !strings.Contains(errs, "query: no provider serves kind nosuch") {
		t.Errorf("--kind nosuch: exit %d\n%s", code, errs)
	}
	if code, _, errs := runCLI(t, "", "query", "--goal", "retry", "--kind", "Bad!", "--remote", url); code != exitUsage {
		t.Errorf("--kind Bad!: exit %d\n%s", code, errs)
	}
	if code, _, errs := runCLI(t, "", "query", "--goal", "retry", "--budget", "30", "--remote", url); code != exitFailed || !strings.Contains(errs, "share_too_small") {
		t.Errorf("--budget 30: exit %d\n%s", code, errs)
	}
	if code, _, _ := runCLI(t, "", "query", "--goal", "retry", "--kind", "doc", "--remote", url); code != exitOK {
		t.Errorf("--kind doc: exit %d", code)
	}
	vec := filepath.Join("testdata", "compose", "worked-vector.ndjson")
	for _, format := range []string{"text", "json"} {
		code, _, errs = runCLI(t, "", "compose", "--budget", "5", "--format", format, vec, "--remote", url)
		if code != exitFailed || !strings.Contains(errs, "nothing composed: all 4 frame(s) excluded (duplicate=1 over_budget=3)") {
			t.Errorf("compose --budget 5 (%s): exit %d\n%s", format, code, errs)
		}
	}
}

// Local and remote compose say the same when nothing is composed.
func TestRemoteComposeEmptyMatchesLocal(t *testing.T) {
	url := remoteServer(t, nil)
	vec := filepath.Join("testdata", "compose", "worked-vector.ndjson")
	lc, lout, lerr := runCLI(t, "", "compose", "--budget", "5", vec)
	rc, rout, rerr := runCLI(t, "", "compose", "--budget", "5", vec, "--remote", url)
	if lc != exitFailed || lc != rc || lout != rout || lerr != rerr {
		t.Errorf("local %d %q\nremote %d %q", lc, lerr, rc, rerr)
	}
}

// checkKindName accepts exactly the kind-name grammar, and every base kind.
func FuzzCheckKindName(f *testing.F) {
	for _, s := range []string{"doc", "snippet", "acme:ticket", "x-y.z_1", "Doc", "", " ", "1doc", "doc ", "dóc", strings.Repeat("a", 65)} {
		f.Add(s)
	}
	grammar := regexp.MustCompile(`^[a-z][a-z0-9_.:-]{0,63}$`)
	f.Fuzz(func(t *testing.T, k string) {
		msg := checkKindName(k)
		if (msg == "") != grammar.MatchString(k) {
			t.Fatalf("checkKindName(%q) = %q, grammar says %v", k, msg, grammar.MatchString(k))
		}
		if msg != "" && !strings.Contains(msg, "--kind") {
			t.Fatalf("message does not name the flag: %q", msg)
		}
	})
}

func TestBaseKindsAreKindNames(t *testing.T) {
	for _, k := range frame.BaseKinds() {
		if msg := checkKindName(string(k)); msg != "" {
			t.Errorf("%s: %s", k, msg)
		}
	}
}

// A provider whose every frame the audit refuses did return frames: the
// message says the audit refused them, not that nothing was found.
func TestQueryAllRefusedIsSaid(t *testing.T) {
	bad := `[{"id":"s1","kind":"doc","title":"s","content":"abcd","score":1.5,"token_cost":1,"citation_label":"s1"}]`
	code, _, errs := runCLI(t, "", "query", "--goal", "g", "--provider", "p="+stdioProvider(t, `["doc"]`, bad))
	if code != exitFailed || !strings.Contains(errs, "query: nothing composed: the audit refused every frame the providers returned (1 frame(s)") {
		t.Errorf("exit %d\n%s", code, errs)
	}
}
