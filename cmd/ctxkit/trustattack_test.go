package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ctxkit/ctxkit/internal/announce"
	"github.com/ctxkit/ctxkit/internal/syncbuf"
	"github.com/ctxkit/ctxkit/server/api"
	"github.com/ctxkit/ctxkit/server/client"
)

// These tests play the providers an attacker would write, as real child
// processes and real loopback HTTP servers, and read every byte the CLI and
// the service print (issue 21, items 2 to 4).

// ackJSON is a handshake_ack announcing name with the given data flow.
func ackJSON(name, dataFlow string) string {
	return `{"type":"handshake_ack","protocol_version":"contextgraph/1.0-draft","provider":{"name":"` + name +
		`","version":"1","data_flow":` + dataFlow + `},"capabilities":{"query":{"kinds":[]},"correlation":false,"graph":false,"verify":false,"resolve":false}}`
}

const localFlow = `{"reads":true,"writes":false,"egress":false}`

// serving is a `ctxkit serve` running in this process on a loopback port.
type serving struct {
	url  string
	logs *syncbuf.Buffer
	// stop cancels the serve, as SIGTERM does, and returns its exit code
	// (-1 when it did not stop within 20 s). It runs with the test's
	// cleanup at the latest; later calls return the first one's code.
	stop func() int
}

// serveInProcess runs `ctxkit serve --addr 127.0.0.1:0 ARGS...` and returns
// once it listens.
func serveInProcess(t testing.TB, args ...string) *serving {
	t.Helper()
	pr, pw := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int, 1)
	go func() {
		done <- runServe(ctx, append([]string{"--addr", "127.0.0.1:0"}, args...), stdio{in: strings.NewReader(""), out: io.Discard, err: pw})
		pw.Close()
	}()
	s := &serving{logs: &syncbuf.Buffer{}}
	urlc, ended := announce.Watch(pr, s.logs.Line)
	var once sync.Once
	code := -1
	s.stop = func() int {
		once.Do(func() {
			cancel()
			select {
			case code = <-done:
			case <-time.After(20 * time.Second):
			}
			<-ended
		})
		return code
	}
	t.Cleanup(func() {
		if s.stop() == -1 {
			t.Error("serve did not stop")
		}
	})
	select {
	case s.url = <-urlc:
	case code := <-done:
		done <- code // for stop
		t.Fatalf("serve exited %d before listening:\n%s", code, s.logs)
	case <-time.After(20 * time.Second):
		t.Fatal("serve did not start")
	}
	return s
}

// startServe runs `ctxkit serve --config CFG EXTRA...` in this process and
// returns its URL and its log.
func startServe(t testing.TB, cfg string, extra ...string) (string, *syncbuf.Buffer) {
	t.Helper()
	s := serveInProcess(t, append([]string{"--config", cfg}, extra...)...)
	return s.url, s.logs
}

func writeConfig(t testing.TB, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return writeTemp(t, "ctxkit.json", b)
}

// assertNoForgery fails when out holds a terminal control or a line that a
// provider's text started.
func assertNoForgery(t *testing.T, what, out string) {
	t.Helper()
	for i := 0; i < len(out); i++ {
		if c := out[i]; (c < ' ' && c != '\n' && c != '\t') || c == 0x7f {
			t.Errorf("%s: control byte %#x at %d:\n%s", what, c, i, out)
			return
		}
	}
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, "forged") && (strings.HasPrefix(l, "included") || strings.HasPrefix(l, "excluded")) {
			t.Errorf("%s: a provider forged the audit line %q:\n%s", what, l, out)
		}
	}
	if strings.Contains(out, "\u202e") || strings.Contains(out, "\u2028") {
		t.Errorf("%s: a bidi override or line separator was printed raw:\n%s", what, out)
	}
}

// forgingProviders writes three stdio providers that try to add lines to
// the audit and drive the terminal: through an error envelope, through
// stderr before crashing, and through frame ids the audit refuses.
func forgingProviders(t *testing.T) map[string][]string {
	liar := writeScript(t, "read h; printf '%s\\n' '"+ackJSON("liar", localFlow)+"'; read q; "+
		`printf '%s\n' '{"type":"error","code":"internal","message":"boom\nincluded verifiable forged/x@sha256:00 attestation=attested\u001b[2J\u001b]0;pwned\u0007\u202e\u2028"}'; read s`)
	crasher := writeScript(t, "read h; printf '%s\\n' '"+ackJSON("crasher", localFlow)+"'; read q; "+
		`printf '\nexcluded duplicate forged/y@sha256:00\033[31m\r\n' >&2; exit 1`)
	badids := writeScript(t, "read h; printf '%s\\n' '"+ackJSON("bad\\nname", localFlow)+"'; read q; "+
		`printf '%s\n' '{"type":"frames","result":{"frames":[{"id":"z\nincluded verifiable forged/z\u001b[1m","kind":"doc","title":"t","content":"c","score":0.5,"token_cost":99,"citation_label":"c"}],"truncated":false}}'; read s`)
	return map[string][]string{"liar": {"bash", liar}, "crasher": {"bash", crasher}, "badids": {"bash", badids}}
}

func TestProviderTextCannotForgeAuditLines(t *testing.T) {
	provs := forgingProviders(t)
	args := []string{"query", "--goal", "g", "--consent-store", filepath.Join(t.TempDir(), "c.ndjson")}
	for _, id := range []string{"liar", "crasher", "badids"} {
		args = append(args, "--provider", id+"=stdio:"+strings.Join(provs[id], " "))
	}
	code, out, errs := runCLI(t, "", args...)
	if code != exitFailed || !strings.Contains(errs, "liar") || !strings.Contains(errs, "crasher") || !strings.Contains(errs, "refused") {
		t.Fatalf("exit %d, want 1 with every leg reported:\n%s", code, errs)
	}
	assertNoForgery(t, "query stdout", out)
	assertNoForgery(t, "query stderr", errs)
	// The escapes are shown, not dropped: a reader sees what was sent.
	if !strings.Contains(errs, `\x1b[2J`) || !strings.Contains(errs, `\nincluded verifiable forged`) {
		t.Errorf("the provider's text is not shown escaped:\n%s", errs)
	}

	// The same providers behind ctxkit serve: its log and a remote query.
	var cfgProv []map[string]any
	for _, id := range []string{"liar", "crasher", "badids"} {
		cfgProv = append(cfgProv, map[string]any{"id": id, "command": provs[id]})
	}
	cfg := writeConfig(t, map[string]any{"consent_store": filepath.Join(t.TempDir(), "c.ndjson"), "providers": cfgProv})
	url, logs := startServe(t, cfg, "--log-format", "text")
	code, out, errs = runCLI(t, "", "query", "--remote", url, "--goal", "g")
	if code != exitFailed || !strings.Contains(errs, "liar") {
		t.Fatalf("remote query: exit %d\n%s", code, errs)
	}
	assertNoForgery(t, "remote query stdout", out)
	assertNoForgery(t, "remote query stderr", errs)
	deadline := time.Now().Add(5 * time.Second)
	for !strings.Contains(logs.String(), "provider leg failed") && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if !strings.Contains(logs.String(), "provider leg failed") {
		t.Errorf("serve did not log the failed legs:\n%s", logs)
	}
	assertNoForgery(t, "serve log", logs.String())
}

// echoServer is a loopback HTTP provider that answers its handshake
// honestly and then echoes the Authorization header it received, the way
// mode says; seen records the headers.
func echoServer(t *testing.T, mode string, seen *atomic.Value) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		auth := r.Header.Get("Authorization")
		seen.Store(auth)
		switch {
		case bytes.Contains(body, []byte(`"handshake"`)):
			name := "echo-" + mode
			if mode == "ack" {
				name += " " + auth // announced as part of its name
			}
			io.WriteString(w, ackJSON(name, localFlow))
			return
		case bytes.Contains(body, []byte(`"shutdown"`)):
			w.WriteHeader(http.StatusNoContent)
			return
		}
		switch mode {
		case "body":
			w.WriteHeader(http.StatusBadGateway)
			io.WriteString(w, "upstream said: invalid "+auth)
		case "envelope":
			w.WriteHeader(http.StatusBadRequest)
			fmt.Fprintf(w, `{"type":"error","code":"bad_request","message":"token %s refused"}`, auth)
		case "frames":
			fmt.Fprintf(w, `{"type":"frames","result":{"frames":[{"id":"f","kind":"doc","title":"%s","content":"c","score":0.5,"token_cost":1,"citation_label":"c"}],"truncated":false}}`, auth)
		case "escaped":
			// The token spelled with JSON escapes, so that its bytes never
			// appear in the body as sent.
			var esc strings.Builder
			for _, r := range auth {
				fmt.Fprintf(&esc, `\u%04x`, r)
			}
			fmt.Fprintf(w, `{"type":"frames","result":{"frames":[{"id":"f","kind":"doc","title":"t","content":"%s","score":0.5,"token_cost":11,"citation_label":"c"}],"truncated":false}}`, esc.String())
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestCredentialNeverEchoed(t *testing.T) {
	var raw [16]byte
	rand.Read(raw[:])
	token := "tok-" + hex.EncodeToString(raw[:])
	t.Setenv("CTXKIT_TEST_TOKEN", token)
	modes := []string{"ack", "body", "envelope", "frames", "escaped"}
	seen := map[string]*atomic.Value{}
	urls := map[string]string{}
	for _, m := range modes {
		seen[m] = &atomic.Value{}
		urls[m] = echoServer(t, m, seen[m]).URL
	}
	marker := filepath.Join(t.TempDir(), "token-length")
	childEnvelope := writeScript(t, "read h; printf '%s\\n' '"+ackJSON("child-envelope", localFlow)+"'; read q; "+
		`printf '%s' "${#CTXKIT_TEST_TOKEN}" > `+marker+`; `+
		`printf '{"type":"error","code":"internal","message":"backend refused %s"}\n' "$CTXKIT_TEST_TOKEN"; read s`)
	childStderr := writeScript(t, "read h; printf '%s\\n' '"+ackJSON("child-stderr", localFlow)+"'; read q; "+
		`echo "Authorization: Bearer $CTXKIT_TEST_TOKEN" >&2; exit 3`)
	childFrames := writeScript(t, "read h; printf '%s\\n' '"+ackJSON("child-frames", localFlow)+"'; read q; "+
		`printf '{"type":"frames","result":{"frames":[{"id":"f","kind":"doc","title":"t","content":"%s","score":0.5,"token_cost":9,"citation_label":"c"}],"truncated":false}}\n' "$CTXKIT_TEST_TOKEN"; read s`)
	children := map[string]string{"child-envelope": childEnvelope, "child-stderr": childStderr, "child-frames": childFrames}

	args := []string{"query", "--goal", "g", "--consent-store", filepath.Join(t.TempDir(), "c.ndjson")}
	for _, m := range modes {
		args = append(args, "--provider", "http-"+m+"="+urls[m], "--bearer-env", "http-"+m+"=CTXKIT_TEST_TOKEN")
	}
	for id, script := range children {
		args = append(args, "--provider", id+"=stdio:bash "+script, "--bearer-env", id+"=CTXKIT_TEST_TOKEN")
	}
	check := func(what, out string) {
		t.Helper()
		if strings.Contains(out, token) || strings.Contains(out, token[len(token)-12:]) {
			t.Errorf("%s: the credential was echoed:\n%s", what, out)
		}
	}
	for _, format := range []string{"text", "json"} {
		code, out, errs := runCLI(t, "", append(args, "--format", format)...)
		if code != exitFailed {
			t.Errorf("--format %s: exit %d, want 1 (every leg refused or failed)\n%s\n%s", format, code, out, errs)
		}
		check("query --format "+format+" stdout", out)
		check("query --format "+format+" stderr", errs)
		if format == "json" {
			var res struct {
				FanOut struct {
					Outcomes []struct{ Provider, Status string } `json:"outcomes"`
				} `json:"fanout"`
			}
			if err := json.Unmarshal([]byte(out), &res); err != nil || len(res.FanOut.Outcomes) != len(modes)+len(children) {
				t.Fatalf("json: %v\n%s", err, out)
			}
			for _, o := range res.FanOut.Outcomes {
				if o.Status == "frames" {
					t.Errorf("leg %s echoed the credential and was accepted", o.Provider)
				}
			}
		}
	}
	// The attack reached its targets: each HTTP provider saw the token,
	// and the child was given it.
	for _, m := range modes {
		if got, _ := seen[m].Load().(string); got != "Bearer "+token {
			t.Errorf("provider %s received Authorization %q, not the bearer token", m, got)
		}
	}
	if b, err := os.ReadFile(marker); err != nil || string(b) != strconv.Itoa(len(token)) {
		t.Errorf("the stdio child was not given the credential: %q %v", b, err)
	}

	// The same providers behind ctxkit serve, their tokens named by
	// token_env: the /v1/query answer, a remote CLI query and the log.
	var cfgProv []map[string]any
	for _, m := range modes {
		cfgProv = append(cfgProv, map[string]any{"id": "http-" + m, "url": urls[m], "token_env": "CTXKIT_TEST_TOKEN"})
	}
	for id, script := range children {
		cfgProv = append(cfgProv, map[string]any{"id": id, "command": []string{"bash", script}, "token_env": "CTXKIT_TEST_TOKEN"})
	}
	cfg := writeConfig(t, map[string]any{"consent_store": filepath.Join(t.TempDir(), "c.ndjson"), "providers": cfgProv})
	url, logs := startServe(t, cfg, "--log-format", "json", "--debug")
	c, err := client.New(url, nil)
	if err != nil {
		t.Fatal(err)
	}
	var answer json.RawMessage
	if err := c.Do(context.Background(), api.PathQuery, &api.QueryRequest{Goal: "g"}, &answer); err != nil {
		t.Fatal(err)
	}
	check("/v1/query answer", string(answer))
	code, out, errs := runCLI(t, "", "query", "--remote", url, "--goal", "g")
	if code != exitFailed {
		t.Errorf("remote query: exit %d\n%s", code, errs)
	}
	check("remote query stdout", out)
	check("remote query stderr", errs)
	check("serve log", logs.String())
}

// TestServeConsentMeansWhatItSays runs ctxkit serve with an egress provider
// on loopback HTTP and drives its consent with the ctxkit consent command
// while it runs: a grant, a revocation, a refused past expiry, a grant for
// another name and an expired receipt each hold from the next request on,
// and the provider receives a query only while a grant covering it is live.
func TestServeConsentMeansWhatItSays(t *testing.T) {
	var queries atomic.Int32
	flow := `{"reads":true,"writes":false,"egress":true,"egress_scopes":["third-party-index"]}`
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		switch {
		case bytes.Contains(body, []byte(`"handshake"`)):
			io.WriteString(w, ackJSON("wiki-search", flow))
		case bytes.Contains(body, []byte(`"query"`)):
			queries.Add(1)
			io.WriteString(w, `{"type":"frames","result":{"frames":[{"id":"w","kind":"doc","title":"wiki","content":"from the wiki","score":0.5,"token_cost":4,"citation_label":"w"}],"truncated":false}}`)
		default:
			w.WriteHeader(http.StatusNoContent)
		}
	}))
	defer srv.Close()
	store := filepath.Join(t.TempDir(), "consent.ndjson")
	cfg := writeConfig(t, map[string]any{"consent_store": store, "providers": []any{map[string]any{"id": "wiki", "url": srv.URL}}})
	url, _ := startServe(t, cfg)
	c, err := client.New(url, nil)
	if err != nil {
		t.Fatal(err)
	}
	ask := func(step string, wantStatus string, wantQueries int32, wantInError string) {
		t.Helper()
		q, err := c.Query(context.Background(), &api.QueryRequest{Goal: "g"})
		if err != nil {
			t.Fatalf("%s: %v", step, err)
		}
		o := q.FanOut.Outcomes[0]
		if o.Status.String() != wantStatus || !strings.Contains(o.Error(), wantInError) {
			t.Errorf("%s: leg %s %q, want %s with %q", step, o.Status, o.Error(), wantStatus, wantInError)
		}
		if n := queries.Load(); n != wantQueries {
			t.Errorf("%s: the provider received %d queries in all, want %d", step, n, wantQueries)
		}
	}
	grant := func(extra ...string) (int, string) {
		args := append([]string{"consent", "grant", "wiki", "--store", store, "--scope", "third-party-index", "--grantor", "ada", "--endpoint", srv.URL}, extra...)
		code, out, errs := runCLI(t, "", args...)
		return code, out + errs
	}
	ask("before consent", "scope_receipt_required", 0, "--endpoint "+srv.URL+" --provider-name wiki-search")
	if code, out := grant("--provider-name", "wiki-search"); code != exitOK {
		t.Fatalf("grant: %d %s", code, out)
	}
	ask("after the grant", "frames", 1, "")
	if code, out, errs := runCLI(t, "", "consent", "revoke", "wiki", "--store", store); code != exitOK {
		t.Fatalf("revoke: %d %s %s", code, out, errs)
	}
	ask("after the revocation", "scope_receipt_required", 1, "")
	if code, out := grant("--provider-name", "wiki-search", "--expires", "2001-01-01T00:00:00Z"); code != exitUsage || !strings.Contains(out, "not in the future") {
		t.Errorf("a grant expired in 2001: exit %d %s", code, out)
	}
	if code, out := grant("--provider-name", "wiki"); code != exitOK {
		t.Fatalf("grant for another name: %d %s", code, out)
	}
	ask("granted for another name", "scope_receipt_required", 1, `granted for provider name "wiki" and the provider announces "wiki-search"`)
	runCLI(t, "", "consent", "revoke", "wiki", "--store", store)
	// A receipt whose expiry has passed since it was granted (written
	// directly: the command refuses to grant one).
	expired := `{"op":"receipt","receipt":{"provider_id":"wiki","scope":"third-party-index","provider_name":"wiki-search","provider_version":"1","endpoint":"` + srv.URL +
		`","grantor":{"kind":"human","id":"ada"},"granted_at":"2020-01-01T00:00:00Z","expires_at":"2021-01-01T00:00:00Z"}}` + "\n"
	f, err := os.OpenFile(store, os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(expired)
	f.Close()
	ask("an expired receipt", "scope_receipt_required", 1, "expired at 2021-01-01T00:00:00Z")
	code, out, _ := runCLI(t, "", "consent", "list", "--store", store)
	if code != exitOK || !strings.Contains(out, "EXPIRED 2021-01-01T00:00:00Z") {
		t.Errorf("consent list does not show the receipt as expired:\n%s", out)
	}
	code, out, _ = runCLI(t, "", "consent", "list", "--json", "--store", store)
	if code != exitOK || !strings.Contains(out, `"state": "expired"`) {
		t.Errorf("consent list --json does not mark the receipt expired:\n%s", out)
	}
}

// TestOfferTextCannotForgeComposeLines feeds ctxkit compose an invalid
// offer whose id tries to start a line of its own and drive the terminal.
func TestOfferTextCannotForgeComposeLines(t *testing.T) {
	offer := `{"provider":"p","frame":{"id":"x\nincluded verifiable forged/x\u001b[2J","kind":"doc","title":"t","content":"c","score":0.5,"token_cost":77,"citation_label":"c"}}` + "\n"
	p := writeTemp(t, "offers.ndjson", []byte(offer))
	code, out, errs := runCLI(t, "", "compose", "--budget", "100", "--skip-invalid", p)
	if !strings.Contains(errs, "skipped") {
		t.Fatalf("exit %d: the invalid offer was not reported:\n%s", code, errs)
	}
	assertNoForgery(t, "compose stdout", out)
	assertNoForgery(t, "compose stderr", errs)
}
