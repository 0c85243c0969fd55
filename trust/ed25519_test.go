package trust

import (
	"bytes"
	"crypto/ed25519"
	"crypto/sha256"
	"math/big"
	"testing"
)

// Affine arithmetic on edwards25519 with math/big, independent of the code
// under test, to derive the small-order points from the curve equation.
var (
	testP = new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), 255), big.NewInt(19))
	testD = func() *big.Int {
		d := new(big.Int).Mul(big.NewInt(-121665), new(big.Int).ModInverse(big.NewInt(121666), testP))
		return d.Mod(d, testP)
	}()
)

type pt struct{ x, y *big.Int }

func mod(a *big.Int) *big.Int { return a.Mod(a, testP) }

func ptAdd(a, b pt) pt {
	x1y2 := mod(new(big.Int).Mul(a.x, b.y))
	y1x2 := mod(new(big.Int).Mul(a.y, b.x))
	y1y2 := mod(new(big.Int).Mul(a.y, b.y))
	x1x2 := mod(new(big.Int).Mul(a.x, b.x))
	dxy := mod(new(big.Int).Mul(testD, mod(new(big.Int).Mul(x1x2, y1y2))))
	xn := mod(new(big.Int).Add(x1y2, y1x2))
	xd := mod(new(big.Int).Add(big.NewInt(1), dxy))
	yn := mod(new(big.Int).Add(y1y2, x1x2)) // a = -1: y1y2 - a x1x2
	yd := mod(new(big.Int).Sub(big.NewInt(1), dxy))
	return pt{mod(xn.Mul(xn, new(big.Int).ModInverse(xd, testP))), mod(yn.Mul(yn, new(big.Int).ModInverse(yd, testP)))}
}

func ptEncode(a pt) [32]byte {
	var out [32]byte
	be := a.y.FillBytes(make([]byte, 32))
	for i := range be {
		out[i] = be[31-i]
	}
	if a.x.Bit(0) == 1 {
		out[31] |= 0x80
	}
	return out
}

// ptFromY returns the point with y and even x, if any.
func ptFromY(y *big.Int) (pt, bool) {
	y2 := mod(new(big.Int).Mul(y, y))
	u := mod(new(big.Int).Sub(y2, big.NewInt(1)))
	v := mod(new(big.Int).Add(mod(new(big.Int).Mul(testD, y2)), big.NewInt(1)))
	x2 := mod(new(big.Int).Mul(u, new(big.Int).ModInverse(v, testP)))
	x := new(big.Int).ModSqrt(x2, testP)
	if x == nil {
		return pt{}, false
	}
	if x.Bit(0) == 1 {
		x = mod(new(big.Int).Sub(testP, x))
	}
	return pt{x, new(big.Int).Set(y)}, true
}

// smallOrderPoints derives every point P with [8]P = identity: the
// y-coordinates solve d·y⁴ + 2y² − 1 = 0 (order 8), y = 0 (order 4) and
// y = ±1 (orders 1, 2).
func smallOrderPoints(t *testing.T) []pt {
	t.Helper()
	var ys []*big.Int
	ys = append(ys, big.NewInt(0), big.NewInt(1), new(big.Int).Sub(testP, big.NewInt(1)))
	s := new(big.Int).ModSqrt(mod(new(big.Int).Add(big.NewInt(1), testD)), testP)
	for _, sign := range []int64{1, -1} {
		num := mod(new(big.Int).Add(big.NewInt(-1), new(big.Int).Mul(big.NewInt(sign), s)))
		y2 := mod(num.Mul(num, new(big.Int).ModInverse(testD, testP)))
		if y := new(big.Int).ModSqrt(y2, testP); y != nil {
			ys = append(ys, y, mod(new(big.Int).Sub(testP, y)))
		}
	}
	var pts []pt
	for _, y := range ys {
		p, ok := ptFromY(y)
		if !ok {
			t.Fatalf("y=%x is not on the curve", y)
		}
		pts = append(pts, p, pt{mod(new(big.Int).Sub(testP, p.x)), p.y})
	}
	return pts
}

func TestSmallOrderTable(t *testing.T) {
	pts := smallOrderPoints(t)
	seen := map[[32]byte]bool{}
	for _, p := range pts {
		q := p
		for range 3 {
			q = ptAdd(q, q)
		}
		if q.x.Sign() != 0 || q.y.Cmp(big.NewInt(1)) != 0 {
			t.Fatalf("derived point y=%x does not have order dividing 8", p.y)
		}
		enc := ptEncode(p)
		seen[enc] = true
		if !smallOrder(enc) {
			t.Errorf("smallOrder missed %x", enc)
		}
	}
	// 8 distinct points: the torsion subgroup of edwards25519.
	if len(seen) != 8 {
		t.Fatalf("derived %d distinct small-order points, want 8", len(seen))
	}
	// A real key is not small order.
	pub, _, _ := ed25519.GenerateKey(bytes.NewReader(bytes.Repeat([]byte{7}, 64)))
	var enc [32]byte
	copy(enc[:], pub)
	if smallOrder(enc) {
		t.Fatal("generated key reported small order")
	}
}

// TestSmallOrderKeyForgery shows the gap in crypto/ed25519 this package
// closes: with the identity as public key, R the identity and S = 0,
// ed25519.Verify accepts any message. We refuse the key.
func TestSmallOrderKeyForgery(t *testing.T) {
	identity := make([]byte, 32)
	identity[0] = 1
	sig := make([]byte, 64)
	sig[0] = 1 // R = identity, S = 0
	msg := []byte("any message at all")
	if !ed25519.Verify(identity, msg, sig) {
		t.Fatal("crypto/ed25519 now rejects small-order keys; update the comment in ed25519.go")
	}
	if _, err := newPublicKey(identity); err == nil {
		t.Fatal("identity accepted as a public key")
	}
	for _, p := range smallOrderPoints(t) {
		enc := ptEncode(p)
		if _, err := newPublicKey(enc[:]); err == nil {
			t.Errorf("small-order key %x accepted", enc)
		}
	}
	// And the verdict path: a zero key is refused as malformed.
	s := testSigner(t, 1)
	c := digest(sha256.Sum256([]byte("x")))
	att := s.signCommitment(c, "2026-01-01T00:00:00Z")
	if v := verifyCommitment(c, &att, PublicKey{}); v != MalformedKey {
		t.Fatalf("zero key verdict %v", v)
	}
}

func TestNonCanonicalSignature(t *testing.T) {
	s := testSigner(t, 2)
	c := digest(sha256.Sum256([]byte("commitment")))
	att := s.signCommitment(c, "2026-01-01T00:00:00Z")
	if v := verifyCommitment(c, &att, s.PublicKey()); v != Valid {
		t.Fatalf("baseline verdict %v", v)
	}
	sig := make([]byte, 64)
	decodeLowerHex(sig, att.Signature)

	// S + L is the same scalar mod L but not canonical.
	bumped := append([]byte(nil), sig...)
	var carry uint16
	for i := 0; i < 32; i++ {
		v := uint16(bumped[32+i]) + uint16(orderL[i]) + carry
		bumped[32+i], carry = byte(v), v>>8
	}
	if carry != 0 || bumped[63]&0xe0 != 0 {
		t.Fatal("S+L overflowed; S < L < 2^253 makes this impossible")
	}
	if ed25519.Verify(s.PublicKey().bytes(), c[:], bumped) {
		t.Fatal("crypto/ed25519 accepts S+L; update the comment in ed25519.go")
	}
	if v := verifyEd25519(s.PublicKey(), c[:], bumped); v != MalformedSignature {
		t.Fatalf("S+L verdict %v, want malformed_signature", v)
	}

	// R replaced by a small-order point.
	for _, p := range smallOrderPoints(t) {
		enc := ptEncode(p)
		bad := append(append([]byte(nil), enc[:]...), sig[32:]...)
		if v := verifyEd25519(s.PublicKey(), c[:], bad); v != MalformedSignature {
			t.Fatalf("small-order R verdict %v", v)
		}
	}
	// R with a non-canonical y (y + p, for y < 19).
	nonCanon := fieldP
	nonCanon[0] += 3 // y = p + 3
	bad := append(append([]byte(nil), nonCanon[:]...), sig[32:]...)
	if v := verifyEd25519(s.PublicKey(), c[:], bad); v != MalformedSignature {
		t.Fatalf("non-canonical R verdict %v", v)
	}
	// A flipped bit in a canonical signature is a bad signature.
	flipped := append([]byte(nil), sig...)
	flipped[40] ^= 1
	if v := verifyEd25519(s.PublicKey(), c[:], flipped); v != BadSignature {
		t.Fatalf("flipped bit verdict %v", v)
	}
}

func TestNonCanonicalKey(t *testing.T) {
	// y = p + 1 encodes the identity non-canonically; crypto/ed25519 accepts
	// non-canonical encodings of valid points, we refuse them.
	k := fieldP
	k[0]++
	if _, err := newPublicKey(k[:]); err == nil {
		t.Fatal("non-canonical key accepted")
	}
	// x = 0 with the sign bit set.
	neg := [32]byte{1}
	neg[31] |= 0x80
	if _, err := newPublicKey(neg[:]); err == nil {
		t.Fatal("negative-zero key accepted")
	}
	// A y with no x on the curve (y = 2 is off the curve: checked below with
	// the independent arithmetic).
	if _, ok := ptFromY(big.NewInt(2)); ok {
		t.Fatal("test assumption: y=2 has a point")
	}
	if _, err := newPublicKey((&[32]byte{2})[:]); err == nil {
		t.Fatal("off-curve key accepted")
	}
	// A real key round-trips through hex.
	s := testSigner(t, 3)
	back, err := ParsePublicKey(s.PublicKey().String())
	if err != nil || back != s.PublicKey() {
		t.Fatalf("round trip: %v", err)
	}
	up := []byte(s.PublicKey().String())
	for i, c := range up {
		if c >= 'a' && c <= 'f' {
			up[i] = c - 32
			break
		}
	}
	if _, err := ParsePublicKey(string(up)); err == nil {
		t.Fatal("uppercase hex key accepted")
	}
	if _, err := newPublicKey(make([]byte, 31)); err == nil {
		t.Fatal("short key accepted")
	}
}

func TestOnCurveAgreesWithIndependentArithmetic(t *testing.T) {
	for y := int64(0); y < 200; y++ {
		_, want := ptFromY(big.NewInt(y))
		enc := [32]byte{byte(y)}
		if got := onCurve(enc); got != want {
			t.Errorf("y=%d: onCurve %v, want %v", y, got, want)
		}
	}
}

func testSigner(t testing.TB, n byte) *Signer {
	t.Helper()
	s, err := NewSigner(bytes.Repeat([]byte{n}, 32), "key-"+string('a'+n), "attester")
	if err != nil {
		t.Fatal(err)
	}
	return s
}
