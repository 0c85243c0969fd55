package trust

import (
	"bytes"
	"strings"
	"testing"

	"github.com/ctxkit/ctxkit/frame"
	"github.com/ctxkit/ctxkit/wire"
)

// TestAttestationsOnTheWire: a result signed per frame and at its root
// survives the wire codec — encoded, decoded, checked — and a result
// without attestations carries none of the members (older peers see the
// envelope they always saw).
func TestAttestationsOnTheWire(t *testing.T) {
	s, err := NewSigner(bytes.Repeat([]byte{9}, 32), "k1", "docs inc")
	if err != nil {
		t.Fatal(err)
	}
	store := NewStore()
	if err := store.Add("local-docs", "k1", s.PublicKey()); err != nil {
		t.Fatal(err)
	}
	frames := []frame.Frame{
		{ID: "b", Kind: frame.KindDoc, Title: "B", Content: "bee", ContentDigest: "sha256:" + strings.Repeat("b", 64), Score: 0.5, TokenCost: 1, CitationLabel: "b",
			Provenance: []frame.Provenance{{Type: "file", URI: "file:///b", Range: "L1-2"}}},
		{ID: "a", Kind: frame.KindDoc, Title: "A", Content: "ay", Score: 1, TokenCost: 1, CitationLabel: "a"},
	}
	ids, cs := resultCommitments("docs", frames)
	root := s.signResult("docs", frames, "2026-11-29T12:00:00Z")
	res := wire.Result{Frames: frames, ResultAttestation: &root}
	for i, id := range ids {
		p, err := prove(cs, i)
		if err != nil {
			t.Fatal(err)
		}
		w := p.wire()
		fa := wire.FrameAttestation{Frame: id, InclusionProof: &w}
		if i == 0 {
			att := s.SignFrame("docs", &frames[1], "2026-11-29T12:00:00Z") // ids[0] is "a"
			fa.Attestation = &att
		}
		res.FrameAttestations = append(res.FrameAttestations, fa)
	}
	b, err := wire.Marshal(&wire.Frames{Result: res})
	if err != nil {
		t.Fatal(err)
	}
	for _, member := range []string{`"frame_attestations":`, `"result_attestation":`, `"inclusion_proof":`, `"sibling":"sha256:`, `"signed_commitment":"sha256:`} {
		if !bytes.Contains(b, []byte(member)) {
			t.Fatalf("encoded envelope lacks %s: %s", member, b)
		}
	}
	env, err := wire.Unmarshal(b)
	if err != nil {
		t.Fatal(err)
	}
	got := env.(*wire.Frames).Result
	states := checkResult(store, "local-docs", "docs", &got)
	for i, st := range states {
		if !st.IsAttested() || st.CoversContent() != (got.Frames[i].ContentDigest != "") {
			t.Fatalf("frame %s after the wire: %#v", got.Frames[i].ID, st)
		}
	}

	plain, err := wire.Marshal(&wire.Frames{Result: wire.Result{Frames: frames}})
	if err != nil {
		t.Fatal(err)
	}
	for _, member := range []string{"frame_attestations", "result_attestation", "attester_keys"} {
		if bytes.Contains(plain, []byte(member)) {
			t.Fatalf("unsigned result carries %s: %s", member, plain)
		}
	}
}
