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

// readMember reads the value of member name into f. A member FrameMember
// names, sent as "", declines: UnmarshalJSON marks it present (Set), which
// Validate then holds to its rule (D1, F4, an unknown enumeration value,
// or P1-P3 for content).
func (f *Frame) readMember(r *cgpjson.Reader, name string) bool {
	switch name {
	case "content_ref":
		return r.Into(&f.ContentRef)
	case "transform":
		return r.Into(&f.Transform)
	case "provenance":
		return r.Into(&f.Provenance)
	case "embedding":
		return r.Into(&f.Embedding)
	case "relations":
		return r.Into(&f.Relations)
	}
	dst, marked := f.fastField(name)
	switch {
	case marked != nil:
		return r.Value(marked) && *marked != ""
	case dst != nil:
		return r.Value(dst)
	}
	return false
}

// fastField returns the field of the scalar member name: one of
// frameMembers (a string FrameMember marks present when sent as "") as
// marked, any other as dst.
func (f *Frame) fastField(name string) (dst any, marked *string) {
	switch name {
	case "id":
		return &f.ID, nil
	case "kind":
		return (*string)(&f.Kind), nil
	case "title":
		return &f.Title, nil
	case "score":
		return &f.Score, nil
	case "token_cost":
		return &f.TokenCost, nil
	case "uri":
		return &f.URI, nil
	case "tokenizer_ref":
		return &f.TokenizerRef, nil
	case "citation_label":
		return &f.CitationLabel, nil
	case "canonical_token_cost":
		return &f.CanonicalTokenCost, nil
	case "content": // the one marked member every frame sends, without the search
		return nil, &f.Content
	}
	for _, m := range frameMembers {
		if m.String() == name {
			return nil, f.field(m)
		}
	}
	return nil, nil
}
