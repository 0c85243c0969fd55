package conformance

import (
	"fmt"

	"github.com/ctxkit/ctxkit/wire"
)

// The harness decodes with wire.Unmarshal, which checks structure only: a
// conformance check must see what a provider actually sent — a score of 1.5,
// a malformed digest, an unknown envelope — and judge it by rule, where a
// validating decoder would refuse the whole line before any rule is named.

// encodeEnvelope returns the exact CGP encoding of env (no line feed).
func encodeEnvelope(env wire.Envelope) ([]byte, error) { return wire.Marshal(env) }

// decodeEnvelope decodes one envelope; an unknown type yields *wire.Unknown.
func decodeEnvelope(line []byte) (wire.Envelope, error) { return wire.Unmarshal(line) }

// clip shortens s for evidence.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + fmt.Sprintf("…(%d bytes)", len(s))
}
