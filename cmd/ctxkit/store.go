package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/ctxkit/ctxkit/host/consent"
	"github.com/ctxkit/ctxkit/internal/pgstore"
	"github.com/ctxkit/ctxkit/trust"
)

const storeUsage = `usage: ctxkit store migrate --store URL

Applies the schema migrations built into this ctxkit to the PostgreSQL
database at URL (postgres://USER@HOST:PORT/DB; a password, host or user the
URL leaves out comes from the PG* environment: PGPASSWORD, PGHOST ...).
Migrations are versioned and applied in one transaction; a database whose
schema is newer than this binary knows is refused. Credentials are never
printed. See docs/deploy.md.

Examples:
  PGPASSWORD=... ctxkit store migrate --store postgres://ctxkit@db.internal/ctxkit

exit codes: 0 the schema is current; 2 usage error or the migration failed.
`

func runStore(ctx context.Context, args []string, s stdio) int {
	usage := func(w io.Writer) { fmt.Fprint(w, storeUsage) }
	sc, code, ok := splitSubcommand("store", args, usage, s)
	if !ok {
		return code
	}
	if sc.name != "migrate" {
		fmt.Fprintf(s.err, "store: unknown subcommand %q\n\n", sc.name)
		usage(s.err)
		return exitUsage
	}
	rest, code, ok := parseCommand(sc.flags, sc.args, s, usage)
	if !ok {
		return code
	}
	if len(rest) > 0 {
		fmt.Fprintf(s.err, "store migrate: unexpected argument %q\n", rest[0])
		return exitUsage
	}
	url := sc.store
	if _, _, err := isLocalStore(url); err != nil {
		fmt.Fprintf(s.err, "store migrate: %v\n", err)
		return exitUsage
	}
	if !pgstore.IsURL(url) {
		fmt.Fprintln(s.err, "store migrate: --store postgres://... is required (the local store needs no migration)")
		return exitUsage
	}
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	from, to, err := pgstore.Migrate(ctx, url)
	if err != nil {
		fmt.Fprintf(s.err, "store migrate: %v\n", err)
		return exitUsage
	}
	if from == to {
		fmt.Fprintf(s.out, "schema already at version %d; nothing to apply\n", to)
		return exitOK
	}
	fmt.Fprintf(s.out, "schema migrated from version %d to %d\n", from, to)
	return exitOK
}

// sharedConsent is a consent store on the shared database, and what
// closes it.
type sharedConsent struct {
	store   *pgstore.Store
	log     *pgstore.ConsentLog
	consent *consent.Store
	usage   *pgstore.Usage // set by serveStore
}

// Close writes the pending usage, stops the listener and the pool.
func (c *sharedConsent) Close() {
	if c.usage != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		_ = c.usage.Close(ctx)
		cancel()
	}
	c.log.Close()
	c.store.Close()
}

// serveStore opens the shared store serve was pointed at (--store, else
// the config file's "store"); nil when it uses the local journal.
func serveStore(ctx context.Context, s stdio, config, flagURL string, migrate bool) (*sharedConsent, int, bool) {
	url := flagURL
	if url == "" && config != "" {
		cfg, err := loadServeConfig(config)
		if err != nil {
			fmt.Fprintf(s.err, "serve: %v\n", err)
			return nil, exitUsage, false
		}
		url = cfg.Store
	}
	_, ok, err := isLocalStore(url)
	if err != nil {
		fmt.Fprintf(s.err, "serve: %v\n", err)
		return nil, exitUsage, false
	}
	if ok {
		if migrate {
			fmt.Fprintln(s.err, "serve: --store-migrate needs --store postgres://... (the local store has no schema)")
			return nil, exitUsage, false
		}
		return nil, 0, true
	}
	sc, err := openSharedConsent(ctx, url, migrate)
	if err != nil {
		fmt.Fprintf(s.err, "serve: store: %v\n", err)
		return nil, exitUsage, false
	}
	sc.usage = sc.store.Usage()
	return sc, 0, true
}

// openSharedConsent opens the consent store on the database at url,
// migrating first when migrate is set.
func openSharedConsent(ctx context.Context, url string, migrate bool) (*sharedConsent, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	st, err := pgstore.Open(ctx, url, pgstore.Options{Migrate: migrate})
	if err != nil {
		return nil, err
	}
	log := st.ConsentLog()
	cs, err := consent.OpenLog(log)
	if err != nil {
		log.Close()
		st.Close()
		return nil, err
	}
	return &sharedConsent{store: st, log: log, consent: cs}, nil
}

// isLocalStore classifies a --store value (or a config's "store"): the
// local journal at a path, file:PATH or nothing (ok), or the shared database
// at a postgres:// URL (not ok). Any other URL scheme is an error rather than
// a file of that name: "mysql://db" is a mistake, not a journal path. The
// error names only the scheme, since the rest may carry a password (C8).
func isLocalStore(v string) (string, bool, error) {
	if pgstore.IsURL(v) {
		return "", false, nil
	}
	if scheme, _, ok := strings.Cut(v, "://"); ok {
		return "", false, fmt.Errorf("--store: unsupported scheme %q: want postgres://..., file:PATH or a path", scheme+"://")
	}
	return strings.TrimPrefix(v, "file:"), true, nil
}

// openKeyStore opens the trust key store named by a --store value: the
// file at a path (or file:PATH), the shared database at a postgres:// URL.
func openKeyStore(ctx context.Context, v string) (trust.KeyStore, func(), error) {
	local, ok, err := isLocalStore(v)
	if err != nil {
		return nil, nil, err
	}
	if ok {
		return trust.FileKeys{Path: local}, func() {}, nil
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	st, err := pgstore.Open(ctx, v, pgstore.Options{})
	if err != nil {
		return nil, nil, err
	}
	return st.TrustKeys(), st.Close, nil
}

// localStorePath is the journal a local --store (or config "store") value
// names: file:PATH or PATH; "" when neither names one.
func localStorePath(flagValue, configValue string) string {
	v := flagValue
	if v == "" {
		v = configValue
	}
	p, ok, err := isLocalStore(v)
	if err != nil || !ok {
		return ""
	}
	return p
}
