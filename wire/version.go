package wire

import (
	"fmt"
	"strings"
)

// ProtocolVersion is the protocol version ctxkit speaks.
const ProtocolVersion = "contextgraph/1.0-draft"

// Family returns a version string's family: everything before its first
// '.', or the whole string when it has none. "contextgraph/1.0-draft" and
// "contextgraph/1.9" are both in family "contextgraph/1".
func Family(version string) string {
	if i := strings.IndexByte(version, '.'); i >= 0 {
		return version[:i]
	}
	return version
}

// Compatible reports whether two versions are in the same family (rule H1).
func Compatible(a, b string) bool { return Family(a) == Family(b) }

// versionMismatchError is the named error for a peer in another version
// family (rule H3).
type versionMismatchError struct {
	// Ours is the version this side speaks and Theirs the peer's.
	Ours, Theirs string
}

// Error names both versions.
func (e *versionMismatchError) Error() string {
	return fmt.Sprintf("handshake: version mismatch: we speak %s (family %s), peer speaks %s (family %s)",
		e.Ours, Family(e.Ours), e.Theirs, Family(e.Theirs))
}

// versionMismatch returns nil when theirs is compatible with ours, else a
// *versionMismatchError.
func versionMismatch(ours, theirs string) error {
	if Compatible(ours, theirs) {
		return nil
	}
	return &versionMismatchError{Ours: ours, Theirs: theirs}
}

// wellFormedVersion reports whether v is spelled "contextgraph/" major "."
// minor ["-draft"], with decimal major and minor.
func wellFormedVersion(v string) bool {
	rest, ok := strings.CutPrefix(v, "contextgraph/")
	if !ok {
		return false
	}
	rest = strings.TrimSuffix(rest, "-draft")
	major, minor, ok := strings.Cut(rest, ".")
	return ok && isDigits(major) && isDigits(minor)
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
