package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ctxkit/ctxkit/host"
	"github.com/ctxkit/ctxkit/internal/pgtest"
	"github.com/ctxkit/ctxkit/server/api"
	"github.com/ctxkit/ctxkit/server/client"
)

// scopedProvider is a loopback CGP provider declaring third-party-index
// egress; it counts the queries it receives and when the last arrived.
type scopedProvider struct {
	*httptest.Server
	queries atomic.Int64
	last    atomic.Int64 // unix nanos of the last query received

	mu       sync.Mutex
	arrivals []time.Time
}

func newScopedProvider(t testing.TB) *scopedProvider {
	p := &scopedProvider{}
	flow := `{"reads":true,"writes":false,"egress":true,"egress_scopes":["third-party-index"]}`
	p.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		switch {
		case bytes.Contains(body, []byte(`"handshake"`)):
			io.WriteString(w, ackJSON("wiki-search", flow))
		case bytes.Contains(body, []byte(`"query"`)):
			p.queries.Add(1)
			p.last.Store(time.Now().UnixNano())
			p.mu.Lock()
			p.arrivals = append(p.arrivals, time.Now())
			p.mu.Unlock()
			io.WriteString(w, `{"type":"frames","result":{"frames":[{"id":"w","kind":"doc","title":"wiki","content":"from the wiki","score":0.5,"token_cost":4,"citation_label":"w"}],"truncated":false}}`)
		default:
			w.WriteHeader(http.StatusNoContent)
		}
	}))
	t.Cleanup(p.Close)
	return p
}

// grantArgs is the command line that grants p's scope in store.
func (p *scopedProvider) grantArgs(store string) []string {
	return []string{"consent", "grant", "wiki", "--store", store, "--scope", "third-party-index", "--grantor", "ada", "--endpoint", p.URL, "--provider-name", "wiki-search"}
}

// config writes a serve config whose one provider, wiki, is p, with its
// consent in store: member is "store" (a URL) or "consent_store" (a
// journal file).
func (p *scopedProvider) config(t testing.TB, member, store string) string {
	return writeConfig(t, map[string]any{member: store, "providers": []any{map[string]any{"id": "wiki", "url": p.URL}}})
}

// migratedStore starts a PostgreSQL for the test and applies the shared
// store's schema to it with ctxkit store migrate.
func migratedStore(t testing.TB) *pgtest.Server {
	t.Helper()
	pg := pgtest.Start(t)
	if code, out, errs := runCLI(t, "", "store", "migrate", "--store", pg.URL()); code != exitOK || !strings.Contains(out, "to 1") {
		t.Fatalf("store migrate: %d %s %s", code, out, errs)
	}
	return pg
}

func queryLeg(t *testing.T, c *client.Client) string {
	t.Helper()
	q, err := c.Query(context.Background(), &api.QueryRequest{Goal: "g"})
	if err != nil {
		t.Fatalf("query: %v", err)
	}
	return q.FanOut.Outcomes[0].Status.String()
}

// Two ctxkit serve replicas on one PostgreSQL: consent granted through the
// shared store reaches both, a revocation stops egress on both within a
// second (the provider receives nothing after), the database stopped
// fails closed and restarted recovers without restarting the replicas,
// and GET /v1/usage sums both replicas' served frames (UR1).
func TestReplicasShareConsentAndUsage(t *testing.T) {
	pg := migratedStore(t)
	p := newScopedProvider(t)
	cfg := p.config(t, "store", pg.URL())
	urlA, logA := startServe(t, cfg)
	urlB, _ := startServe(t, cfg, "--store", pg.URL())
	a, _ := client.New(urlA, nil)
	b, _ := client.New(urlB, nil)
	start := time.Now().Add(-time.Second).UTC().Format(time.RFC3339)
	if s := queryLeg(t, a); s != "scope_receipt_required" || p.queries.Load() != 0 {
		t.Fatalf("before consent: %s, %d queries", s, p.queries.Load())
	}
	code, out, errs := runCLI(t, "", p.grantArgs(pg.URL())...)
	if code != exitOK || strings.Contains(out+errs, "postgres@") {
		t.Fatalf("grant: %d %s %s", code, out, errs)
	}
	// A grant reaches every replica with its notification (milliseconds;
	// the promise is within a second).
	granted := time.Now()
	for _, c := range []*client.Client{a, b} {
		for queryLeg(t, c) != "frames" {
			if time.Since(granted) > time.Second {
				t.Fatal("a replica did not see the grant within a second")
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	if code, _, errs := runCLI(t, "", "consent", "revoke", "wiki", "--store", pg.URL()); code != exitOK {
		t.Fatalf("revoke: %s", errs)
	}
	revoked := time.Now()
	time.Sleep(time.Second)
	before := p.queries.Load()
	for _, c := range []*client.Client{a, b} {
		if s := queryLeg(t, c); s != "scope_receipt_required" {
			t.Fatalf("a second after the revocation: %s", s)
		}
	}
	if n := p.queries.Load(); n != before || p.last.Load() > revoked.UnixNano() {
		t.Fatalf("the provider received queries after the revocation: %d -> %d", before, n)
	}

	// The database down: fail closed with a clear error; back: recovered.
	if code, _, errs := runCLI(t, "", p.grantArgs(pg.URL())...); code != exitOK {
		t.Fatalf("grant: %s", errs)
	}
	pg.Stop()
	time.Sleep(time.Second)
	q, err := a.Query(context.Background(), &api.QueryRequest{Goal: "g"})
	if err != nil || q.FanOut.Outcomes[0].Status == host.StatusFrames || !strings.Contains(q.FanOut.Outcomes[0].Error(), "shared consent store cannot be read") {
		t.Fatalf("with the database stopped: %v %+v", err, q)
	}
	if err := pg.Restart(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for queryLeg(t, a) != "frames" || queryLeg(t, b) != "frames" {
		if time.Now().After(deadline) {
			t.Fatalf("the replicas did not recover after the database restarted:\n%s", logA)
		}
		time.Sleep(100 * time.Millisecond)
	}

	// Usage: every frame either replica served, summed once.
	served := p.queries.Load()
	var rep struct {
		BudgetConsumed uint64 `json:"budget_consumed"`
		Providers      []struct {
			FramesServed uint32 `json:"frames_served"`
		} `json:"providers"`
	}
	time.Sleep(100 * time.Millisecond) // the other replica's last batch
	if err := getJSON(urlB+api.PathUsage+"?since="+start, &rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.Providers) != 1 || int64(rep.Providers[0].FramesServed) != served || rep.BudgetConsumed != uint64(4*served) {
		t.Fatalf("usage %+v, want %d frames of 4 tokens", rep, served)
	}
}

// getText GETs url and returns the body of a 200 answer.
func getText(url string) ([]byte, error) {
	resp, err := http.Get(url)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		return nil, &httpStatusError{resp.StatusCode, string(b)}
	}
	return b, nil
}

// getJSON GETs url and decodes a 200 answer into v.
func getJSON(url string, v any) error {
	b, err := getText(url)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, v)
}

type httpStatusError struct {
	code int
	body string
}

func (e *httpStatusError) Error() string { return http.StatusText(e.code) + ": " + e.body }

// Interleaved grants and revocations through the shared store while two
// replicas serve requests: the provider never receives a query outside a
// live grant (with the one-second propagation allowance).
func TestReplicasNeverQueryOutsideAGrant(t *testing.T) {
	pg := pgtest.Start(t)
	p := newScopedProvider(t)
	cfg := p.config(t, "store", pg.URL())
	urlA, _ := startServe(t, cfg, "--store-migrate")
	urlB, _ := startServe(t, cfg)
	clients := []*client.Client{}
	for _, u := range []string{urlA, urlB} {
		c, _ := client.New(u, nil)
		clients = append(clients, c)
	}
	type window struct{ from, to time.Time }
	var mu sync.Mutex
	var live []window // when a grant was in force (from its ack to its revocation's ack)
	const n = 1000    // requests per replica, at least; they go on until the last revocation
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var sent atomic.Int64
	for _, c := range clients {
		wg.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-stop:
					if i >= n {
						return
					}
				default:
				}
				_, _ = c.Query(context.Background(), &api.QueryRequest{Goal: "g"})
				sent.Add(1)
			}
		})
	}
	go func() {
		defer close(stop)
		grant := p.grantArgs(pg.URL())
		for i := 0; i < 5; i++ {
			from := time.Now()
			if code, _, errs := runCLI(t, "", grant...); code != exitOK {
				t.Errorf("grant: %s", errs)
				return
			}
			time.Sleep(50 * time.Millisecond)
			if code, _, errs := runCLI(t, "", "consent", "revoke", "wiki", "--store", pg.URL()); code != exitOK {
				t.Errorf("revoke: %s", errs)
				return
			}
			mu.Lock()
			live = append(live, window{from, time.Now().Add(time.Second)})
			mu.Unlock()
			// Two seconds without consent: the last of them, past the
			// one-second allowance, must see no query at all.
			time.Sleep(2 * time.Second)
		}
	}()
	wg.Wait()
	<-stop
	mu.Lock()
	defer mu.Unlock()
	p.mu.Lock()
	arrivals := p.arrivals
	p.mu.Unlock()
	for _, at := range arrivals {
		ok := false
		for _, w := range live {
			if !at.Before(w.from) && !at.After(w.to) {
				ok = true
			}
		}
		if !ok {
			t.Fatalf("a query reached the provider at %v, outside every live grant %v", at, live)
		}
	}
	if len(arrivals) == 0 {
		t.Fatal("no query reached the provider during any grant: the test proved nothing")
	}
	t.Logf("%d requests, %d reached the provider inside %d grant windows", sent.Load(), len(arrivals), len(live))
}

// "store": "file:PATH" in the config (relative to the config file) is the
// local journal, as consent_store is: no database involved.
func TestServeLocalStoreURL(t *testing.T) {
	p := newScopedProvider(t)
	cfg := p.config(t, "store", "file:consent.ndjson")
	journal := filepath.Join(filepath.Dir(cfg), "consent.ndjson")
	url, _ := startServe(t, cfg)
	c, _ := client.New(url, nil)
	if s := queryLeg(t, c); s != "scope_receipt_required" {
		t.Fatalf("before the grant: %s", s)
	}
	if code, _, errs := runCLI(t, "", p.grantArgs("file:"+journal)...); code != exitOK {
		t.Fatalf("grant: %s", errs)
	}
	if s := queryLeg(t, c); s != "frames" {
		t.Fatalf("after the grant in the file: %s", s)
	}
}

// A password, in the URL or in PGPASSWORD, is never printed by a command
// that fails to reach the database (C8).
func TestStorePasswordNeverPrinted(t *testing.T) {
	const pw, envPW = "url-secret-9f3k", "env-secret-7q2m"
	t.Setenv("PGPASSWORD", envPW)
	t.Setenv("PGCONNECT_TIMEOUT", "1")
	for _, url := range []string{"postgres://ctx:" + pw + "@127.0.0.1:1/db?sslmode=disable", "postgres://ctx@127.0.0.1:1/db?sslmode=disable"} {
		for _, args := range storeCommands(url) {
			code, out, errs := runCLI(t, "", args...)
			if code == exitOK {
				t.Fatalf("%v succeeded against a closed port", args)
			}
			if strings.Contains(out+errs, pw) || strings.Contains(out+errs, envPW) {
				t.Fatalf("%v printed a password:\n%s%s", args, out, errs)
			}
			if !strings.Contains(errs, "127.0.0.1") {
				t.Errorf("%v: the error does not name the database it could not reach:\n%s", args, errs)
			}
		}
	}
}

// A --store URL of a scheme ctxkit does not speak is refused by name on
// every command that takes one, never opened as a local journal file of
// that name, and its password is not echoed.
func TestStoreUnknownSchemeRefused(t *testing.T) {
	const url = "mysql://ctx:pw-4k2j@db.internal/ctx"
	dir := t.TempDir()
	t.Chdir(dir)
	for _, args := range storeCommands(url) {
		code, out, errs := runCLI(t, "", args...)
		if code != exitUsage {
			t.Errorf("%v: exit %d, want %d (usage)\n%s%s", args, code, exitUsage, out, errs)
		}
		if !strings.Contains(errs, `unsupported scheme "mysql://"`) {
			t.Errorf("%v: the error does not name the scheme:\n%s", args, errs)
		}
		if strings.Contains(out+errs, "pw-4k2j") {
			t.Errorf("%v printed the password:\n%s%s", args, out, errs)
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) > 0 {
		t.Errorf("a file was created for the URL: %v", entries)
	}
}

// storeCommands is every command line that takes a --store value, pointed
// at url.
func storeCommands(url string) [][]string {
	return [][]string{
		{"consent", "list", "--store", url},
		{"consent", "grant", "wiki", "--store", url, "--scope", "third-party-index", "--grantor", "ada"},
		{"trust", "list", "--store", url},
		{"store", "migrate", "--store", url},
		{"mcp", "--store", url, "."},
		{"query", "--goal", "g", "--store", url, "."},
		{"serve", "--addr", "127.0.0.1:0", "--store", url},
	}
}
