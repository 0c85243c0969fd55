package frame

import "strings"

// ID is a frame's canonical identity: the host's id of the serving provider,
// the frame's id, and its content digest when it declares one (empty when
// absent). Its JSON form is the CGP FrameId.
type ID struct {
	// Provider is the host's local id for the serving provider (its routing
	// and consent key), not the name the provider declares. Wire: provider_id.
	Provider string `json:"provider_id"`
	// Frame is the provider-scoped frame id, equal to the frame's id member.
	Frame string `json:"frame_id"`
	// Digest is the frame's content_digest; empty when the frame declares
	// none, in which case the identity is not verifiable (rule D3) and the
	// member is omitted on the wire.
	Digest string `json:"content_digest,omitempty"`
}

// Compare orders identities totally: bytewise by provider, then frame id,
// then digest, an absent digest before any digest. It returns -1, 0 or +1.
// This order is the canonical composition order.
func (a ID) Compare(b ID) int {
	if c := strings.Compare(a.Provider, b.Provider); c != 0 {
		return c
	}
	if c := strings.Compare(a.Frame, b.Frame); c != 0 {
		return c
	}
	// The empty string sorts before every non-empty one, which is exactly
	// "absent before present".
	return strings.Compare(a.Digest, b.Digest)
}

// Verifiable reports whether the identity carries a content digest, so that a
// provider can confirm it is still current.
func (a ID) Verifiable() bool { return a.Digest != "" }

// String renders the identity for messages: provider/frame, then @digest
// when there is one.
func (a ID) String() string {
	if a.Digest == "" {
		return a.Provider + "/" + a.Frame
	}
	return a.Provider + "/" + a.Frame + "@" + a.Digest
}
