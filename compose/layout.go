package compose

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/ctxkit/ctxkit/frame"
	"github.com/ctxkit/ctxkit/internal/cgpjson"
)

// maxLayoutBytes bounds the layout documents ParseLayout reads.
const maxLayoutBytes = 16 << 20

type layoutJSON struct {
	Version   int        `json:"version"`
	Placement string     `json:"placement"`
	Frames    []frame.ID `json:"frames"`
	Stable    int        `json:"stable"`
}

// MarshalJSON encodes the layout as
// {"version":1,"placement":"stable-first","frames":[...],"stable":N}.
func (l Layout) MarshalJSON() ([]byte, error) {
	frames := l.Frames
	if frames == nil {
		frames = []frame.ID{}
	}
	return cgpjson.MarshalNoEscape(layoutJSON{Version: l.Version, Placement: l.Placement.String(), Frames: frames, Stable: l.Stable})
}

// UnmarshalJSON decodes a layout and validates it (see Layout.Validate);
// every member is required and unknown members are refused. Errors name
// the member at fault.
func (l *Layout) UnmarshalJSON(data []byte) error {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		return &layoutError{Detail: "not a JSON object: " + err.Error()}
	}
	if raw == nil {
		return &layoutError{Detail: "not a JSON object"}
	}
	for _, k := range [...]string{"version", "placement", "frames", "stable"} {
		if _, ok := raw[k]; !ok {
			return &layoutError{Field: k, Detail: "required"}
		}
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var j layoutJSON
	if err := dec.Decode(&j); err != nil {
		return &layoutError{Detail: err.Error()}
	}
	p, ok := ParsePlacement(j.Placement)
	if !ok {
		return &layoutError{Field: "placement", Detail: fmt.Sprintf("unknown %q", j.Placement)}
	}
	out := Layout{Version: j.Version, Placement: p, Frames: j.Frames, Stable: j.Stable}
	if err := out.validate(); err != nil {
		return err
	}
	*l = out
	return nil
}

// ParseLayout decodes a layout a host stored between turns (its JSON form,
// at most 16 MiB) and validates it. Errors name the member at fault.
func ParseLayout(data []byte) (*Layout, error) {
	if len(data) > maxLayoutBytes {
		return nil, &layoutError{Detail: fmt.Sprintf("%d bytes exceed the limit of %d", len(data), maxLayoutBytes)}
	}
	var l Layout
	if err := l.UnmarshalJSON(data); err != nil {
		var le *layoutError
		if errors.As(err, &le) {
			return nil, le
		}
		return nil, &layoutError{Detail: err.Error()}
	}
	return &l, nil
}
