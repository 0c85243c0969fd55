package pgstore_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/ctxkit/ctxkit/frame"
	"github.com/ctxkit/ctxkit/host/consent"
	"github.com/ctxkit/ctxkit/internal/pgstore"
	"github.com/ctxkit/ctxkit/internal/pgtest"
)

var scoped = frame.ProviderInfo{Name: "wiki", DataFlow: frame.DataFlow{Egress: true, EgressScopes: []frame.EgressScope{frame.ScopeThirdPartyIndex}}}

func subject() consent.Subject {
	return consent.Subject{ID: "wiki", Name: "wiki", Endpoint: "https://wiki.example/cgp"}
}

func receipt() consent.Receipt {
	return consent.Receipt{ProviderID: "wiki", Scope: frame.ScopeThirdPartyIndex, ProviderName: "wiki",
		Endpoint: "https://wiki.example/cgp", Grantor: consent.Grantor{Kind: "human", ID: "alice"}}
}

// openStore opens the shared database, migrating it, for the rest of the test.
func openStore(t testing.TB, url string) *pgstore.Store {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	st, err := pgstore.Open(ctx, url, pgstore.Options{Migrate: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(st.Close)
	return st
}

// replica opens a consent store on the shared database as one replica of
// ctxkit serve would.
func replica(t testing.TB, url string) (*consent.Store, *pgstore.ConsentLog) {
	t.Helper()
	log := openStore(t, url).ConsentLog()
	t.Cleanup(log.Close)
	cs, err := consent.OpenLog(log)
	if err != nil {
		t.Fatal(err)
	}
	return cs, log
}

func waitFor(t *testing.T, within time.Duration, what string, cond func() bool) time.Duration {
	t.Helper()
	start := time.Now()
	for !cond() {
		if time.Since(start) > within {
			t.Fatalf("%s: not within %v", what, within)
		}
		time.Sleep(5 * time.Millisecond)
	}
	return time.Since(start)
}

func permitted(cs *consent.Store) bool { return cs.Evaluate(subject(), scoped).Permitted }

// A grant on one replica permits on the other, a revocation on the other
// stops the first within a second, and the listener's cache is what
// answers in between (no round trip while nothing changed).
func TestConsentAcrossReplicas(t *testing.T) {
	pg := pgtest.Start(t)
	a, logA := replica(t, pg.URL())
	b, _ := replica(t, pg.URL())
	waitFor(t, 5*time.Second, "listener up", logA.Listening)
	if permitted(a) || permitted(b) {
		t.Fatal("permitted before any grant")
	}
	if err := b.Grant(receipt()); err != nil {
		t.Fatal(err)
	}
	waitFor(t, time.Second, "grant on b seen by a", func() bool { return permitted(a) })
	if _, err := b.Revoke("wiki", ""); err != nil {
		t.Fatal(err)
	}
	d := waitFor(t, time.Second, "revocation on b seen by a", func() bool { return !permitted(a) })
	t.Logf("revocation reached the other replica in %v", d)
	if got := len(a.Receipts()); got != 0 {
		t.Fatalf("a lists %d receipts after the revocation", got)
	}
}

// The database stopped: a decision that needs consent fails closed with a
// reason naming the shared store, one that needs none still passes;
// restarted, the replicas recover without being reopened.
func TestConsentFailsClosedWhileTheDatabaseIsDown(t *testing.T) {
	pg := pgtest.Start(t)
	a, logA := replica(t, pg.URL())
	if err := a.Grant(receipt()); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 5*time.Second, "listener up", logA.Listening)
	if !permitted(a) {
		t.Fatal("not permitted after the grant")
	}
	pg.Stop()
	waitFor(t, 2*time.Second, "fail closed", func() bool { return !permitted(a) })
	d := a.Evaluate(subject(), scoped)
	if !strings.Contains(d.Reason, "shared consent store cannot be read") {
		t.Fatalf("reason %q does not say the store is unreadable", d.Reason)
	}
	local := frame.ProviderInfo{Name: "files"}
	if !a.Evaluate(consent.Subject{ID: "files"}, local).Permitted {
		t.Fatal("a provider needing no consent was refused while the database was down")
	}
	if err := a.Grant(receipt()); err == nil {
		t.Fatal("a grant was acknowledged while the database was down")
	}
	if err := pg.Restart(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 5*time.Second, "recover after restart", func() bool { return permitted(a) })
}

// A schema newer than the binary knows is refused.
func TestRefusesNewerSchema(t *testing.T) {
	pg := pgtest.Start(t)
	ctx := context.Background()
	st := openStore(t, pg.URL())
	if err := st.ExecForTest(ctx, `INSERT INTO ctxkit_schema (version) VALUES (9999)`); err != nil {
		t.Fatal(err)
	}
	st.Close()
	_, err := pgstore.Open(ctx, pg.URL(), pgstore.Options{})
	if !errors.Is(err, pgstore.ErrSchemaNewer) {
		t.Fatalf("Open on a newer schema: %v, want ErrSchemaNewer", err)
	}
	if _, _, err := pgstore.Migrate(ctx, pg.URL()); !errors.Is(err, pgstore.ErrSchemaNewer) {
		t.Fatalf("Migrate on a newer schema: %v, want ErrSchemaNewer", err)
	}
}

// Without migrations the schema is refused as too old, naming the command.
func TestRefusesMissingSchema(t *testing.T) {
	pg := pgtest.Start(t)
	_, err := pgstore.Open(context.Background(), pg.URL(), pgstore.Options{})
	if !errors.Is(err, pgstore.ErrSchemaOld) || !strings.Contains(err.Error(), "ctxkit store migrate") {
		t.Fatalf("Open on an empty database: %v", err)
	}
}

// A password in the URL never appears in an error.
func TestPasswordNeverInErrors(t *testing.T) {
	const pw = "s3cret-pass-word"
	url := "postgres://ctx:" + pw + "@127.0.0.1:1/db?sslmode=disable&connect_timeout=1"
	_, err := pgstore.Open(context.Background(), url, pgstore.Options{})
	if err == nil || strings.Contains(err.Error(), pw) {
		t.Fatalf("error %v", err)
	}
	_, err = pgstore.Open(context.Background(), "postgres://ctx:"+pw+"@[::1/x", pgstore.Options{})
	if err == nil || strings.Contains(err.Error(), pw) {
		t.Fatalf("error %v", err)
	}
}

// The notification connection killed by the server (the database stays
// up): a revocation committed while it is down, whose notification is
// lost, still stops egress within a second (the replica reads the
// database from the moment it notices the loss until the listener is
// back, and once more then), and the listener comes back by itself.
func TestLostNotificationsNeverServeTheStaleCache(t *testing.T) {
	pg := pgtest.Start(t)
	a, logA := replica(t, pg.URL())
	b, _ := replica(t, pg.URL())
	ctx := context.Background()
	admin, err := pgstore.Open(ctx, pg.URL(), pgstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	for round := 0; round < 3; round++ {
		if err := b.Grant(receipt()); err != nil {
			t.Fatal(err)
		}
		waitFor(t, 5*time.Second, "listener up", logA.Listening)
		waitFor(t, time.Second, "grant seen", func() bool { return permitted(a) })
		if err := admin.ExecForTest(ctx, `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE query LIKE 'LISTEN%' AND pid <> pg_backend_pid()`); err != nil {
			t.Fatal(err)
		}
		if _, err := b.Revoke("wiki", ""); err != nil {
			t.Fatal(err)
		}
		waitFor(t, time.Second, "revocation seen with its notification lost", func() bool { return !permitted(a) })
	}
	waitFor(t, 5*time.Second, "listener back", logA.Listening)
}
