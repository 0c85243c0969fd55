package trust

import "crypto/ed25519"

// AlgorithmEd25519 is the only signature algorithm this revision defines.
const AlgorithmEd25519 = "ed25519"

// signatureHexLen is the length of a signature's text form.
const signatureHexLen = 2 * ed25519.SignatureSize

// structural runs the cheap checks of §4.5 that need no hashing: the
// algorithm, then the commitment's and the signature's length and lowercase
// hex. It returns the parsed commitment and signature, or the failing
// verdict.
func structural(att *Attestation) (Digest, [ed25519.SignatureSize]byte, Verdict) {
	var sig [ed25519.SignatureSize]byte
	if att.Algorithm != AlgorithmEd25519 {
		return Digest{}, sig, UnknownAlgorithm
	}
	if len(att.SignedCommitment) != DigestTextLen {
		return Digest{}, sig, MalformedCommitment
	}
	if len(att.Signature) != signatureHexLen {
		return Digest{}, sig, MalformedSignature
	}
	signed, err := ParseDigest(att.SignedCommitment)
	if err != nil {
		return Digest{}, sig, MalformedCommitment
	}
	if !decodeLowerHex(sig[:], att.Signature) {
		return Digest{}, sig, MalformedSignature
	}
	return signed, sig, 0
}

// VerifyCommitment checks att against a commitment the caller recomputed
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
// content digest should use VerifyFrame, which reports ValidIdentityOnly.
func VerifyCommitment(expected Digest, att *Attestation, key PublicKey) Verdict {
	if att == nil {
		return MalformedCommitment
	}
	signed, sig, v := structural(att)
	if v != 0 {
		return v
	}
	if key.IsZero() {
		return MalformedKey
	}
	if signed != expected {
		return CommitmentMismatch
	}
	return verifyEd25519(key, signed[:], sig[:])
}
