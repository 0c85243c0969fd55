// Package pgstore keeps ctxkit's shared state in PostgreSQL: the consent
// log (consent.Log), served-frame usage and the trust key log, so that
// several replicas of ctxkit serve behind a load balancer agree on them.
//
// Every table is append-only and ordered by the database's sequences.
// Writers take one advisory lock per table for the length of their
// transaction, so sequence order is commit order and a reader that has
// seen position n never misses an entry committed below it later.
// Credentials come from the URL or the PG* environment and never appear in
// an error this package returns.
package pgstore

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"strings"

	"github.com/ctxkit/ctxkit/host"
	"github.com/jackc/pgx/v5/pgxpool"
)

// IsURL reports whether store names a PostgreSQL database
// (postgres:// or postgresql://) rather than a local file.
func IsURL(store string) bool {
	return strings.HasPrefix(store, "postgres://") || strings.HasPrefix(store, "postgresql://")
}

// Options tunes Open; the zero value checks the schema and does not
// migrate.
type Options struct {
	// Migrate applies the embedded migrations before use.
	Migrate bool
}

// Store is an open connection pool to the shared database.
type Store struct {
	pool    *pgxpool.Pool
	secrets []string
	where   string
}

// Open connects to the database at rawURL (PG* environment variables fill
// what the URL leaves out) and checks its schema: one newer than this
// binary knows is refused (errSchemaNewer), an older one too unless
// opts.Migrate is set (errSchemaOld).
func Open(ctx context.Context, rawURL string, opts Options) (*Store, error) {
	cfg, err := pgxpool.ParseConfig(rawURL)
	if err != nil {
		// The parser may quote the URL, password included.
		return nil, fmt.Errorf("pgstore: the store URL %s does not parse: %w", redactURL(rawURL), scrub(err, rawURL, passwordOf(rawURL), os.Getenv("PGPASSWORD")))
	}
	s := &Store{secrets: []string{rawURL, cfg.ConnConfig.Password, os.Getenv("PGPASSWORD")}}
	s.where = fmt.Sprintf("postgres %s:%d/%s", cfg.ConnConfig.Host, cfg.ConnConfig.Port, cfg.ConnConfig.Database)
	if cfg.MaxConns < 8 {
		cfg.MaxConns = 8
	}
	s.pool, err = pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, s.wrap("connect to "+s.where, err)
	}
	if err := s.pool.Ping(ctx); err != nil {
		s.pool.Close()
		return nil, s.wrap("connect to "+s.where, err)
	}
	if opts.Migrate {
		if _, _, err := migrate(ctx, s.pool); err != nil {
			s.pool.Close()
			return nil, s.wrap("migrate", err)
		}
	}
	if err := checkVersion(ctx, s.pool); err != nil {
		s.pool.Close()
		return nil, s.wrap("check the schema", err)
	}
	return s, nil
}

// Migrate applies the embedded migrations the database lacks and returns
// the schema versions before and after.
func Migrate(ctx context.Context, rawURL string) (from, to int, err error) {
	cfg, err := pgxpool.ParseConfig(rawURL)
	if err != nil {
		return 0, 0, fmt.Errorf("pgstore: the store URL %s does not parse: %w", redactURL(rawURL), scrub(err, rawURL, passwordOf(rawURL), os.Getenv("PGPASSWORD")))
	}
	s := &Store{secrets: []string{rawURL, cfg.ConnConfig.Password, os.Getenv("PGPASSWORD")}}
	s.pool, err = pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return 0, 0, s.wrap("connect", err)
	}
	defer s.pool.Close()
	from, to, err = migrate(ctx, s.pool)
	if err != nil {
		return from, to, s.wrap("migrate", err)
	}
	return from, to, nil
}

// Where names the database (host, port, database; never credentials).
func (s *Store) Where() string { return s.where }

// Close closes the pool.
func (s *Store) Close() { s.pool.Close() }

// wrap names the operation and scrubs the credentials from err.
func (s *Store) wrap(op string, err error) error {
	return fmt.Errorf("pgstore: %s: %w", op, scrub(err, s.secrets...))
}

func scrub(err error, secrets ...string) error { return host.ScrubError(err, secrets...) }

func passwordOf(rawURL string) string {
	u, err := url.Parse(rawURL)
	if err != nil || u.User == nil {
		return ""
	}
	p, _ := u.User.Password()
	return p
}

// redactURL spells a store URL with its password replaced, for messages.
func redactURL(rawURL string) string {
	u, err := url.Parse(rawURL)
	if err != nil {
		return "(unparsable URL)"
	}
	return u.Redacted()
}
