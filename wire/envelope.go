package wire

import (
	"encoding/json"
	"slices"

	"github.com/ctxkit/ctxkit/frame"
)

// The envelope type tags of contextgraph/1.
const (
	typeHandshake    = "handshake"
	typeHandshakeAck = "handshake_ack"
	typeQuery        = "query"
	typeFrames       = "frames"
	typeVerify       = "verify"
	typeVerified     = "verified"
	typeShutdown     = "shutdown"
	typeError        = "error"
)

// Envelope is one CGP message. The concrete types are *Handshake,
// *HandshakeAck, *Query, *Frames, *Verify, *Verified, *Shutdown, *Error and
// *Unknown; use a type switch.
type Envelope interface {
	// Type returns the envelope's wire tag ("handshake", "frames" ...).
	Type() string
	isEnvelope()
}

// Handshake opens a session (host to provider).
type Handshake struct {
	// ProtocolVersion is the version the host speaks, for example
	// "contextgraph/1.0-draft"; the provider must answer in the same major
	// family (rule H1).
	ProtocolVersion string `json:"protocol_version"`
}

// HandshakeAck answers a handshake (provider to host). AttesterKeys is
// omitted when empty.
type HandshakeAck struct {
	// ProtocolVersion is the version the provider speaks; a different major
	// family is a named error, never a hang (rules H1, H3).
	ProtocolVersion string `json:"protocol_version"`
	// Provider is the provider's name, version and declared data flow.
	Provider frame.ProviderInfo `json:"provider"`
	// Capabilities is what the provider can do.
	Capabilities frame.Capabilities `json:"capabilities"`
	// AttesterKeys are the public keys the provider signs attestations
	// with; nil (omitted) when it announces none. Announcing grants no trust.
	AttesterKeys []AttesterKey `json:"attester_keys,omitempty"`
}

// Query asks for frames (host to provider). ID is sent only to a provider
// that declared correlation.
type Query struct {
	// ID is the correlation id the provider must echo verbatim (rule H4);
	// empty (omitted) unless the provider declared correlation.
	ID string `json:"id,omitempty"`
	// Query is the context query itself.
	Query frame.Query `json:"query"`
}

// Frames answers a query (provider to host), echoing the query's ID.
type Frames struct {
	// ID echoes the answered query's correlation id; empty (omitted) when
	// the query carried none.
	ID string `json:"id,omitempty"`
	// Result holds the frames and whether the answer was truncated.
	Result Result `json:"result"`
}

// Verify asks whether held frames are still current (host to provider).
type Verify struct {
	// Request lists the frame identities to confirm.
	Request VerifyRequest `json:"request"`
}

// Verified answers a verify (provider to host).
type Verified struct {
	// Response holds the provider's verdicts.
	Response VerifyResponse `json:"response"`
}

// Shutdown ends a session (host to provider).
type Shutdown struct{}

// Error reports a failure (provider to host). Code is kept verbatim; use
// Code.Effective for the code a receiver acts on. An *Error is also a Go
// error, so a host can return a provider's error envelope as is.
type Error struct {
	// ID echoes the failed query's correlation id (rule H4); empty
	// (omitted) when absent.
	ID string `json:"id,omitempty"`
	// Code is the error code, kept verbatim; empty (omitted) when absent.
	// An absent or unknown code is acted on as internal (rules X1, X2).
	Code Code `json:"code,omitempty"`
	// Message is a human-readable explanation; required and non-empty.
	Message string `json:"message"`
}

// Unknown is an envelope whose type this revision does not define. Raw holds
// the envelope's JSON exactly as received.
type Unknown struct {
	// Tag is the envelope's type member as received.
	Tag string
	// Raw is the whole envelope's JSON exactly as received.
	Raw []byte
}

// Result is a provider's answer to a query (ContextQueryResult). Frames is
// never omitted on the wire (nil encodes as []). FrameAttestations and
// ResultAttestation are optional and omitted when empty.
type Result struct {
	// Frames are the frames offered, in the provider's order; never
	// omitted on the wire (nil encodes as []).
	Frames []frame.Frame `json:"frames"`
	// Truncated is true when the provider held back frames to respect the
	// query's limits.
	Truncated bool `json:"truncated"`
	// DroppedEstimate is the provider's estimate of how many frames it held
	// back; nil (omitted) when it gives none.
	DroppedEstimate *uint32 `json:"dropped_estimate,omitempty"`
	// FrameAttestations carry per-frame attestations and inclusion proofs;
	// nil (omitted) when empty.
	FrameAttestations []FrameAttestation `json:"frame_attestations,omitempty"`
	// ResultAttestation signs the Merkle root over the frame commitments in
	// canonical order; nil (omitted) when the result is not signed as a
	// whole.
	ResultAttestation *Attestation `json:"result_attestation,omitempty"`
	// Diagnostics is the provider's account of how it answered, as a JSON
	// object under ctxkit's vendor member "ctxkit:diagnostics" (U3); a
	// receiver that does not know it ignores it (U1). The files provider
	// puts its index state and the files it skipped, by reason, here. nil
	// (omitted) when there is none.
	Diagnostics json.RawMessage `json:"ctxkit:diagnostics,omitempty"`
}

// VerifyRequest lists the identities a host wants confirmed.
type VerifyRequest struct {
	// Frames are the identities to confirm; a host should send only
	// identities that carry a content digest (rule V1).
	Frames []frame.ID `json:"frames"`
}

// VerifyResponse holds one verdict per identity the provider answers for.
type VerifyResponse struct {
	// Verdicts holds one verdict per answered identity; an identity without
	// a verdict counts as unknown (rule V2).
	Verdicts []Verdict `json:"verdicts"`
}

// Status is a verify verdict.
type Status string

// The verify verdicts of contextgraph/1.
const (
	StatusValid   Status = "valid"
	StatusStale   Status = "stale"
	StatusGone    Status = "gone"
	StatusUnknown Status = "unknown"
)

// statuses are the four verdicts.
var statuses = [...]Status{StatusValid, StatusStale, StatusGone, StatusUnknown}

// isKnown reports whether s is one of the four verdicts.
func (s Status) isKnown() bool { return slices.Contains(statuses[:], s) }

// Verdict is a provider's answer for one identity. ReplacementDigest may be
// set only with StatusStale.
type Verdict struct {
	// Frame is the identity the verdict is about.
	Frame frame.ID `json:"frame"`
	// Status is valid, stale, gone or unknown; only valid permits reuse
	// (rule V3).
	Status Status `json:"status"`
	// ReplacementDigest is the current content digest of a stale frame;
	// empty (omitted) otherwise (rule V4).
	ReplacementDigest string `json:"replacement_digest,omitempty"`
}

// Attestation is a signature over a frame or result commitment
// (ProvenanceAttestation). Only SignedCommitment is signed; KeyID,
// Algorithm, AttesterID and IssuedAt are unsigned metadata.
type Attestation struct {
	// SignedCommitment is the "sha256:<hex>" commitment the signature
	// covers; a verifier recomputes it and compares before checking the
	// signature.
	SignedCommitment string `json:"signed_commitment"`
	// KeyID names the key that signed, among the provider's keys; unsigned.
	KeyID string `json:"key_id"`
	// Algorithm is the signature algorithm, "ed25519"; any other is
	// uncheckable, not invalid. Unsigned.
	Algorithm string `json:"algorithm"`
	// AttesterID is the attester's self-declared id; unsigned, so not to be
	// trusted on its own.
	AttesterID string `json:"attester_id"`
	// Signature is the Ed25519 signature over SignedCommitment, as 128
	// lowercase hex digits.
	Signature string `json:"signature"`
	// IssuedAt is when the attestation was made, in the protocol timestamp
	// grammar; unsigned.
	IssuedAt string `json:"issued_at"`
}

// FrameAttestation carries a frame's attestation and, when the result is
// signed as a whole, its Merkle inclusion proof.
type FrameAttestation struct {
	// Frame is the identity of the attested frame.
	Frame frame.ID `json:"frame"`
	// Attestation is the frame's own attestation; nil (omitted) when the
	// frame is covered only by the result attestation.
	Attestation *Attestation `json:"attestation,omitempty"`
	// InclusionProof places the frame's commitment in the result's Merkle
	// tree; nil (omitted) when the result is not signed as a whole.
	InclusionProof *InclusionProof `json:"inclusion_proof,omitempty"`
}

// InclusionProof shows that a frame commitment is leaf LeafIndex of a Merkle
// tree of LeafCount leaves.
type InclusionProof struct {
	// LeafIndex is the 0-based position of the frame's leaf.
	LeafIndex uint64 `json:"leaf_index"`
	// LeafCount is the number of leaves in the tree.
	LeafCount uint64 `json:"leaf_count"`
	// Path lists the sibling hashes from the leaf up to the root.
	Path []ProofStep `json:"path"`
}

// ProofStep is one sibling hash on an inclusion path.
type ProofStep struct {
	// Sibling is the sibling node's hash, "sha256:<hex>".
	Sibling string `json:"sibling"`
	// SiblingIsLeft is true when the sibling is hashed on the left.
	SiblingIsLeft bool `json:"sibling_is_left"`
}

// AttesterKey is a public key a provider announces in its handshake_ack.
// Announcing a key grants it no trust; only the operator's trust store does.
type AttesterKey struct {
	// KeyID names the key within the provider's keys.
	KeyID string `json:"key_id"`
	// Algorithm is the key's algorithm, "ed25519".
	Algorithm string `json:"algorithm"`
	// PublicKey is the Ed25519 public key as 64 lowercase hex digits.
	PublicKey string `json:"public_key"`
}

// Type returns "handshake".
func (*Handshake) Type() string { return typeHandshake }

// Type returns "handshake_ack".
func (*HandshakeAck) Type() string { return typeHandshakeAck }

// Type returns "query".
func (*Query) Type() string { return typeQuery }

// Type returns "frames".
func (*Frames) Type() string { return typeFrames }

// Type returns "verify".
func (*Verify) Type() string { return typeVerify }

// Type returns "verified".
func (*Verified) Type() string { return typeVerified }

// Type returns "shutdown".
func (*Shutdown) Type() string { return typeShutdown }

// Type returns "error".
func (*Error) Type() string { return typeError }

// Type returns the unknown envelope's tag as received.
func (u *Unknown) Type() string { return u.Tag }

func (*Handshake) isEnvelope()    {}
func (*HandshakeAck) isEnvelope() {}
func (*Query) isEnvelope()        {}
func (*Frames) isEnvelope()       {}
func (*Verify) isEnvelope()       {}
func (*Verified) isEnvelope()     {}
func (*Shutdown) isEnvelope()     {}
func (*Error) isEnvelope()        {}
func (*Unknown) isEnvelope()      {}

// Error renders the error envelope as a Go error message: the code (or
// "internal" when absent), then the message.
func (e *Error) Error() string {
	code := string(e.Code)
	if code == "" {
		code = string(CodeInternal)
	}
	return "provider error " + code + ": " + e.Message
}
