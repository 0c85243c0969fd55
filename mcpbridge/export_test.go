package mcpbridge

import "io"

// Remote is remote, for the package's external tests.
func (t Target) Remote() bool { return t.remote() }

// ErrReplyTooLarge is errReplyTooLarge, for the package's external tests.
var ErrReplyTooLarge = errReplyTooLarge

// BoundedReader reads r as a reply body is read: failing past the bound.
func BoundedReader(r io.Reader) io.Reader {
	return &boundedBody{rc: io.NopCloser(r), left: maxReplyBytes, limit: maxReplyBytes}
}
