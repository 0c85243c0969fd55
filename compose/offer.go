package compose

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/ctxkit/ctxkit/frame"
	"github.com/ctxkit/ctxkit/internal/cgpjson"
	"github.com/ctxkit/ctxkit/rule"
)

// The offer's JSON form, {"provider": ID, "frame": FRAME}, is the input
// of composition everywhere: an NDJSON line of `ctxkit compose`, an element
// of the HTTP API's "offers", a frame a host's fan-out accepted.

// appendJSON appends the offer's encoding ({"provider":…,"frame":…}) to dst.
func (o *Offer) appendJSON(dst []byte) ([]byte, error) {
	w := cgpjson.W{B: dst}
	w.Open()
	w.Str("provider", o.Provider)
	w.Key("frame")
	var err error
	if w.B, err = o.frame().AppendJSON(w.B); err != nil {
		return dst, fmt.Errorf("encode offer: %w", err)
	}
	w.Close()
	return w.B, nil
}

// MarshalJSON returns the offer's encoding.
func (o Offer) MarshalJSON() ([]byte, error) { return o.appendJSON(nil) }

// UnmarshalJSON decodes an offer; provider and frame are required.
func (o *Offer) UnmarshalJSON(b []byte) error {
	var aux struct {
		Provider *string      `json:"provider"`
		Frame    *frame.Frame `json:"frame"`
	}
	if err := json.Unmarshal(b, &aux); err != nil {
		return err
	}
	if aux.Provider == nil {
		return &frame.MissingMemberError{Object: "offer", Member: "provider"}
	}
	if aux.Frame == nil {
		return &frame.MissingMemberError{Object: "offer", Member: "frame"}
	}
	*o = Offer{Provider: *aux.Provider, Frame: aux.Frame}
	return nil
}

// Validate returns every rule the offer breaks, fields named from the
// offer: a blank provider id (it is half of the identity of every frame
// the provider offers) under "provider", then the frame's own violations
// under "frame.". A nil frame is checked as an empty one. It is the one
// offer check of the CLI, the server and `ctxkit validate`.
func (o *Offer) Validate() frame.Violations {
	var vs frame.Violations
	if strings.TrimSpace(o.Provider) == "" {
		vs = append(vs, &frame.RuleError{Rule: rule.Schema, Field: "provider", Detail: "offer's provider id is blank"})
	}
	return append(vs, o.frame().Validate().Prefix("frame")...)
}
