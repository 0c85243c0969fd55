package host

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/ctxkit/ctxkit/frame"
	"github.com/ctxkit/ctxkit/host/consent"
	"github.com/ctxkit/ctxkit/host/serve"
	"github.com/ctxkit/ctxkit/internal/cgpjson"
	"github.com/ctxkit/ctxkit/internal/safetext"
	"github.com/ctxkit/ctxkit/wire"
)

// countingProvider serves honest frames over loopback HTTP under the name
// it currently holds, counting the query envelopes it receives.
type countingProvider struct {
	srv     *httptest.Server
	name    atomic.Value // string
	queries atomic.Int32
}

func newCountingProvider(t *testing.T, name string, flow frame.DataFlow) *countingProvider {
	c := &countingProvider{}
	c.name.Store(name)
	c.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if bytes.Contains(body, []byte(`"type":"query"`)) {
			c.queries.Add(1)
		}
		h := serve.HTTP(&honest{name: c.name.Load().(string), flow: flow, frames: []frame.Frame{mkFrame("a", "alpha evidence", 0.5)}})
		r.Body = io.NopCloser(bytes.NewReader(body))
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(c.srv.Close)
	return c
}

var indexFlow = frame.DataFlow{Reads: true, Egress: true, EgressScopes: []frame.EgressScope{frame.ScopeThirdPartyIndex}}

// TestExpiredConsentIsRefused: a receipt past its expires_at no longer
// admits the provider, and the refusal says why.
func TestExpiredConsentIsRefused(t *testing.T) {
	path := filepath.Join(t.TempDir(), "consent.ndjson")
	line := `{"op":"receipt","receipt":{"provider_id":"p","scope":"third-party-index","provider_name":"","provider_version":"","grantor":{"kind":"human","id":"ada"},"granted_at":"2020-01-01T00:00:00Z","expires_at":"2020-01-02T00:00:00Z"}}` + "\n"
	if err := os.WriteFile(path, []byte(line), 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := consent.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	// A host asked to query the provider refuses it and says why.
	h := New(&Options{Consent: s})
	defer h.Close(context.Background())
	h.AddInProcess("p", &honest{flow: indexFlow, frames: []frame.Frame{mkFrame("a", "x", 0.5)}})
	_, err = h.QueryProvider(context.Background(), "p", probe())
	var ce *ConsentError
	if !errors.As(err, &ce) || !strings.Contains(err.Error(), "expired") {
		t.Errorf("query after expiry: %v", err)
	}
}

func TestReceiptBoundToNameAndEndpoint(t *testing.T) {
	a := newCountingProvider(t, "alpha", indexFlow)
	b := newCountingProvider(t, "alpha", indexFlow)
	store := consent.NewStore()
	if err := store.Grant(consent.Receipt{ProviderID: "p", Scope: frame.ScopeThirdPartyIndex, ProviderName: "alpha", Endpoint: a.srv.URL,
		Grantor: consent.Grantor{Kind: "human", ID: "ada"}}); err != nil {
		t.Fatal(err)
	}
	query := func(url string) Outcome {
		h := New(&Options{Consent: store})
		defer h.Close(context.Background())
		if err := h.AddHTTP("p", url, nil); err != nil {
			t.Fatal(err)
		}
		return h.QueryAll(context.Background(), probe()).Outcomes[0]
	}
	// Same id, another endpoint: not covered.
	o := query(b.srv.URL)
	if o.Status != StatusScopeReceiptRequired || !strings.Contains(o.Error(), "granted for endpoint "+`"`+a.srv.URL+`"`) ||
		!strings.Contains(o.Error(), "reached at "+`"`+b.srv.URL+`"`) {
		t.Errorf("another endpoint: %s %s", o.Status, o.Error())
	}
	if n := b.queries.Load(); n != 0 {
		t.Errorf("the provider at the other endpoint received %d queries", n)
	}
	// The endpoint granted, the name granted: covered.
	if o := query(a.srv.URL); o.Status != StatusFrames || a.queries.Load() != 1 {
		t.Fatalf("the granted provider: %s %s (%d queries)", o.Status, o.Error(), a.queries.Load())
	}
	// The same endpoint now announces another name: not covered.
	a.name.Store("evil")
	o = query(a.srv.URL)
	if o.Status != StatusScopeReceiptRequired || !strings.Contains(o.Error(), `granted for provider name "alpha" and the provider announces "evil"`) {
		t.Errorf("another name: %s %s", o.Status, o.Error())
	}
	if n := a.queries.Load(); n != 1 {
		t.Errorf("the renamed provider received %d queries, want the 1 from before", n)
	}
}

func TestConsentStoreFollowsJournal(t *testing.T) {
	path := filepath.Join(t.TempDir(), "consent.ndjson")
	reader, err := consent.Watch(path) // the long-lived host's view
	if err != nil {
		t.Fatal(err)
	}
	writer, err := consent.Open(path) // `ctxkit consent` in another process
	if err != nil {
		t.Fatal(err)
	}
	info := frame.ProviderInfo{DataFlow: indexFlow}
	g := consent.Grantor{Kind: "human", ID: "ada"}
	if d := reader.Evaluate(consent.Subject{ID: "p"}, info); d.Permitted {
		t.Fatal("permitted before any grant")
	}
	if err := writer.Grant(consent.Receipt{ProviderID: "p", Scope: frame.ScopeThirdPartyIndex, Grantor: g}); err != nil {
		t.Fatal(err)
	}
	if d := reader.Evaluate(consent.Subject{ID: "p"}, info); !d.Permitted {
		t.Fatalf("a grant made elsewhere is not seen: %+v", d)
	}
	if ok, err := writer.Revoke("p", ""); !ok || err != nil {
		t.Fatalf("revoke: %v %v", ok, err)
	}
	if d := reader.Evaluate(consent.Subject{ID: "p"}, info); d.Permitted {
		t.Fatal("a revocation made elsewhere is not seen")
	}
	// A line being written (no newline yet) waits; once complete it counts.
	line := `{"op":"receipt","receipt":{"provider_id":"p","scope":"third-party-index","provider_name":"","provider_version":"","grantor":{"kind":"human","id":"ada"},"granted_at":"2026-01-01T00:00:00Z"}}`
	f, _ := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0o600)
	f.WriteString(line[:40])
	if d := reader.Evaluate(consent.Subject{ID: "p"}, info); d.Permitted || reader.Err() != nil {
		t.Fatalf("a torn line counted or failed the store: %+v %v", d, reader.Err())
	}
	f.WriteString(line[40:] + "\n")
	f.Close()
	if d := reader.Evaluate(consent.Subject{ID: "p"}, info); !d.Permitted {
		t.Fatalf("the completed line is not seen: %+v", d)
	}
	// A journal replaced by garbage fails closed, and says so.
	os.WriteFile(path+".new", []byte("garbage\n"), 0o600)
	os.Rename(path+".new", path)
	if d := reader.Evaluate(consent.Subject{ID: "p"}, info); d.Permitted || !strings.Contains(d.Reason, "cannot be read") || reader.Err() == nil {
		t.Fatalf("an unreadable journal: %+v", d)
	}
	if d := reader.Evaluate(consent.Subject{ID: "local"}, frame.ProviderInfo{DataFlow: frame.DataFlow{Reads: true}}); !d.Permitted {
		t.Error("a provider needing no consent was refused because of the journal")
	}
	// A removed journal holds nothing.
	os.Remove(path)
	if d := reader.Evaluate(consent.Subject{ID: "p"}, info); d.Permitted || reader.Err() != nil {
		t.Fatalf("a removed journal: %+v %v", d, reader.Err())
	}
}

// TestNoConnectionThroughProxy sets HTTPS_PROXY and HTTP_PROXY to a
// loopback listener in a child test process (the proxy settings are read
// once per process) and checks that no connection reaches it, before
// consent or after: a provider is never reached through a proxy.
func TestNoConnectionThroughProxy(t *testing.T) {
	if addr := os.Getenv("CTXKIT_PROXY_CHILD"); addr != "" {
		h := New(&Options{QueryTimeout: 2 * time.Second})
		defer h.Close(context.Background())
		if err := h.AddHTTP("remote", "https://provider.invalid/cgp", nil); err != nil {
			t.Fatal(err)
		}
		if o := h.QueryAll(context.Background(), probe()).Outcomes[0]; o.Status != StatusConsentRequired {
			t.Fatalf("before consent: %s %s", o.Status, o.Error())
		}
		h.Consent().Record(consent.Record{ProviderID: "remote", GrantedScope: "egress", Endpoint: "https://provider.invalid/cgp"})
		_ = h.QueryAll(context.Background(), probe())
		return
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var accepted atomic.Int32
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted.Add(1)
			c.Close()
		}
	}()
	proxy := "http://" + ln.Addr().String()
	cmd := exec.Command(os.Args[0], "-test.run=^TestNoConnectionThroughProxy$", "-test.count=1")
	cmd.Env = append(os.Environ(), "CTXKIT_PROXY_CHILD="+ln.Addr().String(), "HTTPS_PROXY="+proxy, "HTTP_PROXY="+proxy,
		"https_proxy="+proxy, "http_proxy="+proxy, "NO_PROXY=", "no_proxy=")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	if n := accepted.Load(); n != 0 {
		t.Fatalf("the proxy at %s accepted %d connection(s) meant for the provider", proxy, n)
	}
}

func TestScrubbedErrorsKeepTheirKind(t *testing.T) {
	sec := secretsOf(NewCredential("s3cr3t-token"))
	err := sec.scrubError(fmt.Errorf("wrapped: %w", newErr("p", "query", errTransport, "said s3cr3t-token", nil)))
	if strings.Contains(err.Error(), "s3cr3t") || !errors.Is(err, errTransport) {
		t.Errorf("scrubbed: %v (is transport: %v)", err, errors.Is(err, errTransport))
	}
	var e *Error
	if errors.As(err, &e) {
		t.Errorf("the unscrubbed original is reachable with errors.As: %v", e)
	}
	// A secret whose beginning fell out of a tail buffer is still removed.
	if got := sec.scrubTail("3t-token and more"); strings.Contains(got, "3t-token") {
		t.Errorf("scrubTail kept the secret's end: %q", got)
	}
}

// BenchmarkConsentEvaluate measures the per-request consent decision for a
// scoped provider over a journal of 200 receipts: in memory, and followed on
// disk (one stat per decision when the journal is unchanged).
func BenchmarkConsentEvaluate(b *testing.B) {
	path := filepath.Join(b.TempDir(), "consent.ndjson")
	disk, err := consent.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	mem := consent.NewStore()
	g := consent.Grantor{Kind: "human", ID: "ada"}
	for i := range 200 {
		r := consent.Receipt{ProviderID: fmt.Sprintf("p%d", i), Scope: frame.ScopeThirdPartyIndex, Grantor: g, Endpoint: "https://x/cgp", ProviderName: "x"}
		if err := disk.Grant(r); err != nil {
			b.Fatal(err)
		}
		mem.Grant(r)
	}
	watched, err := consent.Watch(path)
	if err != nil {
		b.Fatal(err)
	}
	sub := consent.Subject{ID: "p199", Endpoint: "https://x/cgp", Name: "x"}
	info := frame.ProviderInfo{Name: "x", DataFlow: indexFlow}
	for _, c := range []struct {
		name string
		s    *consent.Store
	}{{"memory", mem}, {"journal", watched}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if !c.s.Evaluate(sub, info).Permitted {
					b.Fatal("not permitted")
				}
			}
		})
	}
}

// FuzzScrub checks the scrubber's invariant: whatever a provider writes
// around, inside or across copies of a credential, the scrubbed text (and
// the scrubbed tail) holds no copy of it. Secrets sharing a byte with the
// redacted form itself are left out: the redaction would "contain" them.
func FuzzScrub(f *testing.F) {
	f.Add("Bearer tok-123 and tok-123tok-123", "tok-123")
	f.Add("ok-123 is the end of a token", "tok-123")
	f.Add("aaaaaaa", "aaaa")
	// Secrets sharing no byte with the redacted form, holding what a quote
	// escapes.
	f.Add(`tool failed, token qu0"SXYZ-9876`, `qu0"SXYZ-9876`)
	f.Add("tab\tSOMBY-1 and back\\slash", "\tSOMBY-1")
	f.Fuzz(func(t *testing.T, text, secret string) {
		if len(secret) < minSecret || strings.ContainsAny(secret, redacted) {
			return
		}
		sec := secretsOf(NewCredential(secret))
		if got := sec.scrubString(text); strings.Contains(got, secret) {
			t.Fatalf("scrubString(%q) = %q keeps %q", text, got, secret)
		}
		// Quoted (an error quoting the provider's words), the secret is
		// found in its quoted spelling.
		if utf8.ValidString(secret) {
			q := strconv.Quote(secret)
			for _, quoted := range []string{strconv.Quote(text), safetext.Quote(text), safetext.Escape(text)} {
				if got := sec.scrubString(quoted); strings.Contains(got, q[1:len(q)-1]) || strings.Contains(got, secret) {
					t.Fatalf("scrubString(%q) = %q keeps %q", quoted, got, secret)
				}
			}
		}
		got := sec.scrubTail(text)
		if strings.Contains(got, secret) {
			t.Fatalf("scrubTail(%q) = %q keeps %q", text, got, secret)
		}
		for n := len(secret) - 1; n >= minSecret; n-- {
			if strings.HasPrefix(got, secret[len(secret)-n:]) {
				t.Fatalf("scrubTail(%q) = %q starts with the secret's last %d bytes", text, got, n)
			}
		}
	})
}

// FuzzEchoedInAnySpelling checks echo detection (C8) against every way a
// JSON encoder may spell a string holding the credential: ctxkit's own
// encoder, encoding/json (which escapes "<", ">" and "&"), every non-ASCII
// or punctuation character as \uXXXX, and "/" as \/. A token holding '"' or
// '\' had passed when a reply spelled it with short escapes only.
func FuzzEchoedInAnySpelling(f *testing.F) {
	f.Add(`quote"SECRETX-0123456789abcdef`, "the secret is ", "")
	f.Add(`back\slash-0123456789`, "", " tail")
	f.Add("tab\tand<amp&>-token", "x", "y")
	f.Add("é-ü-token/with/slashes", "", "")
	f.Fuzz(func(t *testing.T, secret, before, after string) {
		content := before + secret + after
		// A credential is text (a header value, an environment entry):
		// one that is not UTF-8 could only "appear" inside another rune.
		if len(secret) < minSecret || !utf8.ValidString(secret) || !utf8.ValidString(content) {
			return
		}
		sec := secretsOf(NewCredential(secret))
		env := &wire.Frames{Result: wire.Result{Frames: []frame.Frame{{ID: "f", Kind: frame.KindDoc, Title: "t",
			Content: content, Score: 0.5, TokenCost: 1, CitationLabel: "c"}}}}
		canon, err := wire.Marshal(env)
		if err != nil {
			t.Fatal(err)
		}
		quoted := cgpjson.AppendStdString(nil, content)
		for name, spell := range map[string]func() []byte{
			"canonical": func() []byte { return canon },
			"encoding/json": func() []byte {
				q, _ := json.Marshal(content)
				return bytes.Replace(canon, quoted, q, 1)
			},
			"all \\u": func() []byte { return bytes.Replace(canon, quoted, escapeAllU(content), 1) },
			"slash": func() []byte {
				return bytes.Replace(canon, quoted, bytes.ReplaceAll(quoted, []byte("/"), []byte(`\/`)), 1)
			},
		} {
			raw := spell()
			got, err := wire.Unmarshal(raw)
			if err != nil {
				t.Fatalf("%s: %q does not decode: %v", name, raw, err)
			}
			if f := got.(*wire.Frames).Result.Frames[0]; f.Content != content {
				t.Fatalf("%s: the spelling changed the content: %q", name, f.Content)
			}
			if !sec.echoed(raw, got) {
				t.Errorf("%s: the credential %q spelled %q was not seen", name, secret, raw)
			}
		}
	})
}

// escapeAllU spells s as a JSON string with every rune but ASCII letters
// and digits written as \uXXXX (a surrogate pair above U+FFFF).
func escapeAllU(s string) []byte {
	b := []byte{'"'}
	for _, r := range s {
		if r < utf8.RuneSelf && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			b = append(b, byte(r))
			continue
		}
		if r > 0xFFFF {
			r1, r2 := utf16.EncodeRune(r)
			b = fmt.Appendf(b, `\u%04x\u%04x`, r1, r2)
			continue
		}
		b = fmt.Appendf(b, `\u%04x`, r)
	}
	return append(b, '"')
}

// A reply that does not carry the credential is not an echo, whatever it
// escapes.
func TestEchoedNeedsTheCredential(t *testing.T) {
	sec := secretsOf(NewCredential(`quote"SECRETX-0123456789abcdef`))
	for _, raw := range []string{
		`{"type":"frames","result":{"frames":[{"id":"f","kind":"doc","title":"t","content":"quote\"SECRETX-0123","score":0.5,"token_cost":1,"citation_label":"c"}],"truncated":false}}`,
		`{"type":"frames","result":{"frames":[{"id":"f","kind":"doc","title":"\u0071uote","content":"a\/b \"SECRETX-0123456789abcdef","score":0.5,"token_cost":1,"citation_label":"c"}],"truncated":false}}`,
	} {
		env, err := wire.Unmarshal([]byte(raw))
		if err != nil {
			t.Fatal(err)
		}
		if sec.echoed([]byte(raw), env) {
			t.Errorf("%s: reported as an echo", raw)
		}
	}
}

// A provider's own words around the credential, spelled behind JSON
// escapes (an error body "{\"error\":\"Zq9\/Tok…\"}", every character as
// \uXXXX, or quoted once more for printing), are withheld; the error code
// is scrubbed as the message is.
func TestCredentialBehindEscapesIsWithheld(t *testing.T) {
	const tok = "Zq9/Tok+Secret_2026xyz"
	sec := secretsOf(NewCredential(tok))
	allU := ""
	for _, r := range tok {
		allU += fmt.Sprintf(`\u%04x`, r)
	}
	for _, body := range []string{
		`{"error":"Zq9\/Tok+Secret_2026xyz"}`,
		`{"error":"` + allU + `"}`,
		strconv.Quote(`{"error":"Zq9\/Tok+Secret_2026xyz"}`),
		`{"auth":"Zq9\u002fTok+Secret_2026xyz"}`,
	} {
		got := sec.scrubString("HTTP 500: " + body)
		if strings.Contains(cgpjson.UnescapeLoose(cgpjson.UnescapeLoose(got)), tok) || !sec.in(body) {
			t.Errorf("%s: scrubbed to %q", body, got)
		}
	}
	for _, honest := range []string{`{"error":"bad \/path\n"}`, `C:\temp\u00e9`, `tab\tthen`} {
		if got := sec.scrubString(honest); got != honest {
			t.Errorf("%q without the credential became %q", honest, got)
		}
	}
	err := sec.scrubError(newErr("p", "query", errProviderError, "", &wire.Error{Code: wire.Code(tok), Message: "m"}))
	if strings.Contains(err.Error(), tok) {
		t.Errorf("the error code kept the credential: %v", err)
	}
}

// The error code is the provider's word: quoted unless it reads as one
// token, so that a code holding "\x1b" cannot pass for an escaped ESC.
func TestErrorCodeQuoted(t *testing.T) {
	err := newErr("p", "query", errProviderError, "", &wire.Error{Code: `x\x1b[2J`, Message: "m"})
	if !strings.Contains(err.Error(), `provider error "x\\x1b[2J": "m"`) {
		t.Errorf("%v", err)
	}
}

// The grant command a refusal prints is for pasting into a shell, and the
// scope and name in it are the provider's: pasted, it runs nothing they
// say. Each hostile word, run through sh as the command's arguments,
// arrives as it was written.
func TestConsentHintIsShellSafe(t *testing.T) {
	dir := t.TempDir()
	pwned := filepath.Join(dir, "pwned")
	for _, e := range []*ConsentError{
		{Provider: "p", Missing: []frame.EgressScope{frame.EgressScope("ns:x;touch " + pwned + ";#")}, Endpoint: "/bin/prov --flag", Name: "n$(touch " + pwned + ")`touch " + pwned + "`"},
		{Provider: "p q", Endpoint: "https://h/cgp?a=1&b=$(id)", Name: "it's"},
	} {
		msg := e.Error()
		_, hint, ok := strings.Cut(msg, "grant with: ctxkit ")
		if !ok {
			t.Fatalf("no hint in %q", msg)
		}
		got, err := exec.Command("sh", "-c", "printf '%s\\n' "+hint).CombinedOutput()
		if err != nil {
			t.Fatalf("%s: %v %s", hint, err, got)
		}
		if _, err := os.Stat(pwned); err == nil {
			t.Fatalf("pasting %q ran the provider's command", hint)
		}
		args := strings.Split(strings.TrimSuffix(string(got), "\n"), "\n")
		want := []string{"consent", "grant", e.Provider}
		if len(e.Missing) > 0 {
			want = append(want, "--scope", string(e.Missing[0]))
		}
		want = append(want, "--endpoint", e.Endpoint, "--provider-name", e.Name, "--grantor", "NAME")
		if !slices.Equal(args, want) {
			t.Errorf("hint %q reads as %q, want %q", hint, args, want)
		}
	}
}
