package frame

import "github.com/ctxkit/ctxkit/internal/cgpjson"

// fastMembers are the frame members ReadJSON takes; the first five are the
// required ones (requiredFast), as bits of what Reader.Object returns.
var fastMembers = []string{
	"id", "kind", "title", "score", "token_cost",
	"content", "content_digest", "uri", "representation", "content_fidelity",
	"canonical_content_hash", "minimum_content_fidelity", "inline_content_requirement",
	"tokenizer_ref", "valid_from", "valid_to", "recorded_at", "citation_label",
	"canonical_token_cost", "content_ref", "transform", "provenance", "embedding", "relations",
}

const requiredFast = 1<<5 - 1

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
	seen, ok := r.Object(fastMembers, func(name string) bool { return f.readMember(r, name) })
	return ok && seen&requiredFast == requiredFast
}

// readMember reads the value of member name into f.
func (f *Frame) readMember(r *cgpjson.Reader, name string) bool {
	switch name {
	case "id":
		return r.Value(&f.ID)
	case "kind":
		return r.Value((*string)(&f.Kind))
	case "title":
		return r.Value(&f.Title)
	case "score":
		return r.Value(&f.Score)
	case "token_cost":
		return r.Value(&f.TokenCost)
	case "uri":
		return r.Value(&f.URI)
	case "tokenizer_ref":
		return r.Value(&f.TokenizerRef)
	case "citation_label":
		return r.Value(&f.CitationLabel)
	case "canonical_token_cost":
		return r.Value(&f.CanonicalTokenCost)
	case "content_ref":
		return r.Value(&f.ContentRef)
	case "transform":
		return r.Value(&f.Transform)
	case "provenance":
		return r.Value(&f.Provenance)
	case "embedding":
		return r.Value(&f.Embedding)
	case "relations":
		return r.Value(&f.Relations)
	}
	// A member FrameMember names, sent as "", declines: UnmarshalJSON
	// marks it present (Set), which Validate then holds to its rule (D1,
	// F4, an unknown enumeration value, or P1-P3 for content).
	dst := f.presenceMember(name)
	return dst != nil && r.Value(dst) && *dst != ""
}

// presenceMember returns the field of the string member name that
// FrameMember marks present when sent as "", or nil.
func (f *Frame) presenceMember(name string) *string {
	switch name {
	case "content":
		return &f.Content
	case "content_digest":
		return &f.ContentDigest
	case "representation":
		return (*string)(&f.Representation)
	case "content_fidelity":
		return (*string)(&f.ContentFidelity)
	case "canonical_content_hash":
		return &f.CanonicalContentHash
	case "minimum_content_fidelity":
		return (*string)(&f.MinimumContentFidelity)
	case "inline_content_requirement":
		return (*string)(&f.InlineContentRequirement)
	case "valid_from":
		return &f.ValidFrom
	case "valid_to":
		return &f.ValidTo
	case "recorded_at":
		return &f.RecordedAt
	}
	return nil
}
