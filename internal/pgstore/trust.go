package pgstore

import (
	"context"
	"fmt"

	"github.com/ctxkit/ctxkit/trust"
	"github.com/jackc/pgx/v5"
)

// trustLock serialises trust-key changes (see the package doc).
const trustLock = 0x7472757374 // "trust"

// trustKeys is the trust key log in the database: adds and revocations
// appended in order, the store being their result.
type trustKeys struct{ s *Store }

// TrustKeys returns the store's trust key log, a trust.KeyStore.
func (s *Store) TrustKeys() trust.KeyStore { return &trustKeys{s: s} }

// Where names the database (never credentials).
func (k *trustKeys) Where() string { return k.s.Where() }

// Load replays the log into a trust.Store.
func (k *trustKeys) Load(ctx context.Context) (*trust.Store, error) {
	st, err := replayTrust(ctx, k.s.pool)
	if err != nil {
		return nil, k.s.wrap("load trust keys", err)
	}
	return st, nil
}

type querier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}

func replayTrust(ctx context.Context, q querier) (*trust.Store, error) {
	rows, err := q.Query(ctx, `SELECT seq, op, provider_id, key_id, public_key FROM ctxkit_trust_log ORDER BY seq`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	st := trust.NewStore()
	for rows.Next() {
		var seq int64
		var op, provider, keyID, pub string
		if err := rows.Scan(&seq, &op, &provider, &keyID, &pub); err != nil {
			return nil, err
		}
		if op == "revoke" {
			st.Revoke(provider, keyID)
			continue
		}
		key, err := trust.ParsePublicKey(pub)
		if err == nil {
			err = st.Add(provider, keyID, key)
		}
		if err != nil {
			return nil, fmt.Errorf("%w: trust log row %d: %w", trust.ErrCorruptStore, seq, err)
		}
	}
	return st, rows.Err()
}

// change runs f on the current keys under the trust lock and appends the
// row it returns (none when op is ""), committed before it returns.
func (k *trustKeys) change(ctx context.Context, f func(st *trust.Store) (op string, err error), provider, keyID, pub string) (bool, error) {
	appended := false
	err := pgx.BeginFunc(ctx, k.s.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, int64(trustLock)); err != nil {
			return err
		}
		st, err := replayTrust(ctx, tx)
		if err != nil {
			return err
		}
		op, err := f(st)
		if err != nil || op == "" {
			return err
		}
		appended = true
		_, err = tx.Exec(ctx, `INSERT INTO ctxkit_trust_log (op, provider_id, key_id, public_key) VALUES ($1, $2, $3, $4)`, op, provider, keyID, pub)
		return err
	})
	return appended, err
}

// Add trusts key (Store.Add's rules, checked against the current log).
func (k *trustKeys) Add(ctx context.Context, provider, keyID string, key trust.PublicKey) error {
	_, err := k.change(ctx, func(st *trust.Store) (string, error) {
		if old, ok := st.Key(provider, keyID); ok && old == key {
			return "", nil
		}
		if err := st.Add(provider, keyID, key); err != nil {
			return "", err
		}
		return "add", nil
	}, provider, keyID, key.String())
	if err != nil {
		return k.s.wrap("add trust key", err)
	}
	return nil
}

// Revoke appends a revocation when the key is trusted.
func (k *trustKeys) Revoke(ctx context.Context, provider, keyID string) (bool, error) {
	ok, err := k.change(ctx, func(st *trust.Store) (string, error) {
		if _, ok := st.Key(provider, keyID); !ok {
			return "", nil
		}
		return "revoke", nil
	}, provider, keyID, "")
	if err != nil {
		return false, k.s.wrap("revoke trust key", err)
	}
	return ok, nil
}
