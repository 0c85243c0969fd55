package trust

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
)

// bottomUpRoot builds the RFC 6962 tree level by level, pairing neighbours
// and promoting an unpaired last node unchanged — a construction
// independent of the recursive split used by merkleRoot.
func bottomUpRoot(cs []digest) digest {
	if len(cs) == 0 {
		return sha256.Sum256([]byte("contextgraph/attest/1/merkle-empty"))
	}
	level := make([][32]byte, len(cs))
	for i, c := range cs {
		level[i] = sha256.Sum256(append([]byte{0}, c[:]...))
	}
	for len(level) > 1 {
		var next [][32]byte
		for i := 0; i < len(level); i += 2 {
			if i+1 == len(level) {
				next = append(next, level[i])
				continue
			}
			b := append(append([]byte{1}, level[i][:]...), level[i+1][:]...)
			next = append(next, sha256.Sum256(b))
		}
		level = next
	}
	return level[0]
}

func leaves(n int) []digest {
	cs := make([]digest, n)
	for i := range cs {
		cs[i] = sha256.Sum256([]byte(fmt.Sprintf("leaf %d", i)))
	}
	return cs
}

func TestMerkleProofs0to65(t *testing.T) {
	for n := 0; n <= 65; n++ {
		cs := leaves(n)
		root := merkleRoot(cs)
		if want := digest(bottomUpRoot(cs)); root != want {
			t.Fatalf("n=%d: root %v, bottom-up %v", n, root, want)
		}
		if _, err := prove(cs, n); !errors.Is(err, errProofIndex) {
			t.Fatalf("n=%d: Prove(n) err %v", n, err)
		}
		if _, err := prove(cs, -1); !errors.Is(err, errProofIndex) {
			t.Fatalf("n=%d: Prove(-1) err %v", n, err)
		}
		for i := 0; i < n; i++ {
			p, err := prove(cs, i)
			if err != nil {
				t.Fatal(err)
			}
			if err := verifyInclusion(root, cs[i], p); err != nil {
				t.Fatalf("n=%d i=%d: %v", n, i, err)
			}
			// The wire form round-trips.
			back, err := parseProof(p.wire())
			if err != nil || verifyInclusion(root, cs[i], back) != nil {
				t.Fatalf("n=%d i=%d: wire round trip: %v", n, i, err)
			}
			// Another leaf's commitment does not verify at this position.
			if n > 1 {
				if err := verifyInclusion(root, cs[(i+1)%n], p); !errors.Is(err, errRootMismatch) {
					t.Fatalf("n=%d i=%d: wrong leaf err %v", n, i, err)
				}
			}
			for j := range p.Path {
				q := cloneProof(p)
				q.Path[j].Sibling[0] ^= 1
				if err := verifyInclusion(root, cs[i], q); !errors.Is(err, errRootMismatch) {
					t.Fatalf("n=%d i=%d step %d: tampered sibling err %v", n, i, j, err)
				}
				q = cloneProof(p)
				q.Path[j].SiblingIsLeft = !q.Path[j].SiblingIsLeft
				if err := verifyInclusion(root, cs[i], q); !errors.Is(err, errProofShape) {
					t.Fatalf("n=%d i=%d step %d: flipped side err %v", n, i, j, err)
				}
			}
			q := cloneProof(p)
			q.LeafIndex = uint64(n)
			if err := verifyInclusion(root, cs[i], q); !errors.Is(err, errProofIndex) {
				t.Fatalf("n=%d i=%d: index=count err %v", n, i, err)
			}
			q = cloneProof(p)
			q.Path = append(q.Path, proofStep{})
			if err := verifyInclusion(root, cs[i], q); !errors.Is(err, errProofShape) {
				t.Fatalf("n=%d i=%d: extra step err %v", n, i, err)
			}
			if len(p.Path) > 0 {
				q = cloneProof(p)
				q.Path = q.Path[:len(q.Path)-1]
				if err := verifyInclusion(root, cs[i], q); !errors.Is(err, errProofShape) {
					t.Fatalf("n=%d i=%d: short path err %v", n, i, err)
				}
			}
		}
	}
}

func cloneProof(p inclusionProof) inclusionProof {
	p.Path = append([]proofStep(nil), p.Path...)
	return p
}

func TestMerkleProofBounds(t *testing.T) {
	c := leaves(1)[0]
	long := inclusionProof{LeafIndex: 0, LeafCount: math.MaxUint64, Path: make([]proofStep, 65)}
	if _, err := rootFromProof(c, long); !errors.Is(err, errProofTooLong) {
		t.Fatalf("65 steps: %v", err)
	}
	if _, err := rootFromProof(c, inclusionProof{LeafIndex: 0, LeafCount: 0}); !errors.Is(err, errProofIndex) {
		t.Fatalf("empty tree: %v", err)
	}
	if _, err := rootFromProof(c, inclusionProof{LeafIndex: 5, LeafCount: 3, Path: make([]proofStep, 2)}); !errors.Is(err, errProofIndex) {
		t.Fatalf("index outside: %v", err)
	}
	// The largest tree: 2^64-1 leaves needs 64 steps for its first leaf; the
	// walk must neither panic nor accept a shorter path.
	huge := inclusionProof{LeafIndex: 0, LeafCount: math.MaxUint64, Path: make([]proofStep, 64)}
	if _, err := rootFromProof(c, huge); err != nil {
		t.Fatalf("64-step proof of a 2^64-1 tree refused: %v", err)
	}
	huge.Path = huge.Path[:63]
	if _, err := rootFromProof(c, huge); !errors.Is(err, errProofShape) {
		t.Fatalf("63-step proof of a 2^64-1 tree: %v", err)
	}
	// The last leaf of that tree sits one level up: 63 steps, all on the left.
	last := inclusionProof{LeafIndex: math.MaxUint64 - 1, LeafCount: math.MaxUint64, Path: make([]proofStep, 63)}
	for i := range last.Path {
		last.Path[i].SiblingIsLeft = true
	}
	if _, err := rootFromProof(c, last); err != nil {
		t.Fatalf("last leaf of a 2^64-1 tree: %v", err)
	}
	if _, err := parseProof(long.wire()); !errors.Is(err, errProofTooLong) {
		t.Fatalf("ParseProof 65 steps: %v", err)
	}
	w := inclusionProof{LeafCount: 2, Path: []proofStep{{}}}.wire()
	w.Path[0].Sibling = "sha256:" + strings.Repeat("AB", 32)
	if _, err := parseProof(w); !errors.Is(err, errMalformedDigest) {
		t.Fatalf("uppercase sibling: %v", err)
	}
}

func TestEmptyRoot(t *testing.T) {
	if merkleRoot(nil) != digest(sha256.Sum256([]byte("contextgraph/attest/1/merkle-empty"))) {
		t.Fatal("empty root")
	}
	one := leaves(1)
	if merkleRoot(one) != digest(sha256.Sum256(append([]byte{0}, one[0][:]...))) {
		t.Fatal("single-leaf root is not the leaf hash")
	}
}
