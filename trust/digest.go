package trust

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
)

// digest is a SHA-256 value: a frame commitment, a provenance chain head, or
// a Merkle node. Its text form is the protocol's digest grammar,
// "sha256:" followed by 64 lowercase hex digits.
type digest [sha256.Size]byte

const digestPrefix = "sha256:"

// digestTextLen is the length of a digest's text form (71 bytes).
const digestTextLen = len(digestPrefix) + 2*sha256.Size

// errMalformedDigest reports text that is not "sha256:" and 64 lowercase hex
// digits.
var errMalformedDigest = errors.New("malformed digest")

// string returns the "sha256:<lowercase hex>" form.
func (d digest) String() string {
	var b [digestTextLen]byte
	copy(b[:], digestPrefix)
	hex.Encode(b[len(digestPrefix):], d[:])
	return string(b[:])
}

// MarshalText returns the String form.
func (d digest) MarshalText() ([]byte, error) { return []byte(d.String()), nil }

// UnmarshalText parses the String form strictly (see parseDigest).
func (d *digest) UnmarshalText(b []byte) error {
	v, err := parseDigest(string(b))
	if err != nil {
		return err
	}
	*d = v
	return nil
}

// parseDigest parses "sha256:" followed by exactly 64 lowercase hex digits.
// Uppercase hex, other algorithms and any other length are rejected with an
// error wrapping errMalformedDigest.
func parseDigest(s string) (digest, error) {
	var d digest
	if len(s) != digestTextLen || s[:len(digestPrefix)] != digestPrefix {
		return d, fmt.Errorf("trust: parse digest: %w: want %q and 64 lowercase hex digits", errMalformedDigest, digestPrefix)
	}
	if !decodeLowerHex(d[:], s[len(digestPrefix):]) {
		return d, fmt.Errorf("trust: parse digest: %w: not lowercase hex", errMalformedDigest)
	}
	return d, nil
}

// decodeLowerHex decodes src (exactly 2*len(dst) lowercase hex digits) into
// dst. It reports false, leaving dst unspecified, on any other input;
// uppercase A-F is refused because the protocol's hex is lowercase only and
// two verifiers must never disagree about the same bytes.
func decodeLowerHex(dst []byte, src string) bool {
	if len(src) != 2*len(dst) {
		return false
	}
	for i := range dst {
		hi, ok1 := lowerHexDigit(src[2*i])
		lo, ok2 := lowerHexDigit(src[2*i+1])
		if !ok1 || !ok2 {
			return false
		}
		dst[i] = hi<<4 | lo
	}
	return true
}

func lowerHexDigit(c byte) (byte, bool) {
	switch {
	case '0' <= c && c <= '9':
		return c - '0', true
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10, true
	}
	return 0, false
}
