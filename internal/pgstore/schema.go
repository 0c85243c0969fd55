package pgstore

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"sort"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// migration is one versioned schema step: migrations/NNNN_name.sql.
type migration struct {
	version int
	name    string
	sql     string
}

func migrations() ([]migration, error) {
	names, err := fs.Glob(migrationFiles, "migrations/*.sql")
	if err != nil {
		return nil, err
	}
	var out []migration
	for _, n := range names {
		base := strings.TrimPrefix(n, "migrations/")
		num, _, ok := strings.Cut(base, "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil || v <= 0 {
			return nil, fmt.Errorf("pgstore: migration %s is not named NNNN_name.sql", base)
		}
		b, err := migrationFiles.ReadFile(n)
		if err != nil {
			return nil, err
		}
		out = append(out, migration{version: v, name: base, sql: string(b)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].version < out[j].version })
	for i, m := range out {
		if m.version != i+1 {
			return nil, fmt.Errorf("pgstore: migrations are not numbered 1..n: %s", m.name)
		}
	}
	return out, nil
}

// schemaVersion is the newest schema this binary knows.
func schemaVersion() int {
	ms, err := migrations()
	if err != nil || len(ms) == 0 {
		return 0
	}
	return ms[len(ms)-1].version
}

// errSchemaNewer: the database's schema is newer than this binary knows;
// running against it could misread rows written by the newer version.
var errSchemaNewer = errors.New("the database schema is newer than this ctxkit knows")

// errSchemaOld: the database's schema is older than this binary needs
// (or absent); apply the migrations with ctxkit store migrate.
var errSchemaOld = errors.New("the database schema is older than this ctxkit needs")

// migrateLock is the advisory lock key that serialises migrations (two
// replicas started with --store-migrate at once apply each step once).
const migrateLock = 0x637478_6b6974 // "ctxkit"

const versionTable = `CREATE TABLE IF NOT EXISTS ctxkit_schema (
    version    int NOT NULL,
    applied_at timestamptz NOT NULL DEFAULT now()
)`

// currentVersion reads the applied schema version (0: none).
func currentVersion(ctx context.Context, q pgx.Tx) (int, error) {
	var exists bool
	if err := q.QueryRow(ctx, `SELECT to_regclass('ctxkit_schema') IS NOT NULL`).Scan(&exists); err != nil {
		return 0, err
	}
	if !exists {
		return 0, nil
	}
	var v int
	if err := q.QueryRow(ctx, `SELECT coalesce(max(version), 0) FROM ctxkit_schema`).Scan(&v); err != nil {
		return 0, err
	}
	return v, nil
}

// Migrate applies, in one transaction, every migration newer than the
// database's schema, and returns the versions before and after. A schema
// newer than this binary knows is refused with errSchemaNewer.
func migrate(ctx context.Context, pool *pgxpool.Pool) (from, to int, err error) {
	ms, err := migrations()
	if err != nil {
		return 0, 0, err
	}
	err = pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, int64(migrateLock)); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, versionTable); err != nil {
			return err
		}
		if from, err = currentVersion(ctx, tx); err != nil {
			return err
		}
		if from > len(ms) {
			return fmt.Errorf("%w: database at version %d, this binary knows up to %d", errSchemaNewer, from, len(ms))
		}
		to = from
		for _, m := range ms[from:] {
			if _, err := tx.Exec(ctx, m.sql); err != nil {
				return fmt.Errorf("migration %s: %w", m.name, err)
			}
			if _, err := tx.Exec(ctx, `INSERT INTO ctxkit_schema (version) VALUES ($1)`, m.version); err != nil {
				return err
			}
			to = m.version
		}
		return nil
	})
	return from, to, err
}

// checkVersion refuses a schema other than the one this binary knows.
func checkVersion(ctx context.Context, pool *pgxpool.Pool) error {
	want := schemaVersion()
	var got int
	err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		var err error
		got, err = currentVersion(ctx, tx)
		return err
	})
	switch {
	case err != nil:
		return err
	case got > want:
		return fmt.Errorf("%w: database at version %d, this binary knows up to %d; upgrade ctxkit", errSchemaNewer, got, want)
	case got < want:
		return fmt.Errorf("%w: database at version %d, this binary needs %d; run ctxkit store migrate --store URL (or serve --store-migrate)", errSchemaOld, got, want)
	}
	return nil
}
