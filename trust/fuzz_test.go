package trust

import (
	"bytes"
	"crypto/ed25519"
	"encoding/json"
	"testing"
	"unicode/utf8"

	"github.com/ctxkit/ctxkit/frame"
	"github.com/ctxkit/ctxkit/wire"
)

// FuzzCheck feeds arbitrary attestation members, frame identity and
// provenance, and an arbitrary inclusion proof to the verifier. Properties:
// no panic; the same input gives the same state; Attested only when the
// signed commitment is exactly the recomputed one and the signature
// verifies under the trusted key; the frame is never modified; checkResult
// returns one state per frame; marking an empty provenance member present
// (empties, a ProvenanceMember bit set) changes the commitment, and the
// link's JSON round trip keeps its encoding.
func FuzzCheck(f *testing.F) {
	s := testSigner(f, 1)
	good := sampleFrame("a", true)
	att := s.SignFrame("prov", &good, issued)
	f.Add(att.SignedCommitment, att.KeyID, att.Algorithm, att.Signature, good.ID, good.ContentDigest, "file", "file:///r/a", "L1-2", uint64(0), uint64(1), "", false, uint8(0))
	f.Add(att.SignedCommitment, att.KeyID, "ed25519", att.Signature[:64], "a", "", "", "", "", uint64(3), uint64(2), "sha256:00", true, uint8(0))
	f.Add("sha256:"+att.SignedCommitment, "nope", "rsa", "ZZ", "", "", "x", "", "", uint64(1), uint64(1<<63), att.SignedCommitment, true, uint8(0))
	root := s.signResult("prov", []frame.Frame{good}, issued)
	f.Add(root.SignedCommitment, root.KeyID, root.Algorithm, root.Signature, good.ID, good.ContentDigest, "file", "file:///r/a", "L1-2", uint64(0), uint64(1), "", false, uint8(0))
	// A link with present-but-empty members, signed over the commitment
	// that covers them.
	empty := good
	empty.Provenance = []frame.Provenance{{Type: "file"}}
	empty.Provenance[0].Set(frame.MemberURI, "")
	empty.Provenance[0].Set(frame.MemberBy, "")
	ea := s.SignFrame("prov", &empty, issued)
	f.Add(ea.SignedCommitment, ea.KeyID, ea.Algorithm, ea.Signature, good.ID, good.ContentDigest, "file", "", "", uint64(0), uint64(1), "", false, uint8(frame.MemberURI|frame.MemberBy))

	st := trustedStore(f, "prov", s)
	f.Fuzz(func(t *testing.T, commitment, keyID, alg, sig, frameID, digest, ptype, puri, prange string, leafIndex, leafCount uint64, sibling string, left bool, empties uint8) {
		fr := frame.Frame{ID: frameID, ContentDigest: digest, Provenance: []frame.Provenance{{Type: ptype, URI: puri, Range: prange}}}
		unmarked := frameCommitment("prov", &fr)
		link := &fr.Provenance[0]
		marked := false
		for _, m := range []frame.ProvenanceMember{frame.MemberURI, frame.MemberRange, frame.MemberDigest, frame.MemberMethod, frame.MemberBy} {
			if empties&uint8(m) != 0 && !link.Has(m) {
				link.Set(m, "")
				marked = true
			}
		}
		// Marking an empty member present changes the commitment, and the
		// link's JSON round trip keeps which members are present and, when
		// its strings are valid UTF-8 (JSON replaces invalid bytes), its
		// link encoding.
		if (frameCommitment("prov", &fr) == unmarked) == marked {
			t.Fatalf("marks %08b on %#v: commitment unchanged = %v", empties, *link, !marked)
		}
		if lb, err := json.Marshal(*link); err != nil {
			t.Fatal(err)
		} else {
			var back frame.Provenance
			if err := json.Unmarshal(lb, &back); err != nil {
				t.Fatalf("link %s does not decode: %v", lb, err)
			}
			for _, m := range []frame.ProvenanceMember{frame.MemberURI, frame.MemberRange, frame.MemberDigest, frame.MemberMethod, frame.MemberBy} {
				if back.Has(m) != link.Has(m) {
					t.Fatalf("link %s: member %v present %v after the round trip, %v before", lb, m, back.Has(m), link.Has(m))
				}
			}
			if utf8.ValidString(ptype) && utf8.ValidString(puri) && utf8.ValidString(prange) && !bytes.Equal(encodeLink(back), encodeLink(*link)) {
				t.Fatalf("link %s does not round-trip its encoding", lb)
			}
		}
		a := wire.Attestation{SignedCommitment: commitment, KeyID: keyID, Algorithm: alg, Signature: sig, AttesterID: "x", IssuedAt: issued}
		before, _ := json.Marshal(fr)

		got := Check(st, "prov", &fr, &a)
		if again := Check(st, "prov", &fr, &a); again != got {
			t.Fatalf("nondeterministic: %v then %v", got, again)
		}
		if got.IsAttested() {
			c := frameCommitment("prov", &fr)
			if commitment != c.String() {
				t.Fatalf("attested with commitment %q, recomputed %v", commitment, c)
			}
			raw := make([]byte, 64)
			if !decodeLowerHex(raw, sig) || !ed25519.Verify(s.PublicKey().bytes(), c[:], raw) {
				t.Fatal("attested without a verifying signature")
			}
			if got.CoversContent() != (digest != "") {
				t.Fatal("covers_content disagrees with the digest")
			}
		}
		proof := wire.InclusionProof{LeafIndex: leafIndex, LeafCount: leafCount}
		if sibling != "" {
			proof.Path = []wire.ProofStep{{Sibling: sibling, SiblingIsLeft: left}}
		}
		ist := checkInclusion(st, "prov", "prov", &fr, proof, &a)
		if ist.IsAttested() {
			p, err := parseProof(proof)
			if err != nil {
				t.Fatal("attested through an unparseable proof")
			}
			r, err := rootFromProof(frameCommitment("prov", &fr), p)
			if err != nil || r.String() != commitment {
				t.Fatal("attested through a proof that does not reach the signed root")
			}
		}
		res := &wire.Result{Frames: []frame.Frame{fr, fr}, FrameAttestations: []wire.FrameAttestation{{Frame: fr.Identity("prov"), Attestation: &a, InclusionProof: &proof}}, ResultAttestation: &a}
		states := checkResult(st, "prov", "prov", res)
		if len(states) != 2 || states[0] != got || states[1] != got {
			t.Fatalf("CheckResult %v, Check %v", states, got)
		}
		after, _ := json.Marshal(fr)
		if !bytes.Equal(before, after) {
			t.Fatal("check modified the frame")
		}
		if b, err := json.Marshal(got); err != nil {
			t.Fatalf("state does not encode: %v", err)
		} else {
			var back State
			if err := json.Unmarshal(b, &back); err != nil || back != got {
				t.Fatalf("state JSON round trip: %s %v", b, err)
			}
		}
	})
}

// FuzzStoreJSON: loading never panics; anything accepted re-encodes and
// reloads to the same keys.
func FuzzStoreJSON(f *testing.F) {
	st := NewStore()
	st.Add("p", "k", testSigner(f, 1).PublicKey())
	b, _ := st.MarshalJSON()
	f.Add(b)
	f.Add([]byte(`{"format":"ctxkit-trust-store/1","providers":{}}`))
	f.Add([]byte(`{"format":"ctxkit-trust-store/1","providers":{"p":{"k":{"public_key":"00"}}}}`))
	f.Add([]byte(``))
	f.Fuzz(func(t *testing.T, data []byte) {
		var s Store
		if err := s.UnmarshalJSON(data); err != nil {
			return
		}
		out, err := s.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		var again Store
		if err := again.UnmarshalJSON(out); err != nil {
			t.Fatalf("re-encoded store does not load: %v\n%s", err, out)
		}
		a, b := s.List(), again.List()
		if len(a) != len(b) {
			t.Fatal("key count changed")
		}
		for i := range a {
			if a[i] != b[i] {
				t.Fatalf("entry %d changed", i)
			}
		}
	})
}

// FuzzStateJSON: decoding never panics, and whatever decodes re-encodes to
// a form that decodes to the same state.
func FuzzStateJSON(f *testing.F) {
	for _, s := range allStates() {
		b, _ := json.Marshal(s)
		f.Add(b)
	}
	f.Add([]byte(`{"state":"attested","key_id":"k","attester_id":"a","covers_content":null}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var s State
		if err := json.Unmarshal(data, &s); err != nil {
			return
		}
		b, err := json.Marshal(s)
		if err != nil {
			t.Fatalf("decoded state %#v does not encode: %v", s, err)
		}
		var back State
		if err := json.Unmarshal(b, &back); err != nil || back != s {
			t.Fatalf("round trip %s: %#v vs %#v (%v)", b, s, back, err)
		}
	})
}
