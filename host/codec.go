package host

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/ctxkit/ctxkit/wire"
)

// encodeEnvelope renders one envelope as compact JSON (no newline).
func encodeEnvelope(e wire.Envelope) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(e); err != nil {
		return nil, err
	}
	body := bytes.TrimRight(buf.Bytes(), "\n")
	out := make([]byte, 0, len(body)+24)
	out = append(out, `{"type":`...)
	out = append(out, fmt.Sprintf("%q", e.Type())...)
	if len(body) > 2 {
		out = append(out, ',')
	}
	out = append(out, body[1:]...)
	return out, nil
}

// decodeEnvelope parses one envelope.
func decodeEnvelope(line []byte) (wire.Envelope, error) {
	var head struct {
		Type string `json:"type"`
	}
	if err := json.Unmarshal(line, &head); err != nil {
		return nil, err
	}
	var e wire.Envelope
	switch head.Type {
	case wire.TypeHandshake:
		e = &wire.Handshake{}
	case wire.TypeHandshakeAck:
		e = &wire.HandshakeAck{}
	case wire.TypeQuery:
		e = &wire.Query{}
	case wire.TypeFrames:
		e = &wire.Frames{}
	case wire.TypeVerify:
		e = &wire.Verify{}
	case wire.TypeVerified:
		e = &wire.Verified{}
	case wire.TypeShutdown:
		return &wire.Shutdown{}, nil
	case wire.TypeError:
		e = &wire.Error{}
	default:
		return &wire.Unknown{Tag: head.Type, Raw: append([]byte(nil), line...)}, nil
	}
	if err := json.Unmarshal(line, e); err != nil {
		return nil, err
	}
	return e, nil
}
