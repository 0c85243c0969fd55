package host

import "github.com/ctxkit/ctxkit/wire"

// encodeEnvelope renders one envelope exactly as the CGP reference does (no
// line feed).
func encodeEnvelope(e wire.Envelope) ([]byte, error) { return wire.Marshal(e) }

// decodeEnvelope parses one envelope; an unknown type decodes to
// *wire.Unknown.
func decodeEnvelope(line []byte) (wire.Envelope, error) { return wire.Unmarshal(line) }
