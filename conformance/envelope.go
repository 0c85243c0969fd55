package conformance

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/ctxkit/ctxkit/wire"
)

// The harness speaks the wire itself, leniently: a conformance check must
// see what a provider actually sent — a score of 1.5, a malformed digest, an
// unknown envelope — and judge it, where a strict decoder would refuse the
// whole line before any rule could be named.

// encodeEnvelope writes one envelope as compact JSON with "type" first and
// no HTML escaping (no trailing newline).
func encodeEnvelope(env wire.Envelope) ([]byte, error) {
	body, err := marshalNoEscape(env)
	if err != nil {
		return nil, fmt.Errorf("encode %s: %w", env.Type(), err)
	}
	tag, _ := marshalNoEscape(env.Type())
	var b bytes.Buffer
	b.WriteString(`{"type":`)
	b.Write(tag)
	if rest := bytes.TrimPrefix(body, []byte("{")); len(rest) > 1 {
		b.WriteByte(',')
		b.Write(rest)
	} else {
		b.WriteByte('}')
	}
	return b.Bytes(), nil
}

// decodeEnvelope reads one envelope leniently: unknown members are ignored,
// null optionals read as absent, values are not range-checked, and an
// unknown type yields *wire.Unknown.
func decodeEnvelope(line []byte) (wire.Envelope, error) {
	line = bytes.TrimSpace(line)
	var head struct {
		Type *string `json:"type"`
	}
	if err := json.Unmarshal(line, &head); err != nil {
		return nil, fmt.Errorf("decode envelope: %w", err)
	}
	if head.Type == nil {
		return nil, fmt.Errorf("decode envelope: no type member")
	}
	var env wire.Envelope
	switch *head.Type {
	case wire.TypeHandshake:
		env = &wire.Handshake{}
	case wire.TypeHandshakeAck:
		env = &wire.HandshakeAck{}
	case wire.TypeQuery:
		env = &wire.Query{}
	case wire.TypeFrames:
		env = &wire.Frames{}
	case wire.TypeVerify:
		env = &wire.Verify{}
	case wire.TypeVerified:
		env = &wire.Verified{}
	case wire.TypeShutdown:
		return &wire.Shutdown{}, nil
	case wire.TypeError:
		env = &wire.Error{}
	default:
		return &wire.Unknown{Tag: *head.Type, Raw: append([]byte(nil), line...)}, nil
	}
	if err := json.Unmarshal(line, env); err != nil {
		return nil, fmt.Errorf("decode %s envelope: %w", *head.Type, err)
	}
	return env, nil
}

// clip shortens s for evidence.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + fmt.Sprintf("…(%d bytes)", len(s))
}
