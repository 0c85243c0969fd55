package trust

// Attestation is the CGP provenance attestation record (PROTOCOL.md §4.4):
// a detached Ed25519 signature over a frame commitment or a result root.
// Only SignedCommitment is signed; KeyID selects the verifying key, and
// Algorithm, AttesterID and IssuedAt are unsigned metadata (F18) — a
// relay can rewrite AttesterID and IssuedAt without breaking the signature,
// so show them as claims, never as verified facts.
type Attestation struct {
	// SignedCommitment is the signed commitment, "sha256:<64 lowercase hex>".
	SignedCommitment string `json:"signed_commitment"`
	// KeyID names the signing key; the verifier looks it up in its Store.
	KeyID string `json:"key_id"`
	// Algorithm is the signature scheme; only "ed25519" is defined.
	Algorithm string `json:"algorithm"`
	// AttesterID is who the attestation names as accountable (unsigned).
	AttesterID string `json:"attester_id"`
	// Signature is the 64-byte Ed25519 signature as 128 lowercase hex digits.
	Signature string `json:"signature"`
	// IssuedAt is the claimed issue time, an F4 timestamp (unsigned).
	IssuedAt string `json:"issued_at"`
}
