package conformance

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func checkStatuses(t *testing.T, rep Report, want map[string]Status) {
	t.Helper()
	if got, names := len(rep.Checks), providerChecks(); got != len(names) {
		t.Fatalf("report has %d checks, want %d: %+v", got, len(names), rep.Checks)
	}
	for i, c := range rep.Checks {
		if c.Name != providerChecks()[i] {
			t.Errorf("check %d is %q, want %q", i, c.Name, providerChecks()[i])
		}
		if w, ok := want[c.Name]; ok && c.Status != w {
			t.Errorf("%s: %s, want %s; evidence: %s", c.Name, c.Status, w, c.Evidence)
		}
	}
}

func TestHonestFixturePassesEveryProviderCheckOverStdio(t *testing.T) {
	rep, err := RunProvider(context.Background(), ProviderTarget{Command: fixtureCommand()}, &ProviderOptions{Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]Status{}
	for _, n := range providerChecks() {
		want[n] = Pass
	}
	checkStatuses(t, rep, want)
}

func TestHonestFixturePassesOverHTTP(t *testing.T) {
	rep, err := RunProvider(context.Background(), ProviderTarget{URL: fixtureURL(t, nil)}, &ProviderOptions{Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]Status{}
	for _, n := range providerChecks() {
		want[n] = Pass
	}
	for _, n := range []string{checkMalformedInput, checkEmbedding, checkCorrelation} {
		want[n] = Skipped
	}
	checkStatuses(t, rep, want)
	if !strings.HasPrefix(rep.Target, "http: ") {
		t.Errorf("target %q", rep.Target)
	}
}

// TestRedRun: every misbehave mode trips every check it targets, and only
// an honest provider passes everything.
func TestRedRun(t *testing.T) {
	modes := MisbehaveModes()
	if len(modes) < 21 {
		t.Fatalf("%d modes, want at least the 21 of docs/protocol.md §5.2", len(modes))
	}
	for _, m := range modes {
		t.Run(m.Name, func(t *testing.T) {
			t.Parallel()
			rep, err := RunProvider(context.Background(), ProviderTarget{Command: fixtureCommand("--misbehave", m.Name)},
				&ProviderOptions{Timeout: 3 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			if rep.Passed() {
				t.Fatalf("mode %s passed the suite", m.Name)
			}
			for _, target := range m.Targets {
				c, ok := rep.Check(target)
				if !ok || c.Status != Fail {
					t.Errorf("mode %s: %s is %s, want fail; evidence: %s", m.Name, target, c.Status, c.Evidence)
				}
			}
			for _, c := range rep.Checks {
				if c.Status != Fail {
					continue
				}
				for _, part := range []string{"sent: ", "; got: ", "; expected: "} {
					if !strings.Contains(c.Evidence, part) {
						t.Errorf("%s evidence lacks %q: %s", c.Name, part, c.Evidence)
					}
				}
				if !slices.Contains(m.Targets, c.Name) {
					t.Logf("also failed: %s: %s", c.Name, c.Evidence)
				}
			}
		})
	}
}

func TestRunProviderRejectsBadTarget(t *testing.T) {
	if _, err := RunProvider(context.Background(), ProviderTarget{}, nil); err != errTarget {
		t.Fatalf("err = %v", err)
	}
	if _, err := RunProvider(context.Background(), ProviderTarget{Command: []string{"x"}, URL: "http://x"}, nil); err != errTarget {
		t.Fatalf("err = %v", err)
	}
}

func TestUnstartableProviderFailsHandshake(t *testing.T) {
	rep, err := RunProvider(context.Background(), ProviderTarget{Command: []string{"/nonexistent/provider"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	c, _ := rep.Check(checkHandshake)
	if c.Status != Fail || !strings.Contains(c.Evidence, "/nonexistent/provider") {
		t.Fatalf("handshake: %+v", c)
	}
	if s, _ := rep.Check(checkBudgetHonesty); s.Status != Skipped {
		t.Fatalf("budget-honesty: %+v", s)
	}
}

// TestRedRunOverHTTP: every mode whose targets the HTTP transport can see
// trips them over HTTP too (the three stdio wire probes are skipped there).
func TestRedRunOverHTTP(t *testing.T) {
	stdioOnly := map[string]bool{checkMalformedInput: true, checkEmbedding: true, checkCorrelation: true}
	n := 0
	for _, m := range MisbehaveModes() {
		if slices.ContainsFunc(m.Targets, func(c string) bool { return stdioOnly[c] }) {
			continue
		}
		n++
		t.Run(m.Name, func(t *testing.T) {
			rep, err := RunProvider(context.Background(), ProviderTarget{URL: fixtureURL(t, &FixtureOptions{Misbehave: m.Name})}, &ProviderOptions{Timeout: 3 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			for _, target := range m.Targets {
				if c, _ := rep.Check(target); c.Status != Fail {
					t.Errorf("%s is %s over HTTP, want fail: %s", target, c.Status, c.Evidence)
				}
			}
		})
	}
	if n < 18 {
		t.Fatalf("only %d modes are visible over HTTP", n)
	}
}

// FuzzProviderSuiteReplies: whatever a provider answers (here: the same
// bytes to every request over HTTP), the suite reports all its checks and
// never panics.
func FuzzProviderSuiteReplies(f *testing.F) {
	f.Add(`{"type":"handshake_ack","protocol_version":"contextgraph/1.0-draft","provider":{"name":"x","version":"1","data_flow":{"reads":false,"writes":false,"egress":false}},"capabilities":{"query":{"kinds":["doc"]},"correlation":true,"graph":true,"verify":true}}`)
	f.Add(`{"type":"frames","result":{"frames":[{"id":"a","kind":"doc","title":"t","content":"abcd","score":2,"token_cost":1,"provenance":[{"type":"file","uri":"file:///etc/hostname","range":"L1-2","digest":"sha256:00"}],"relations":[{"rel":"r","target_uri":""}]}],"truncated":false}}`)
	f.Add(`{"type":"error","code":"bad_request","message":"no"}`)
	f.Add(`{"type":"verified","response":{"verdicts":null}}`)
	f.Add(`not json`)
	f.Add(``)
	var body atomic.Value
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		_, _ = w.Write([]byte(body.Load().(string)))
	}))
	f.Cleanup(srv.Close)
	f.Fuzz(func(t *testing.T, reply string) {
		body.Store(reply)
		rep, err := RunProvider(context.Background(), ProviderTarget{URL: srv.URL}, &ProviderOptions{Timeout: time.Second})
		if err != nil {
			t.Fatal(err)
		}
		if len(rep.Checks) != len(providerChecks()) {
			t.Fatalf("%d checks", len(rep.Checks))
		}
	})
}

// fixtureURL serves a fixture provider made with o over HTTP for the rest of
// the test and returns its URL.
func fixtureURL(t *testing.T, o *FixtureOptions) string {
	t.Helper()
	p, err := NewFixtureProvider(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	srv := httptest.NewServer(p)
	t.Cleanup(srv.Close)
	return srv.URL
}
