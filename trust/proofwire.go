package trust

import (
	"fmt"

	"github.com/ctxkit/ctxkit/wire"
)

// parseProof converts a wire inclusion proof, parsing each sibling as a
// strict digest. A path longer than maxProofSteps is refused before any
// sibling is read (errProofTooLong); a bad sibling wraps errMalformedDigest.
func parseProof(w wire.InclusionProof) (inclusionProof, error) {
	if len(w.Path) > maxProofSteps {
		return inclusionProof{}, fmt.Errorf("trust: parse proof: %w (%d)", errProofTooLong, len(w.Path))
	}
	p := inclusionProof{LeafIndex: w.LeafIndex, LeafCount: w.LeafCount, Path: make([]proofStep, len(w.Path))}
	for i, s := range w.Path {
		d, err := parseDigest(s.Sibling)
		if err != nil {
			return inclusionProof{}, fmt.Errorf("trust: parse proof: step %d: %w", i, err)
		}
		p.Path[i] = proofStep{Sibling: d, SiblingIsLeft: s.SiblingIsLeft}
	}
	return p, nil
}

// wire returns the proof in its wire form.
func (p inclusionProof) wire() wire.InclusionProof {
	w := wire.InclusionProof{LeafIndex: p.LeafIndex, LeafCount: p.LeafCount, Path: make([]wire.ProofStep, len(p.Path))}
	for i, s := range p.Path {
		w.Path[i] = wire.ProofStep{Sibling: s.Sibling.String(), SiblingIsLeft: s.SiblingIsLeft}
	}
	return w
}
