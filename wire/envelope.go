package wire

import "github.com/ctxkit/ctxkit/frame"

// The envelope type tags of contextgraph/1.
const (
	TypeHandshake    = "handshake"
	TypeHandshakeAck = "handshake_ack"
	TypeQuery        = "query"
	TypeFrames       = "frames"
	TypeVerify       = "verify"
	TypeVerified     = "verified"
	TypeShutdown     = "shutdown"
	TypeError        = "error"
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
	ProtocolVersion string `json:"protocol_version"`
}

// HandshakeAck answers a handshake (provider to host). AttesterKeys is
// omitted when empty.
type HandshakeAck struct {
	ProtocolVersion string             `json:"protocol_version"`
	Provider        frame.ProviderInfo `json:"provider"`
	Capabilities    frame.Capabilities `json:"capabilities"`
	AttesterKeys    []AttesterKey      `json:"attester_keys,omitempty"`
}

// Query asks for frames (host to provider). ID is sent only to a provider
// that declared correlation.
type Query struct {
	ID    string      `json:"id,omitempty"`
	Query frame.Query `json:"query"`
}

// Frames answers a query (provider to host), echoing the query's ID.
type Frames struct {
	ID     string `json:"id,omitempty"`
	Result Result `json:"result"`
}

// Verify asks whether held frames are still current (host to provider).
type Verify struct {
	Request VerifyRequest `json:"request"`
}

// Verified answers a verify (provider to host).
type Verified struct {
	Response VerifyResponse `json:"response"`
}

// Shutdown ends a session (host to provider).
type Shutdown struct{}

// Error reports a failure (provider to host). Code is kept verbatim; use
// Code.Effective for the code a receiver acts on. An *Error is also a Go
// error, so a host can return a provider's error envelope as is.
type Error struct {
	ID      string `json:"id,omitempty"`
	Code    Code   `json:"code,omitempty"`
	Message string `json:"message"`
}

// Unknown is an envelope whose type this revision does not define. Raw holds
// the envelope's JSON exactly as received.
type Unknown struct {
	Tag string
	Raw []byte
}

// Result is a provider's answer to a query (ContextQueryResult). Frames is
// never omitted on the wire (nil encodes as []). FrameAttestations and
// ResultAttestation are optional and omitted when empty.
type Result struct {
	Frames            []frame.Frame      `json:"frames"`
	Truncated         bool               `json:"truncated"`
	DroppedEstimate   *uint32            `json:"dropped_estimate,omitempty"`
	FrameAttestations []FrameAttestation `json:"frame_attestations,omitempty"`
	ResultAttestation *Attestation       `json:"result_attestation,omitempty"`
}

// VerifyRequest lists the identities a host wants confirmed.
type VerifyRequest struct {
	Frames []frame.ID `json:"frames"`
}

// VerifyResponse holds one verdict per identity the provider answers for.
type VerifyResponse struct {
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

// IsKnown reports whether s is one of the four verdicts.
func (s Status) IsKnown() bool {
	switch s {
	case StatusValid, StatusStale, StatusGone, StatusUnknown:
		return true
	}
	return false
}

// Verdict is a provider's answer for one identity. ReplacementDigest may be
// set only with StatusStale.
type Verdict struct {
	Frame             frame.ID `json:"frame"`
	Status            Status   `json:"status"`
	ReplacementDigest string   `json:"replacement_digest,omitempty"`
}

// Attestation is a signature over a frame or result commitment
// (ProvenanceAttestation). Only SignedCommitment is signed; KeyID,
// Algorithm, AttesterID and IssuedAt are unsigned metadata.
type Attestation struct {
	SignedCommitment string `json:"signed_commitment"`
	KeyID            string `json:"key_id"`
	Algorithm        string `json:"algorithm"`
	AttesterID       string `json:"attester_id"`
	Signature        string `json:"signature"`
	IssuedAt         string `json:"issued_at"`
}

// FrameAttestation carries a frame's attestation and, when the result is
// signed as a whole, its Merkle inclusion proof.
type FrameAttestation struct {
	Frame          frame.ID        `json:"frame"`
	Attestation    *Attestation    `json:"attestation,omitempty"`
	InclusionProof *InclusionProof `json:"inclusion_proof,omitempty"`
}

// InclusionProof shows that a frame commitment is leaf LeafIndex of a Merkle
// tree of LeafCount leaves.
type InclusionProof struct {
	LeafIndex uint64      `json:"leaf_index"`
	LeafCount uint64      `json:"leaf_count"`
	Path      []ProofStep `json:"path"`
}

// ProofStep is one sibling hash on an inclusion path.
type ProofStep struct {
	Sibling       string `json:"sibling"`
	SiblingIsLeft bool   `json:"sibling_is_left"`
}

// AttesterKey is a public key a provider announces in its handshake_ack.
// Announcing a key grants it no trust; only the operator's trust store does.
type AttesterKey struct {
	KeyID     string `json:"key_id"`
	Algorithm string `json:"algorithm"`
	PublicKey string `json:"public_key"`
}

// Type returns "handshake".
func (*Handshake) Type() string { return TypeHandshake }

// Type returns "handshake_ack".
func (*HandshakeAck) Type() string { return TypeHandshakeAck }

// Type returns "query".
func (*Query) Type() string { return TypeQuery }

// Type returns "frames".
func (*Frames) Type() string { return TypeFrames }

// Type returns "verify".
func (*Verify) Type() string { return TypeVerify }

// Type returns "verified".
func (*Verified) Type() string { return TypeVerified }

// Type returns "shutdown".
func (*Shutdown) Type() string { return TypeShutdown }

// Type returns "error".
func (*Error) Type() string { return TypeError }

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
