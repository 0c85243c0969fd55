package frame

// Query is a CGP context query (the payload of a query envelope). Fields are
// in wire order; Embedding holds f32 values.
type Query struct {
	Goal                      string           `json:"goal"`
	QueryText                 string           `json:"query_text,omitempty"`
	Embedding                 []float32        `json:"embedding,omitempty"`
	Kinds                     []Kind           `json:"kinds,omitempty"`
	Anchors                   []string         `json:"anchors,omitempty"`
	MaxFrames                 uint32           `json:"max_frames"`
	MaxTokens                 uint32           `json:"max_tokens"`
	AsOf                      string           `json:"as_of,omitempty"`
	RepresentationPreferences []Representation `json:"representation_preferences,omitempty"`
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
