package frame

// Query is a CGP context query (the payload of a query envelope). Fields are
// in wire order; Embedding holds f32 values.
type Query struct {
	// Goal states what the context is for; required and non-empty.
	Goal string `json:"goal"`
	// QueryText is an optional search text; empty means absent (omitted).
	QueryText string `json:"query_text,omitempty"`
	// Embedding is an optional query vector, sent only to a provider whose
	// embeddings fingerprint matches the host's exactly (rule E1); nil
	// means absent (omitted).
	Embedding []float32 `json:"embedding,omitempty"`
	// Kinds restricts the frame kinds wanted; empty (omitted) means any
	// kind (rule Q1).
	Kinds []Kind `json:"kinds,omitempty"`
	// Anchors are focal URIs a graph provider should stay near (rules G3,
	// G4); omitted when empty.
	Anchors []string `json:"anchors,omitempty"`
	// MaxFrames caps the number of frames in the reply (rule B4).
	MaxFrames uint32 `json:"max_frames"`
	// MaxTokens caps the sum of the reply's token costs, in budget tokens
	// (rule B1).
	MaxTokens uint32 `json:"max_tokens"`
	// AsOf pins retrieval to a point in time, in the protocol timestamp
	// grammar (rule F4); empty (omitted) means now, unless the query marks
	// it present-and-empty (see Has): one sent as "" is a pin that is not a
	// timestamp, which Validate reports.
	AsOf string `json:"as_of,omitempty"`
	// RepresentationPreferences lists acceptable representations, most
	// wanted first; empty (omitted) means full only. The provider serves
	// the first it supports or replies unsupported_representation.
	RepresentationPreferences []Representation `json:"representation_preferences,omitempty"`

	// empty marks the members present with an empty value; a mark matters
	// only while its field is "".
	empty QueryMember
}

// WantsKind reports whether a frame of kind k answers q: true when q names no
// kinds (any kind) or names k (rule Q1).
func (q *Query) WantsKind(k Kind) bool {
	if len(q.Kinds) == 0 {
		return true
	}
	for _, w := range q.Kinds {
		if w == k {
			return true
		}
	}
	return false
}
