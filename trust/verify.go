package trust

import (
	"crypto/ed25519"

	"github.com/ctxkit/ctxkit/wire"
)

// algorithmEd25519 is the only signature algorithm this revision defines.
const algorithmEd25519 = "ed25519"

// signatureHexLen is the length of a signature's text form.
const signatureHexLen = 2 * ed25519.SignatureSize

// structural runs the cheap checks of §4.5 that need no hashing: the
// algorithm, then the commitment's and the signature's length and lowercase
// hex. It returns the parsed commitment and signature, or the failing
// verdict.
func structural(att *wire.Attestation) (digest, [ed25519.SignatureSize]byte, Verdict) {
	var sig [ed25519.SignatureSize]byte
	if att.Algorithm != algorithmEd25519 {
		return digest{}, sig, UnknownAlgorithm
	}
	if len(att.SignedCommitment) != digestTextLen {
		return digest{}, sig, MalformedCommitment
	}
	if len(att.Signature) != signatureHexLen {
		return digest{}, sig, MalformedSignature
	}
	signed, err := parseDigest(att.SignedCommitment)
	if err != nil {
		return digest{}, sig, MalformedCommitment
	}
	if !decodeLowerHex(sig[:], att.Signature) {
		return digest{}, sig, MalformedSignature
	}
	return signed, sig, 0
}

// verifyCommitment checks att against a commitment the caller recomputed
// from what it holds (a frame commitment, or a result root), in the order
// of docs/protocol.md §4.5:
//
//  1. structure: algorithm "ed25519" (else UnknownAlgorithm);
//     signed_commitment "sha256:" + 64 lowercase hex (else
//     MalformedCommitment); signature 128 lowercase hex (else
//     MalformedSignature); a key is required (else MalformedKey);
//  2. the signed commitment must equal expected (else CommitmentMismatch:
//     what was signed is not what is held — tampering);
//  3. strict Ed25519 over the 32 commitment bytes (non-canonical or
//     small-order R ⇒ MalformedSignature; failure ⇒ BadSignature).
//
// It returns Valid on success; callers that verify a frame without a
// content digest should use verifyFrame, which reports ValidIdentityOnly.
func verifyCommitment(expected digest, att *wire.Attestation, key PublicKey) Verdict {
	if att == nil {
		return MalformedCommitment
	}
	signed, sig, v := structural(att)
	if v != 0 {
		return v
	}
	if key.isZero() {
		return MalformedKey
	}
	if signed != expected {
		return CommitmentMismatch
	}
	return verifyEd25519(key, signed[:], sig[:])
}
