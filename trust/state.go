package trust

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/ctxkit/ctxkit/internal/cgpjson"
)

// Verdict is the outcome of checking one attestation against a trusted key.
// It is a closed set; the zero value is not a verdict (it never comes out of
// Verify) and does not encode to JSON.
type Verdict uint8

// The verdicts of attestation verification (docs/protocol.md §4.4). Only Valid
// means the signature binds the frame's content; ValidIdentityOnly means a
// correct signature over a frame without a content digest, so it binds the
// identity and provenance but no content.
const (
	// Valid: the commitment matches the frame and the signature verifies.
	Valid Verdict = iota + 1
	// ValidIdentityOnly: as Valid, but the frame has no content digest.
	ValidIdentityOnly
	// CommitmentMismatch: the recomputed commitment differs from the signed
	// one — the frame or its provenance was changed after signing.
	CommitmentMismatch
	// BadSignature: the commitment matches but the signature does not verify
	// under the trusted key (wrong key or forgery).
	BadSignature
	// UnknownAlgorithm: the attestation names an algorithm other than ed25519.
	UnknownAlgorithm
	// MalformedKey: the trusted public key is not 64 lowercase hex digits, or
	// is a small-order point.
	MalformedKey
	// MalformedSignature: the signature is not 128 lowercase hex digits, or
	// is not canonically encoded.
	MalformedSignature
	// MalformedCommitment: signed_commitment is not "sha256:" and 64
	// lowercase hex digits.
	MalformedCommitment
)

var verdictNames = [...]string{
	Valid:               "valid",
	ValidIdentityOnly:   "valid_identity_only",
	CommitmentMismatch:  "commitment_mismatch",
	BadSignature:        "bad_signature",
	UnknownAlgorithm:    "unknown_algorithm",
	MalformedKey:        "malformed_key",
	MalformedSignature:  "malformed_signature",
	MalformedCommitment: "malformed_commitment",
}

// string returns the verdict's stable lower-case spelling, the one used in
// JSON (for example "commitment_mismatch").
func (v Verdict) String() string {
	if v >= Valid && int(v) < len(verdictNames) {
		return verdictNames[v]
	}
	return fmt.Sprintf("verdict(%d)", uint8(v))
}

// isValid reports whether the signature verified and binds content: true for
// Valid only, false for ValidIdentityOnly.
func (v Verdict) isValid() bool { return v == Valid }

func (v Verdict) known() bool { return v >= Valid && int(v) < len(verdictNames) }

// MarshalText encodes the verdict as its String spelling.
func (v Verdict) MarshalText() ([]byte, error) {
	if !v.known() {
		return nil, fmt.Errorf("trust: marshal verdict: unknown verdict %d", uint8(v))
	}
	return []byte(verdictNames[v]), nil
}

// UnmarshalText decodes a verdict from its String spelling.
func (v *Verdict) UnmarshalText(b []byte) error {
	for i := Valid; int(i) < len(verdictNames); i++ {
		if verdictNames[i] == string(b) {
			*v = i
			return nil
		}
	}
	return fmt.Errorf("trust: unmarshal verdict: unknown verdict %q", truncate(string(b), 64))
}

// stateKind names which member of the closed State set a State is.
type stateKind uint8

// The attestation states a host records per frame (docs/protocol.md §4.5).
const (
	// notChecked is the zero value: nobody looked at this frame's attestation.
	notChecked stateKind = iota
	// unattested: the frame was checked and carried no attestation.
	unattested
	// attested: the attestation verified under a key the operator trusts.
	attested
	// noTrustedKey: the attestation names a key the operator has not trusted
	// for this provider.
	noTrustedKey
	// unknownAlgorithmState: the attestation names an algorithm ctxkit does
	// not implement. (The Verdict of the same name is UnknownAlgorithm.)
	unknownAlgorithmState
	// invalid: the attestation was checked and failed; the Verdict says how.
	invalid
)

var stateNames = [...]string{
	notChecked:            "not_checked",
	unattested:            "unattested",
	attested:              "attested",
	noTrustedKey:          "no_trusted_key",
	unknownAlgorithmState: "unknown_algorithm",
	invalid:               "invalid",
}

// string returns the kind's stable lower-case spelling (for example
// "no_trusted_key").
func (k stateKind) String() string {
	if int(k) < len(stateNames) {
		return stateNames[k]
	}
	return fmt.Sprintf("state(%d)", uint8(k))
}

// maxEchoBytes bounds how much of a peer-supplied string (an unknown
// algorithm name, a key id, an attester id) a State keeps, so a hostile
// attestation cannot bloat an audit. The constructors also replace invalid
// UTF-8 with U+FFFD, so every State survives a JSON round trip unchanged.
const maxEchoBytes = 128

// State is what a host found when it checked one frame's attestation. It is
// a closed set: NotChecked (the zero value), Unattested, Attested{KeyID,
// attester, CoversContent}, NoTrustedKey{KeyID},
// UnknownAlgorithm{Algorithm} and Invalid{Verdict}. Build one with the
// constructors; States are comparable with ==.
//
// A State only describes: it never removes or reorders a frame (CGP F9).
// attester is copied from the attestation and is not covered by the
// signature (F18): show it, do not trust it.
type State struct {
	kind          stateKind
	keyID         string
	attesterID    string
	coversContent bool
	algorithm     string
	verdict       Verdict
}

// NewUnattested returns the state of a checked frame that carried no
// attestation.
func NewUnattested() State { return State{kind: unattested} }

// NewAttested returns the state of a frame whose attestation verified
// under trusted key keyID. coversContent is true when the frame had a
// content digest, so the signature binds its content too.
func NewAttested(keyID, attesterID string, coversContent bool) State {
	return State{kind: attested, keyID: echo(keyID), attesterID: echo(attesterID), coversContent: coversContent}
}

// NewNoTrustedKey returns the state of a frame whose attestation names
// key keyID that the operator has not trusted for its provider.
func NewNoTrustedKey(keyID string) State {
	return State{kind: noTrustedKey, keyID: echo(keyID)}
}

// NewUnknownAlgorithm returns the state of a frame whose attestation
// names an algorithm other than ed25519; the name is kept up to
// maxEchoBytes bytes.
func NewUnknownAlgorithm(algorithm string) State {
	return State{kind: unknownAlgorithmState, algorithm: echo(algorithm)}
}

// NewInvalid returns the state of a frame whose attestation failed with
// verdict v.
func NewInvalid(v Verdict) State { return State{kind: invalid, verdict: v} }

// KeyID is the key id of an Attested or NoTrustedKey state, else "".
func (s State) KeyID() string { return s.keyID }

// CoversContent reports whether an Attested state's signature binds the
// frame's content (the frame had a content digest). False for other states.
func (s State) CoversContent() bool { return s.coversContent }

// Verdict is the failing verdict of an Invalid state, else zero.
func (s State) Verdict() Verdict { return s.verdict }

// IsAttested reports whether s is Attested.
func (s State) IsAttested() bool { return s.kind == attested }

// WasOffered reports whether the provider offered an attestation at all:
// false for NotChecked and Unattested.
func (s State) WasOffered() bool { return s.kind != notChecked && s.kind != unattested }

// string returns the state's stable lower-case spelling, its kind's name
// (for example "attested"); the details are in the JSON encoding.
func (s State) String() string { return s.kind.String() }

// stateJSON is the wire shape of a State. Member order is fixed; members a
// kind does not carry are omitted.
type stateJSON struct {
	State         string   `json:"state"`
	KeyID         *string  `json:"key_id,omitempty"`
	AttesterID    *string  `json:"attester_id,omitempty"`
	CoversContent *bool    `json:"covers_content,omitempty"`
	Algorithm     *string  `json:"algorithm,omitempty"`
	Verdict       *Verdict `json:"verdict,omitempty"`
}

// MarshalJSON encodes s as an object whose "state" member is the kind's
// spelling, followed by the members that kind carries, for example
// {"state":"attested","key_id":"k1","attester_id":"a","covers_content":true}
// or {"state":"invalid","verdict":"bad_signature"}.
func (s State) MarshalJSON() ([]byte, error) {
	if int(s.kind) >= len(stateNames) {
		return nil, fmt.Errorf("trust: marshal state: unknown kind %d", uint8(s.kind))
	}
	j := stateJSON{State: stateNames[s.kind]}
	switch s.kind {
	case attested:
		j.KeyID, j.AttesterID, j.CoversContent = &s.keyID, &s.attesterID, &s.coversContent
	case noTrustedKey:
		j.KeyID = &s.keyID
	case unknownAlgorithmState:
		j.Algorithm = &s.algorithm
	case invalid:
		if !s.verdict.known() {
			return nil, fmt.Errorf("trust: marshal state: invalid state without a verdict")
		}
		j.Verdict = &s.verdict
	}
	return cgpjson.MarshalNoEscape(j)
}

// UnmarshalJSON decodes what MarshalJSON writes. Members the kind does not
// carry are an error, as are missing required members.
func (s *State) UnmarshalJSON(b []byte) error {
	var j stateJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return fmt.Errorf("trust: unmarshal state: %w", err)
	}
	kind := -1
	for i, n := range stateNames {
		if n == j.State {
			kind = i
		}
	}
	if kind < 0 {
		return fmt.Errorf("trust: unmarshal state: unknown state %q", truncate(j.State, 64))
	}
	has := func(present bool, want bool, name string) error {
		if present != want {
			if want {
				return fmt.Errorf("trust: unmarshal state: %s requires %s", j.State, name)
			}
			return fmt.Errorf("trust: unmarshal state: %s does not carry %s", j.State, name)
		}
		return nil
	}
	k := stateKind(kind)
	checks := []error{
		has(j.KeyID != nil, k == attested || k == noTrustedKey, "key_id"),
		has(j.AttesterID != nil, k == attested, "attester_id"),
		has(j.CoversContent != nil, k == attested, "covers_content"),
		has(j.Algorithm != nil, k == unknownAlgorithmState, "algorithm"),
		has(j.Verdict != nil, k == invalid, "verdict"),
	}
	for _, err := range checks {
		if err != nil {
			return err
		}
	}
	switch k {
	case notChecked:
		*s = State{}
	case unattested:
		*s = NewUnattested()
	case attested:
		*s = NewAttested(*j.KeyID, *j.AttesterID, *j.CoversContent)
	case noTrustedKey:
		*s = NewNoTrustedKey(*j.KeyID)
	case unknownAlgorithmState:
		*s = NewUnknownAlgorithm(*j.Algorithm)
	case invalid:
		*s = NewInvalid(*j.Verdict)
	}
	return nil
}

// echo makes a peer-supplied string safe to keep: invalid UTF-8 becomes
// U+FFFD (so the state survives a JSON round trip unchanged) and the result
// is cut to maxEchoBytes.
func echo(s string) string {
	return truncate(strings.ToValidUTF8(s, "\uFFFD"), maxEchoBytes)
}

// truncate cuts s to at most n bytes without splitting a UTF-8 sequence.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	s = s[:n]
	for len(s) > 0 {
		r, size := utf8.DecodeLastRuneInString(s)
		if r != utf8.RuneError || size > 1 {
			break
		}
		s = s[:len(s)-1]
	}
	return s
}
