package compose

import (
	"encoding/json"
	"fmt"

	"github.com/ctxkit/ctxkit/frame"
)

// Attestation is what the audit records of a frame's attestation check.
// The composer never reads it to decide inclusion or placement; it only
// reports it. trust.State implements it. Values must be comparable, and
// equal values must encode alike (the encoder reuses a neighbour's bytes).
type Attestation interface {
	// IsAttested reports whether the attestation verified under a trusted key.
	IsAttested() bool
	// String names the state, as the audit's text form prints it.
	String() string
	// MarshalJSON encodes the state, {"state": NAME, ...}.
	MarshalJSON() ([]byte, error)
}

// Attestations gives each offered frame's attestation state. A host
// implements it over its attestation checks (host.FanOut does, over
// trust.Ledger).
type Attestations interface {
	// Attestation returns the state of the frame with identity id; nil
	// means not checked.
	Attestation(id frame.ID) Attestation
}

// notChecked is the state of a frame whose attestation nobody checked,
// encoded as trust.State's zero value is.
type notChecked struct{}

func (notChecked) IsAttested() bool             { return false }
func (notChecked) String() string               { return "not_checked" }
func (notChecked) MarshalJSON() ([]byte, error) { return []byte(`{"state":"not_checked"}`), nil }

// decodedAttestation is an attestation state read back from a result's
// JSON: its encoding kept as sent, its name and whether it verified.
type decodedAttestation struct {
	state string
	raw   string
}

func (d decodedAttestation) IsAttested() bool             { return d.state == "attested" }
func (d decodedAttestation) String() string               { return d.state }
func (d decodedAttestation) MarshalJSON() ([]byte, error) { return []byte(d.raw), nil }

func decodeAttestation(b json.RawMessage) (Attestation, error) {
	var j struct {
		State *string `json:"state"`
	}
	if err := json.Unmarshal(b, &j); err != nil {
		return nil, fmt.Errorf("attestation: %w", err)
	}
	if j.State == nil {
		return nil, &frame.MissingMemberError{Object: "attestation", Member: "state"}
	}
	if *j.State == "not_checked" && string(b) == `{"state":"not_checked"}` {
		return nil, nil
	}
	return decodedAttestation{state: *j.State, raw: string(compactJSON(b))}, nil
}

// attestationOf is the state src gives id, nil (not checked) without one.
func attestationOf(src Attestations, id frame.ID) Attestation {
	if src == nil {
		return nil
	}
	return src.Attestation(id)
}
