package trust_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"fmt"
	"os"
	"path/filepath"

	"github.com/ctxkit/ctxkit/frame"
	"github.com/ctxkit/ctxkit/trust"
	"github.com/ctxkit/ctxkit/wire"
)

// A provider signs a frame; the host, whose operator trusted the
// provider's key, checks it. Editing the frame afterwards is detected.
func ExampleCheck() {
	signer, _ := trust.NewSigner(bytes.Repeat([]byte{42}, 32), "2026-key", "Example Docs Inc.")

	store := trust.NewStore()
	_ = store.Add("docs", "2026-key", signer.PublicKey())

	f := frame.Frame{
		ID: "frame:retry", Kind: frame.KindDoc, Title: "Retry policy",
		Content:       "Retry three times.",
		ContentDigest: "sha256:5f0c1ae5b8b0b1b1d3f3c3c2a4e6f0e1d2c3b4a5968778695a4b3c2d1e0f1a2b",
		Provenance:    []frame.Provenance{{Type: "file", URI: "file:///docs/retry.md", Range: "L1-3"}},
	}
	att := signer.SignFrame("docs", &f, "2026-11-29T12:00:00Z")

	st := trust.Check(store, "docs", &f, &att)
	fmt.Println(st, st.KeyID(), st.CoversContent())

	f.Provenance[0].Range = "L1-30"
	fmt.Println(trust.Check(store, "docs", &f, &att), trust.Check(store, "docs", &f, &att).Verdict())
	// Output:
	// attested 2026-key true
	// invalid commitment_mismatch
}

// A ledger built from a whole frames result records one state per frame;
// frames nobody checked read as not_checked.
func ExampleLedger() {
	signer, _ := trust.NewSigner(bytes.Repeat([]byte{7}, 32), "k1", "")
	store := trust.NewStore()
	_ = store.Add("docs", "k1", signer.PublicKey())

	signed := frame.Frame{ID: "a", ContentDigest: "sha256:" + fmt.Sprintf("%064x", 1)}
	plain := frame.Frame{ID: "b"}
	att := signer.SignFrame("docs", &signed, "2026-11-29T12:00:00Z")
	res := &wire.Result{
		Frames:            []frame.Frame{signed, plain},
		FrameAttestations: []wire.FrameAttestation{{Frame: signed.Identity("docs"), Attestation: &att}},
	}

	ledger := trust.NewLedger()
	ledger.AddResult(store, "docs", "docs", res)
	for _, e := range ledger.Entries() {
		fmt.Println(e.Frame.Frame, e.State)
	}
	fmt.Println(ledger.State(frame.ID{Provider: "other", Frame: "x"}))
	// Output:
	// a attested
	// b unattested
	// not_checked
}

// ParsePublicKey applies the strict checks: lowercase hex only, canonical,
// not a small-order point.
func ExampleParsePublicKey() {
	k, err := trust.ParsePublicKey("d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a")
	fmt.Println(k.Fingerprint(), err)
	_, err = trust.ParsePublicKey("0100000000000000000000000000000000000000000000000000000000000000")
	fmt.Println(err)
	// Output:
	// sha256:21fe31dfa154a261626bf854046fd2271b7bed4b6abe45aa58877ef47f9721b9 <nil>
	// trust: public key: malformed ed25519 public key: point of small order
}

// FileKeys is the local KeyStore: each change is saved to the file before
// it returns, and Load reads what is trusted now.
func ExampleFileKeys() {
	dir, _ := os.MkdirTemp("", "trust-example")
	defer os.RemoveAll(dir)
	var ks trust.KeyStore = trust.FileKeys{Path: filepath.Join(dir, "trust.json")}
	ctx := context.Background()
	signer, _, _ := trust.GenerateSigner(rand.Reader, "2026-a", "")
	_ = ks.Add(ctx, "docs", "2026-a", signer.PublicKey())
	st, _ := ks.Load(ctx)
	fmt.Println(st.Len())
	ok, _ := ks.Revoke(ctx, "docs", "2026-a")
	st, _ = ks.Load(ctx)
	fmt.Println(ok, st.Len())
	// Output:
	// 1
	// true 0
}
