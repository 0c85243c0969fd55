package trust

import (
	"github.com/ctxkit/ctxkit/frame"
	"github.com/ctxkit/ctxkit/wire"
)

// verifyFrame verifies a per-frame attestation under key, in the order of
// verifyCommitment, against the commitment recomputed from f under
// providerName. A correct signature over a frame without a content digest
// yields ValidIdentityOnly: it binds identity and provenance, not content.
func verifyFrame(providerName string, f *frame.Frame, att *wire.Attestation, key PublicKey) Verdict {
	if att == nil {
		return MalformedCommitment
	}
	if _, _, v := structural(att); v != 0 {
		return v // cheap checks before hashing anything
	}
	return identityOnly(f, verifyCommitment(frameCommitment(providerName, f), att, key))
}

// verifyFrameInclusion verifies that f is a leaf of the result root that
// result signs, using the frame's inclusion proof. Structural checks come
// first (the attestation's shape, then the proof: at most maxProofSteps
// steps, an index inside the tree, siblings well formed and on the sides
// the tree shape dictates — any failure is MalformedCommitment); then the
// root recomputed from f's commitment must equal the signed one
// (CommitmentMismatch); then the signature.
func verifyFrameInclusion(providerName string, f *frame.Frame, proof wire.InclusionProof, result *wire.Attestation, key PublicKey) Verdict {
	if result == nil {
		return MalformedCommitment
	}
	if _, _, v := structural(result); v != 0 {
		return v
	}
	p, err := parseProof(proof)
	if err != nil {
		return MalformedCommitment
	}
	root, err := rootFromProof(frameCommitment(providerName, f), p)
	if err != nil {
		return MalformedCommitment
	}
	return identityOnly(f, verifyCommitment(root, result, key))
}

func identityOnly(f *frame.Frame, v Verdict) Verdict {
	// A digest sent as "" is committed as present, but binds no content:
	// identity only, more cautious than the reference's Valid for it.
	if v == Valid && f.ContentDigest == "" {
		return ValidIdentityOnly
	}
	return v
}

// Check returns what the host finds for one frame's attestation, with the
// provider's local id used both to look up trusted keys and as the name in
// the commitment. When the provider's handshake-declared name differs from
// the host's id for it, Ledger.AddResult takes both.
func Check(store *Store, providerID string, f *frame.Frame, att *wire.Attestation) State {
	return checkNamed(store, providerID, providerID, f, att)
}

// checkNamed checks one frame's attestation: trusted keys are looked up
// under providerID (the operator's name for the provider) and the
// commitment is recomputed with providerName (the name the provider
// declared). The order is that of docs/protocol.md §4.5, cheapest first:
//
//   - no attestation ⇒ Unattested;
//   - algorithm other than ed25519 ⇒ UnknownAlgorithm{algorithm};
//   - no trusted key (providerID, key_id) ⇒ NoTrustedKey{key_id};
//   - commitment or signature of the wrong length or not lowercase hex ⇒
//     Invalid{MalformedCommitment | MalformedSignature};
//   - recomputed commitment differs ⇒ Invalid{CommitmentMismatch};
//   - strict Ed25519 fails ⇒ Invalid{BadSignature | MalformedSignature};
//   - else Attested{key_id, attester_id, covers_content}, where
//     covers_content is whether f has a content digest.
//
// Check never fails and never panics on peer input: an attestation that
// cannot be verified degrades to a State. It does not change f.
func checkNamed(store *Store, providerID, providerName string, f *frame.Frame, att *wire.Attestation) State {
	if att == nil {
		return NewUnattested()
	}
	key, st, ok := checkHeader(store, providerID, att)
	if !ok {
		return st
	}
	return stateOf(verifyFrame(providerName, f, att, key), att, f)
}

// checkHeader runs the store-dependent structural checks shared by the
// per-frame and the inclusion paths.
func checkHeader(store *Store, providerID string, att *wire.Attestation) (PublicKey, State, bool) {
	if att.Algorithm != algorithmEd25519 {
		return PublicKey{}, NewUnknownAlgorithm(att.Algorithm), false
	}
	key, ok := store.Key(providerID, att.KeyID)
	if !ok {
		return PublicKey{}, NewNoTrustedKey(att.KeyID), false
	}
	if _, _, v := structural(att); v != 0 {
		return PublicKey{}, NewInvalid(v), false
	}
	return key, State{}, true
}

func stateOf(v Verdict, att *wire.Attestation, f *frame.Frame) State {
	switch v {
	case Valid, ValidIdentityOnly:
		return NewAttested(att.KeyID, att.AttesterID, f.ContentDigest != "")
	case UnknownAlgorithm:
		return NewUnknownAlgorithm(att.Algorithm)
	}
	return NewInvalid(v)
}

// checkInclusion checks a frame attested only through the signed result
// root (a frame_attestations entry with an inclusion proof and no
// per-frame signature); the states are those of checkNamed, with a
// malformed proof reported as Invalid{MalformedCommitment}.
func checkInclusion(store *Store, providerID, providerName string, f *frame.Frame, proof wire.InclusionProof, result *wire.Attestation) State {
	if result == nil {
		return NewUnattested()
	}
	key, st, ok := checkHeader(store, providerID, result)
	if !ok {
		return st
	}
	return stateOf(verifyFrameInclusion(providerName, f, proof, result, key), result, f)
}

// checkResult returns one State per frame of res, in res.Frames order. A
// frame is matched to the first frame_attestations entry naming its frame
// id and content digest (the entry's provider_id is the provider's own
// name and is not compared); at most len(res.Frames) entries are examined,
// so a flood of entries costs no more than one per frame. An entry with a
// per-frame attestation is checked with checkNamed; one with only an
// inclusion proof is checked against result_attestation with
// checkInclusion; a frame with no usable entry is Unattested.
func checkResult(store *Store, providerID, providerName string, res *wire.Result) []State {
	if res == nil {
		return nil
	}
	type key struct{ id, digest string }
	entries := map[key]*wire.FrameAttestation{}
	n := min(len(res.FrameAttestations), len(res.Frames))
	for i := 0; i < n; i++ {
		e := &res.FrameAttestations[i]
		k := key{e.Frame.Frame, e.Frame.Digest}
		if _, dup := entries[k]; !dup {
			entries[k] = e
		}
	}
	root := rootChecker{store: store, providerID: providerID, providerName: providerName, att: res.ResultAttestation}
	out := make([]State, len(res.Frames))
	for i := range res.Frames {
		f := &res.Frames[i]
		e := entries[key{f.ID, f.ContentDigest}]
		switch {
		case e == nil:
			out[i] = NewUnattested()
		case e.Attestation != nil:
			out[i] = checkNamed(store, providerID, providerName, f, e.Attestation)
		case e.InclusionProof != nil && res.ResultAttestation != nil:
			out[i] = root.check(f, *e.InclusionProof)
		default:
			out[i] = NewUnattested()
		}
	}
	return out
}

// rootChecker checks frames against one signed result root, verifying the
// root's signature at most once however many frames refer to it. Each
// frame's state equals what checkInclusion returns for it.
type rootChecker struct {
	store                    *Store
	providerID, providerName string
	att                      *wire.Attestation

	headerDone bool
	key        PublicKey
	header     State
	headerOK   bool
	signed     digest
	sigVerdict Verdict // 0 until the signature has been checked
}

func (r *rootChecker) check(f *frame.Frame, proof wire.InclusionProof) State {
	if !r.headerDone {
		r.headerDone = true
		r.key, r.header, r.headerOK = checkHeader(r.store, r.providerID, r.att)
		if r.headerOK {
			r.signed, _ = parseDigest(r.att.SignedCommitment) // well formed: checkHeader passed
		}
	}
	if !r.headerOK {
		return r.header
	}
	p, err := parseProof(proof)
	if err != nil {
		return NewInvalid(MalformedCommitment)
	}
	got, err := rootFromProof(frameCommitment(r.providerName, f), p)
	if err != nil {
		return NewInvalid(MalformedCommitment)
	}
	if got != r.signed {
		return NewInvalid(CommitmentMismatch)
	}
	if r.sigVerdict == 0 {
		_, sig, _ := structural(r.att)
		r.sigVerdict = verifyEd25519(r.key, r.signed[:], sig[:])
	}
	return stateOf(identityOnly(f, r.sigVerdict), r.att, f)
}
