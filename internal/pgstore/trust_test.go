package pgstore_test

import (
	"context"
	"crypto/rand"
	"errors"
	"testing"

	"github.com/ctxkit/ctxkit/internal/pgtest"
	"github.com/ctxkit/ctxkit/trust"
)

// The shared trust key log follows the file store's rules: a key added on
// one host is trusted on another, another key under a bound id is refused
// with ErrKeyExists, a revocation is seen everywhere.
func TestTrustKeysShared(t *testing.T) {
	pg := pgtest.Start(t)
	ctx := context.Background()
	a, b := openStore(t, pg.URL()).TrustKeys(), openStore(t, pg.URL()).TrustKeys()
	k1, _, _ := trust.GenerateSigner(rand.Reader, "2026-a", "")
	k2, _, _ := trust.GenerateSigner(rand.Reader, "2026-a", "")
	if err := a.Add(ctx, "docs", "2026-a", k1.PublicKey()); err != nil {
		t.Fatal(err)
	}
	if err := a.Add(ctx, "docs", "2026-a", k1.PublicKey()); err != nil {
		t.Fatalf("adding the same key again: %v", err)
	}
	if err := b.Add(ctx, "docs", "2026-a", k2.PublicKey()); !errors.Is(err, trust.ErrKeyExists) {
		t.Fatalf("another key under a bound id: %v, want ErrKeyExists", err)
	}
	st, err := b.Load(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if k, ok := st.Key("docs", "2026-a"); !ok || k != k1.PublicKey() || st.Len() != 1 {
		t.Fatalf("b sees %d keys, docs/2026-a=%v", st.Len(), ok)
	}
	if ok, err := b.Revoke(ctx, "docs", "2026-a"); !ok || err != nil {
		t.Fatalf("revoke: %v %v", ok, err)
	}
	if ok, _ := a.Revoke(ctx, "docs", "2026-a"); ok {
		t.Fatal("revoked twice")
	}
	if st, _ := a.Load(ctx); st.Len() != 0 {
		t.Fatalf("a still trusts %d keys", st.Len())
	}
	if err := a.Add(ctx, "docs", "2026-a", k2.PublicKey()); err != nil {
		t.Fatalf("re-binding a revoked id: %v", err)
	}
}
