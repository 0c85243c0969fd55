package frame

import "github.com/ctxkit/ctxkit/internal/cgpjson"

// The frame members ReadJSON takes, as positions in fastMembers, in the
// order the reference serializer (and so AppendJSON) writes them.
const (
	fmID = iota
	fmKind
	fmTitle
	fmContent
	fmContentDigest
	fmURI
	fmRepresentation
	fmContentFidelity
	fmCanonicalContentHash
	fmContentRef
	fmTransform
	fmMinimumContentFidelity
	fmInlineContentRequirement
	fmScore
	fmTokenCost
	fmCanonicalTokenCost
	fmTokenizerRef
	fmProvenance
	fmCitationLabel
	fmEmbedding
	fmRelations
	fmValidFrom
	fmValidTo
	fmRecordedAt
)

var fastMembers = []string{
	fmID: "id", fmKind: "kind", fmTitle: "title", fmContent: "content", fmContentDigest: "content_digest",
	fmURI: "uri", fmRepresentation: "representation", fmContentFidelity: "content_fidelity",
	fmCanonicalContentHash: "canonical_content_hash", fmContentRef: "content_ref", fmTransform: "transform",
	fmMinimumContentFidelity: "minimum_content_fidelity", fmInlineContentRequirement: "inline_content_requirement",
	fmScore: "score", fmTokenCost: "token_cost", fmCanonicalTokenCost: "canonical_token_cost",
	fmTokenizerRef: "tokenizer_ref", fmProvenance: "provenance", fmCitationLabel: "citation_label",
	fmEmbedding: "embedding", fmRelations: "relations", fmValidFrom: "valid_from", fmValidTo: "valid_to",
	fmRecordedAt: "recorded_at",
}

// fastMarked maps the positions of the members FrameMember marks present
// when sent as "" to their FrameMember (the zero value elsewhere).
var fastMarked = [...]FrameMember{
	fmContent: memberContent, fmContentDigest: MemberContentDigest, fmRepresentation: memberRepresentation,
	fmContentFidelity: memberContentFidelity, fmCanonicalContentHash: memberCanonicalContentHash,
	fmMinimumContentFidelity: memberMinimumContentFidelity, fmInlineContentRequirement: memberInlineContentRequirement,
	fmValidFrom: MemberValidFrom, fmValidTo: memberValidTo, fmRecordedAt: memberRecordedAt,
}

// requiredFast has the bits of the required members.
const requiredFast = 1<<fmID | 1<<fmKind | 1<<fmTitle | 1<<fmScore | 1<<fmTokenCost

// ReadJSON reads one frame object from r, the fast path of UnmarshalJSON
// for the HTTP service's request decoders. It reports false, and the
// caller falls back to encoding/json, for anything it cannot decode
// exactly as UnmarshalJSON would: besides what the Reader declines, a
// missing required member, and a member that FrameMember names (a
// timestamp, digest or enumeration) sent as "", which UnmarshalJSON marks
// present (see Has). Members whose types have their own UnmarshalJSON
// (provenance, relations, content_ref, transform, embedding) are delimited
// here and decoded by those methods, so their rules live in one place.
// FuzzReadJSONMatchesUnmarshal holds it to that.
func (f *Frame) ReadJSON(r *cgpjson.Reader) bool {
	seen, ok := r.Object(fastMembers, func(k int) bool { return f.readMember(r, k) })
	return ok && seen&requiredFast == requiredFast
}

// readMember reads the value of member fastMembers[k] into f. A member
// FrameMember names, sent as "", declines: UnmarshalJSON marks it present
// (Set), which Validate then holds to its rule (D1, F4, an unknown
// enumeration value, or P1-P3 for content).
func (f *Frame) readMember(r *cgpjson.Reader, k int) bool {
	switch k {
	case fmID:
		return r.Value(&f.ID)
	case fmKind:
		return r.Value((*string)(&f.Kind))
	case fmTitle:
		return r.Value(&f.Title)
	case fmURI:
		return r.Value(&f.URI)
	case fmScore:
		return r.Value(&f.Score)
	case fmTokenCost:
		return r.Value(&f.TokenCost)
	case fmCanonicalTokenCost:
		return r.Value(&f.CanonicalTokenCost)
	case fmTokenizerRef:
		return r.Value(&f.TokenizerRef)
	case fmCitationLabel:
		return r.Value(&f.CitationLabel)
	case fmContentRef:
		return r.Into(&f.ContentRef)
	case fmTransform:
		return r.Into(&f.Transform)
	case fmProvenance:
		return r.Into(&f.Provenance)
	case fmEmbedding:
		return r.Into(&f.Embedding)
	case fmRelations:
		return r.Into(&f.Relations)
	}
	dst := f.field(fastMarked[k])
	return dst != nil && r.Value(dst) && *dst != ""
}
