package trust

import (
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"math/big"
)

// Strict Ed25519.
//
// What crypto/ed25519.Verify (Go 1.26) already does:
//   - rejects a signature whose scalar S is not canonical (S ≥ L, and any
//     of the top three bits set);
//   - rejects a non-canonical encoding of R, implicitly: it recomputes R and
//     compares its canonical encoding with the signature's R bytes;
//   - rejects (returns false for) a public key that is not a curve point.
//
// What it does not do, and this file adds (the "strict" profile of
// ed25519-dalek's verify_strict):
//   - reject a public key A of small order (order 1, 2, 4 or 8). Such a key
//     verifies forged signatures: with A the identity, R the identity and
//     S = 0, Verify accepts every message;
//   - reject a non-canonical encoding of A (y ≥ p, or x = 0 with the sign
//     bit set), which it accepts;
//   - reject a signature whose R is a small-order point.
// Both halves are tested in ed25519_test.go.

// PublicKey is an Ed25519 public key that passed the strict checks: 32
// bytes, a canonical encoding of a curve point that is not of small order.
// Obtain one from ParsePublicKey or Signer.PublicKey.
type PublicKey struct {
	b [ed25519.PublicKeySize]byte
}

// ErrMalformedKey reports a public key that is not 64 lowercase hex digits,
// not a canonical curve point, or a point of small order.
var ErrMalformedKey = errors.New("malformed ed25519 public key")

// ParsePublicKey parses 64 lowercase hex digits and applies the strict
// checks. Errors wrap ErrMalformedKey.
func ParsePublicKey(s string) (PublicKey, error) {
	var b [ed25519.PublicKeySize]byte
	if !decodeLowerHex(b[:], s) {
		return PublicKey{}, fmt.Errorf("trust: parse public key: %w: want 64 lowercase hex digits", ErrMalformedKey)
	}
	return newPublicKey(b[:])
}

// newPublicKey applies the strict checks to 32 raw key bytes. Errors wrap
// ErrMalformedKey.
func newPublicKey(raw []byte) (PublicKey, error) {
	var k PublicKey
	if len(raw) != ed25519.PublicKeySize {
		return k, fmt.Errorf("trust: public key: %w: %d bytes, want 32", ErrMalformedKey, len(raw))
	}
	copy(k.b[:], raw)
	switch {
	case !canonicalY(k.b):
		return PublicKey{}, fmt.Errorf("trust: public key: %w: non-canonical encoding", ErrMalformedKey)
	case smallOrder(k.b):
		return PublicKey{}, fmt.Errorf("trust: public key: %w: point of small order", ErrMalformedKey)
	case !onCurve(k.b):
		return PublicKey{}, fmt.Errorf("trust: public key: %w: not a curve point", ErrMalformedKey)
	}
	return k, nil
}

// bytes returns a copy of the 32 key bytes.
func (k PublicKey) bytes() []byte { return append([]byte(nil), k.b[:]...) }

// string returns the key as 64 lowercase hex digits.
func (k PublicKey) String() string { return hex.EncodeToString(k.b[:]) }

// Fingerprint returns "sha256:" and the hex SHA-256 of the 32 key bytes, a
// short form to show a person beside the provider it is trusted for.
func (k PublicKey) Fingerprint() string { return digest(sha256.Sum256(k.b[:])).String() }

// isZero reports whether k is the zero PublicKey (no key).
func (k PublicKey) isZero() bool { return k == PublicKey{} }

// Field prime p = 2²⁵⁵ − 19 and the scalar group order L, little-endian.
var (
	fieldP = [32]byte{0xed, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
		0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f}
	orderL = [32]byte{0xed, 0xd3, 0xf5, 0x5c, 0x1a, 0x63, 0x12, 0x58, 0xd6, 0x9c, 0xf7, 0xa2, 0xde, 0xf9, 0xde, 0x14,
		0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x10}
)

// smallOrderY lists, little-endian with the sign bit clear, the
// y-coordinates of the eight points of order dividing 8: 0 (order 4, x = ±i),
// 1 (identity), p−1 (order 2), and ±y₈ (order 8, four points). Every one of
// these y values is shared by the point and its negation, which has the
// same order. TestSmallOrderTable derives them from the curve equation.
var smallOrderY = [5][32]byte{
	{},
	{1},
	{0xec, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
		0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f},
	{0xc7, 0x17, 0x6a, 0x70, 0x3d, 0x4d, 0xd8, 0x4f, 0xba, 0x3c, 0x0b, 0x76, 0x0d, 0x10, 0x67, 0x0f,
		0x2a, 0x20, 0x53, 0xfa, 0x2c, 0x39, 0xcc, 0xc6, 0x4e, 0xc7, 0xfd, 0x77, 0x92, 0xac, 0x03, 0x7a},
	{0x26, 0xe8, 0x95, 0x8f, 0xc2, 0xb2, 0x27, 0xb0, 0x45, 0xc3, 0xf4, 0x89, 0xf2, 0xef, 0x98, 0xf0,
		0xd5, 0xdf, 0xac, 0x05, 0xd3, 0xc6, 0x33, 0x39, 0xb1, 0x38, 0x02, 0x88, 0x6d, 0x53, 0xfc, 0x05},
}

// lessLE reports whether little-endian a < b.
func lessLE(a, b *[32]byte) bool {
	for i := 31; i >= 0; i-- {
		if a[i] != b[i] {
			return a[i] < b[i]
		}
	}
	return false
}

// canonicalY reports whether the encoded y-coordinate (sign bit masked) is
// reduced below p.
func canonicalY(enc [32]byte) bool {
	enc[31] &= 0x7f
	return lessLE(&enc, &fieldP)
}

// smallOrder reports whether a canonically encoded point has order dividing
// 8. (x = 0 with the sign bit set, the only other non-canonical form, has
// y ∈ {1, p−1} and is caught here too.)
func smallOrder(enc [32]byte) bool {
	enc[31] &= 0x7f
	for i := range smallOrderY {
		if enc == smallOrderY[i] {
			return true
		}
	}
	return false
}

// canonicalScalar reports whether the little-endian s is below L.
func canonicalScalar(s []byte) bool {
	var a [32]byte
	copy(a[:], s)
	return lessLE(&a, &orderL)
}

// onCurve reports whether a canonically encoded y has a matching x on
// edwards25519: x² = (y² − 1)/(d·y² + 1) must be a square mod p, and x = 0
// must come with a clear sign bit. Key parsing only (not per signature), so
// math/big's speed is fine here.
func onCurve(enc [32]byte) bool {
	sign := enc[31] >> 7
	enc[31] &= 0x7f
	var be [32]byte
	for i := range enc {
		be[31-i] = enc[i]
	}
	p := new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), 255), big.NewInt(19))
	d := new(big.Int).Mul(big.NewInt(-121665), new(big.Int).ModInverse(big.NewInt(121666), p))
	d.Mod(d, p)
	y := new(big.Int).SetBytes(be[:])
	y2 := new(big.Int).Mul(y, y)
	y2.Mod(y2, p)
	u := new(big.Int).Sub(y2, big.NewInt(1))
	u.Mod(u, p)
	v := new(big.Int).Mul(d, y2)
	v.Add(v, big.NewInt(1)).Mod(v, p)
	x2 := new(big.Int).Mul(u, new(big.Int).ModInverse(v, p))
	x2.Mod(x2, p)
	if x2.Sign() == 0 {
		return sign == 0
	}
	return big.Jacobi(x2, p) == 1
}

// verifyEd25519 checks sig over msg under k strictly. It returns Valid,
// MalformedSignature (wrong length, non-canonical S or R, or R of small
// order) or BadSignature.
func verifyEd25519(k PublicKey, msg, sig []byte) Verdict {
	if len(sig) != ed25519.SignatureSize {
		return MalformedSignature
	}
	var r [32]byte
	copy(r[:], sig[:32])
	if !canonicalY(r) || smallOrder(r) || !canonicalScalar(sig[32:]) {
		return MalformedSignature
	}
	if !ed25519.Verify(k.b[:], msg, sig) {
		return BadSignature
	}
	return Valid
}
