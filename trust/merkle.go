package trust

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"math/bits"
)

// maxProofSteps is the longest inclusion path verifyInclusion walks. A path
// of n steps describes a tree of up to 2ⁿ leaves, so 64 covers any result
// that can exist; the cap bounds the hashing a peer can demand.
const maxProofSteps = 64

// proofStep is one step of an inclusion proof, leaf upward: the sibling
// subtree hash and whether it is the left operand at that level. Wire
// members: "sibling" ("sha256:<hex>"), "sibling_is_left".
type proofStep struct {
	// Sibling is the hash of the sibling subtree at this level.
	Sibling digest `json:"sibling"`
	// SiblingIsLeft is true when Sibling is the left operand of the node
	// hash at this level.
	SiblingIsLeft bool `json:"sibling_is_left"`
}

// inclusionProof shows that one commitment is a leaf of a Merkle root
// (RFC 6962 tree shape). Wire members: "leaf_index", "leaf_count", "path".
type inclusionProof struct {
	// LeafIndex is the 0-based position of the proven leaf; it must be
	// below LeafCount.
	LeafIndex uint64 `json:"leaf_index"`
	// LeafCount is the number of leaves in the tree.
	LeafCount uint64 `json:"leaf_count"`
	// Path lists the sibling hashes from the leaf up to the root; at most
	// maxProofSteps steps.
	Path []proofStep `json:"path"`
}

// Errors of inclusion-proof verification. All are wrapped with detail.
var (
	// errProofTooLong: the path has more than maxProofSteps steps.
	errProofTooLong = errors.New("inclusion path longer than 64 steps")
	// errProofIndex: leaf_index is not inside a tree of leaf_count leaves.
	errProofIndex = errors.New("leaf index outside the tree")
	// errProofShape: the path's length or sides do not match the tree shape
	// that leaf_index and leaf_count determine.
	errProofShape = errors.New("inclusion path does not match the tree shape")
	// errRootMismatch: the path is well formed but leads to another root.
	errRootMismatch = errors.New("inclusion proof leads to a different root")
)

// emptyRoot is the root of a tree with no leaves:
// SHA256("contextgraph/attest/1/merkle-empty").
func emptyRoot() digest { return sha256.Sum256([]byte(tagMerkleEmpty)) }

func leafHash(c digest) digest {
	var b [1 + sha256.Size]byte
	b[0] = 0x00
	copy(b[1:], c[:])
	return sha256.Sum256(b[:])
}

func nodeHash(l, r digest) digest {
	var b [1 + 2*sha256.Size]byte
	b[0] = 0x01
	copy(b[1:], l[:])
	copy(b[1+sha256.Size:], r[:])
	return sha256.Sum256(b[:])
}

// split returns the largest power of two strictly less than n (n ≥ 2).
func split(n uint64) uint64 { return 1 << (bits.Len64(n-1) - 1) }

// merkleRoot returns the RFC 6962 root over commitments, which the caller
// passes in canonical FrameID order (resultCommitments does this): a leaf
// is SHA256(0x00 ‖ c), a node SHA256(0x01 ‖ left ‖ right), the left subtree
// holds the largest power of two strictly less than n leaves, and an empty
// list has root emptyRoot. Linear time; the recursion depth is log₂ n.
func merkleRoot(commitments []digest) digest {
	if len(commitments) == 0 {
		return emptyRoot()
	}
	return subtreeRoot(commitments)
}

func subtreeRoot(cs []digest) digest {
	if len(cs) == 1 {
		return leafHash(cs[0])
	}
	k := split(uint64(len(cs)))
	return nodeHash(subtreeRoot(cs[:k]), subtreeRoot(cs[k:]))
}

// prove returns the inclusion proof of leaf index within commitments, or an
// error wrapping errProofIndex when index is outside the list.
func prove(commitments []digest, index int) (inclusionProof, error) {
	if index < 0 || index >= len(commitments) {
		return inclusionProof{}, fmt.Errorf("trust: prove: %w: index %d of %d leaves", errProofIndex, index, len(commitments))
	}
	p := inclusionProof{LeafIndex: uint64(index), LeafCount: uint64(len(commitments))}
	// Walk down from the root, collecting siblings root-first, then reverse
	// into leaf-first order.
	cs, i := commitments, index
	for len(cs) > 1 {
		k := int(split(uint64(len(cs))))
		if i < k {
			p.Path = append(p.Path, proofStep{Sibling: subtreeRoot(cs[k:]), SiblingIsLeft: false})
			cs = cs[:k]
		} else {
			p.Path = append(p.Path, proofStep{Sibling: subtreeRoot(cs[:k]), SiblingIsLeft: true})
			cs, i = cs[k:], i-k
		}
	}
	for a, b := 0, len(p.Path)-1; a < b; a, b = a+1, b-1 {
		p.Path[a], p.Path[b] = p.Path[b], p.Path[a]
	}
	return p, nil
}

// rootFromProof recomputes the root that proof leads to from leaf
// commitment c. Before hashing anything it rejects a path longer than
// maxProofSteps (errProofTooLong), a leaf index outside the tree or an
// empty tree (errProofIndex), and a path whose length or sides differ from
// the unique shape of a tree of LeafCount leaves at LeafIndex
// (errProofShape) — so a proof means exactly one position in one tree.
func rootFromProof(c digest, proof inclusionProof) (digest, error) {
	if len(proof.Path) > maxProofSteps {
		return digest{}, fmt.Errorf("trust: verify inclusion: %w (%d)", errProofTooLong, len(proof.Path))
	}
	if proof.LeafIndex >= proof.LeafCount {
		return digest{}, fmt.Errorf("trust: verify inclusion: %w: index %d of %d leaves", errProofIndex, proof.LeafIndex, proof.LeafCount)
	}
	// Expected sides, root-first: at each level the leaf is in the left part
	// (sibling on the right) or the right part (sibling on the left).
	var sides [maxProofSteps]bool
	depth := 0
	n, i := proof.LeafCount, proof.LeafIndex
	for n > 1 {
		if depth == maxProofSteps || depth == len(proof.Path) {
			return digest{}, fmt.Errorf("trust: verify inclusion: %w: path has %d steps, tree needs more", errProofShape, len(proof.Path))
		}
		k := split(n)
		if i < k {
			sides[depth], n = false, k
		} else {
			sides[depth], n, i = true, n-k, i-k
		}
		depth++
	}
	if depth != len(proof.Path) {
		return digest{}, fmt.Errorf("trust: verify inclusion: %w: path has %d steps, tree needs %d", errProofShape, len(proof.Path), depth)
	}
	acc := leafHash(c)
	for j, step := range proof.Path {
		if step.SiblingIsLeft != sides[depth-1-j] {
			return digest{}, fmt.Errorf("trust: verify inclusion: %w: step %d has the sibling on the wrong side", errProofShape, j)
		}
		if step.SiblingIsLeft {
			acc = nodeHash(step.Sibling, acc)
		} else {
			acc = nodeHash(acc, step.Sibling)
		}
	}
	return acc, nil
}

// verifyInclusion checks that proof shows c to be a leaf of root. It
// returns nil on success, else an error wrapping one of errProofTooLong,
// errProofIndex, errProofShape or errRootMismatch.
func verifyInclusion(root, c digest, proof inclusionProof) error {
	got, err := rootFromProof(c, proof)
	if err != nil {
		return err
	}
	if got != root {
		return fmt.Errorf("trust: verify inclusion: %w", errRootMismatch)
	}
	return nil
}
