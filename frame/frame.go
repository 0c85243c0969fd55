package frame

// Kind is what sort of evidence a frame holds. The vocabulary is open: the
// seven base kinds are constants, and any other spelling is kept verbatim and
// treated as opaque (protocol rule U2).
type Kind string

// The base frame kinds of contextgraph/1.
const (
	KindSnippet Kind = "snippet"
	KindSymbol  Kind = "symbol"
	KindFact    Kind = "fact"
	KindDoc     Kind = "doc"
	KindMemory  Kind = "memory"
	KindEpisode Kind = "episode"
	KindGraph   Kind = "graph"
)

// BaseKinds returns the seven base kinds in protocol order.
func BaseKinds() []Kind {
	return []Kind{KindSnippet, KindSymbol, KindFact, KindDoc, KindMemory, KindEpisode, KindGraph}
}

// IsBase reports whether k is one of the seven base kinds.
func (k Kind) IsBase() bool {
	switch k {
	case KindSnippet, KindSymbol, KindFact, KindDoc, KindMemory, KindEpisode, KindGraph:
		return true
	}
	return false
}

// String returns the kind's wire spelling.
func (k Kind) String() string { return string(k) }

// Representation says how much of the source a frame carries inline. The
// empty value means full (the wire omits the member for full frames).
type Representation string

// The representations of contextgraph/1.
const (
	RepresentationFull      Representation = "full"
	RepresentationCompact   Representation = "compact"
	RepresentationReference Representation = "reference"
)

// Effective returns r, or RepresentationFull when r is empty.
func (r Representation) Effective() Representation {
	if r == "" {
		return RepresentationFull
	}
	return r
}

// IsKnown reports whether r (after Effective) is one of the three representations.
func (r Representation) IsKnown() bool {
	switch r.Effective() {
	case RepresentationFull, RepresentationCompact, RepresentationReference:
		return true
	}
	return false
}

// Fidelity says how faithfully a frame's content matches its source.
type Fidelity string

// The content fidelities of contextgraph/1.
const (
	FidelityExact      Fidelity = "exact"
	FidelityNormalized Fidelity = "normalized"
	FidelitySummarized Fidelity = "summarized"
	FidelityOmitted    Fidelity = "omitted"
)

// IsKnown reports whether f is one of the four fidelities.
func (f Fidelity) IsKnown() bool {
	switch f {
	case FidelityExact, FidelityNormalized, FidelitySummarized, FidelityOmitted:
		return true
	}
	return false
}

// InlineRequirement says whether a frame's content must be inline.
type InlineRequirement string

// The inline content requirements of contextgraph/1.
const (
	InlineRequired                   InlineRequirement = "required"
	InlineResolvableReferenceAllowed InlineRequirement = "resolvable_reference_allowed"
)

// IsKnown reports whether r is one of the two requirements.
func (r InlineRequirement) IsKnown() bool {
	return r == InlineRequired || r == InlineResolvableReferenceAllowed
}

// ProvenanceFile is the provenance type of a link to a file; only such links
// are held to rule F5 and may be re-read byte for byte.
const ProvenanceFile = "file"

// Provenance is one link in the chain from a frame back to its source,
// closest to the source first. Type is the wire member "type" (file,
// derivation, episode, or any other spelling).
type Provenance struct {
	Type   string `json:"type"`
	URI    string `json:"uri,omitempty"`
	Range  string `json:"range,omitempty"`
	Digest string `json:"digest,omitempty"`
	Method string `json:"method,omitempty"`
	By     string `json:"by,omitempty"`
}

// Relation is a typed edge from a frame to another resource. Rel is an open
// vocabulary (code.calls, doc.documents, vendor:edge ...).
type Relation struct {
	Rel         string `json:"rel"`
	TargetURI   string `json:"target_uri"`
	DisplayName string `json:"display_name,omitempty"`
}

// ContentRef is an opaque handle a resolver can turn back into the full content.
type ContentRef struct {
	ProviderID string `json:"provider_id"`
	URI        string `json:"uri"`
	ExpiresAt  string `json:"expires_at,omitempty"`
}

// Transform names the method that derived a compact frame from its source.
type Transform struct {
	Method         string `json:"method"`
	Implementation string `json:"implementation"`
	Version        string `json:"version"`
}

// Embedding is a vector a provider attaches to a frame, tagged with the
// fingerprint of the model that produced it.
type Embedding struct {
	Fingerprint string    `json:"fingerprint"`
	Vector      []float32 `json:"vector,omitempty"`
}

// Frame is a CGP context frame: one unit of evidence a provider offers.
// Fields are in wire order. Score is a CGP f32. An empty string is an absent
// optional member; a nil pointer or slice likewise.
type Frame struct {
	ID                       string            `json:"id"`
	Kind                     Kind              `json:"kind"`
	Title                    string            `json:"title"`
	Content                  string            `json:"content,omitempty"`
	ContentDigest            string            `json:"content_digest,omitempty"`
	URI                      string            `json:"uri,omitempty"`
	Representation           Representation    `json:"representation,omitempty"`
	ContentFidelity          Fidelity          `json:"content_fidelity,omitempty"`
	CanonicalContentHash     string            `json:"canonical_content_hash,omitempty"`
	ContentRef               *ContentRef       `json:"content_ref,omitempty"`
	Transform                *Transform        `json:"transform,omitempty"`
	MinimumContentFidelity   Fidelity          `json:"minimum_content_fidelity,omitempty"`
	InlineContentRequirement InlineRequirement `json:"inline_content_requirement,omitempty"`
	Score                    float32           `json:"score"`
	TokenCost                uint32            `json:"token_cost"`
	CanonicalTokenCost       *uint32           `json:"canonical_token_cost,omitempty"`
	TokenizerRef             string            `json:"tokenizer_ref,omitempty"`
	ValidFrom                string            `json:"valid_from,omitempty"`
	ValidTo                  string            `json:"valid_to,omitempty"`
	RecordedAt               string            `json:"recorded_at,omitempty"`
	Provenance               []Provenance      `json:"provenance,omitempty"`
	CitationLabel            string            `json:"citation_label,omitempty"`
	Embedding                *Embedding        `json:"embedding,omitempty"`
	Relations                []Relation        `json:"relations,omitempty"`
}

// Identity returns the frame's canonical identity when served by provider
// (the host's id for that provider).
func (f *Frame) Identity(provider string) ID {
	return ID{Provider: provider, Frame: f.ID, Digest: f.ContentDigest}
}

// ExpectedInlineCost is the token_cost a frame must declare (rule B3/P4): the
// budget tokens of its inline content, so 0 for a reference frame, which
// carries none.
func (f *Frame) ExpectedInlineCost() int { return BudgetTokens(f.Content) }

// Cite returns the label a citation of the frame uses: the citation label, or
// the title when the label is blank.
func (f *Frame) Cite() string {
	if !isBlank(f.CitationLabel) {
		return f.CitationLabel
	}
	return f.Title
}
