package host

import (
	"bytes"
	"context"
	"testing"

	"github.com/ctxkit/ctxkit/frame"
	"github.com/ctxkit/ctxkit/trust"
	"github.com/ctxkit/ctxkit/wire"
)

// signing serves frames with a frame attestation for each, signed under its
// declared name "honest".
type signing struct {
	honest
	s *trust.Signer
}

func (p *signing) Query(ctx context.Context, q *frame.Query) (*wire.Result, error) {
	res, _ := p.honest.Query(ctx, q)
	for i := range res.Frames {
		att := p.s.SignFrame("honest", &res.Frames[i], "2026-07-21T00:00:00Z")
		res.FrameAttestations = append(res.FrameAttestations, wire.FrameAttestation{Frame: res.Frames[i].Identity("honest"), Attestation: &att})
	}
	return res, nil
}

func TestComposeCarriesLedger(t *testing.T) {
	signer, _, err := trust.GenerateSigner(bytes.NewReader(make([]byte, 64)), "k1", "attester")
	if err != nil {
		t.Fatal(err)
	}
	f := mkFrame("f", "signed evidence", 0.5)
	f.ContentDigest = "sha256:" + string(make64('a'))
	store := trust.NewStore()
	if err := store.Add("signed", "k1", signer.PublicKey()); err != nil {
		t.Fatal(err)
	}
	compose := func(st *trust.Store) ([]frame.ID, bool) {
		h := New(&Options{Trust: st})
		defer h.Close(context.Background())
		h.AddInProcess("signed", &signing{honest{frames: []frame.Frame{f}}, signer})
		res := h.QueryAll(context.Background(), probe()).Compose(1000, nil)
		att := res.Audit.Attested()
		return res.Audit.Included(), len(att) == 1
	}
	inc, attested := compose(store)
	if !attested || len(inc) != 1 {
		t.Fatalf("with the key trusted: included %v, attested %v", inc, attested)
	}
	inc2, attested2 := compose(nil)
	if attested2 || len(inc2) != 1 || inc2[0] != inc[0] {
		t.Fatalf("without trust: included %v, attested %v (selection must not change)", inc2, attested2)
	}
}
