package trust

import (
	"fmt"

	"github.com/ctxkit/ctxkit/wire"
)

// ParseProof converts a wire inclusion proof, parsing each sibling as a
// strict digest. A path longer than MaxProofSteps is refused before any
// sibling is read (ErrProofTooLong); a bad sibling wraps ErrMalformedDigest.
func ParseProof(w wire.InclusionProof) (InclusionProof, error) {
	if len(w.Path) > MaxProofSteps {
		return InclusionProof{}, fmt.Errorf("trust: parse proof: %w (%d)", ErrProofTooLong, len(w.Path))
	}
	p := InclusionProof{LeafIndex: w.LeafIndex, LeafCount: w.LeafCount, Path: make([]ProofStep, len(w.Path))}
	for i, s := range w.Path {
		d, err := ParseDigest(s.Sibling)
		if err != nil {
			return InclusionProof{}, fmt.Errorf("trust: parse proof: step %d: %w", i, err)
		}
		p.Path[i] = ProofStep{Sibling: d, SiblingIsLeft: s.SiblingIsLeft}
	}
	return p, nil
}

// Wire returns the proof in its wire form.
func (p InclusionProof) Wire() wire.InclusionProof {
	w := wire.InclusionProof{LeafIndex: p.LeafIndex, LeafCount: p.LeafCount, Path: make([]wire.ProofStep, len(p.Path))}
	for i, s := range p.Path {
		w.Path[i] = wire.ProofStep{Sibling: s.Sibling.String(), SiblingIsLeft: s.SiblingIsLeft}
	}
	return w
}
