package frame

import "slices"

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

// baseKinds are the seven base kinds in protocol order.
var baseKinds = [...]Kind{KindSnippet, KindSymbol, KindFact, KindDoc, KindMemory, KindEpisode, KindGraph}

// BaseKinds returns the seven base kinds in protocol order.
func BaseKinds() []Kind { return slices.Clone(baseKinds[:]) }

// isBase reports whether k is one of the seven base kinds.
func (k Kind) isBase() bool { return slices.Contains(baseKinds[:], k) }

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

// representations are the three representations.
var representations = [...]Representation{RepresentationFull, RepresentationCompact, RepresentationReference}

// isKnown reports whether r (after Effective) is one of the three representations.
func (r Representation) isKnown() bool { return slices.Contains(representations[:], r.Effective()) }

// Fidelity says how faithfully a frame's content matches its source.
type Fidelity string

// The content fidelities of contextgraph/1.
const (
	FidelityExact      Fidelity = "exact"
	FidelityNormalized Fidelity = "normalized"
	FidelitySummarized Fidelity = "summarized"
	FidelityOmitted    Fidelity = "omitted"
)

// fidelities are the four fidelities.
var fidelities = [...]Fidelity{FidelityExact, FidelityNormalized, FidelitySummarized, FidelityOmitted}

// isKnown reports whether f is one of the four fidelities.
func (f Fidelity) isKnown() bool { return slices.Contains(fidelities[:], f) }

// InlineRequirement says whether a frame's content must be inline.
type InlineRequirement string

// The inline content requirements of contextgraph/1.
const (
	InlineRequired                   InlineRequirement = "required"
	InlineResolvableReferenceAllowed InlineRequirement = "resolvable_reference_allowed"
)

// isKnown reports whether r is one of the two requirements.
func (r InlineRequirement) isKnown() bool {
	return r == InlineRequired || r == InlineResolvableReferenceAllowed
}

// ProvenanceFile is the provenance type of a link to a file; only such links
// are held to rule F5 and may be re-read byte for byte.
const ProvenanceFile = "file"

// Provenance is one link in the chain from a frame back to its source,
// closest to the source first. Type is the wire member "type" (file,
// derivation, episode, or any other spelling).
//
// An optional member whose field is empty is absent, unless the link marks
// it present-and-empty: decoding marks a member sent as "" (for example
// "uri": ""), and Set marks one a Go caller sets to "". Encodings (JSON and
// the attestation link encoding) write a marked member as "", so a link
// signed with a present-but-empty member keeps its commitment. Has reports
// presence; the zero marks (a link built from a composite literal) mean
// every empty field is absent. Copying a Provenance copies its marks, and
// == and map keys tell a present-empty member from an absent one.
type Provenance struct {
	// Type is the kind of link: file, derivation, episode or another
	// spelling. Only file links are held to rule F5.
	Type string `json:"type"`
	// URI addresses the source resource; empty (omitted) when absent.
	URI string `json:"uri,omitempty"`
	// Range narrows a file link to lines, as "L<start>[-<end>]"; empty
	// (omitted) means the whole resource.
	Range string `json:"range,omitempty"`
	// Digest is the "sha256:<hex>" digest of the exact bytes addressed by
	// URI and Range; a file link must carry a well-formed one (rule F5).
	// Empty (omitted) when absent.
	Digest string `json:"digest,omitempty"`
	// Method names how this link derived its content; empty (omitted)
	// when absent.
	Method string `json:"method,omitempty"`
	// By names the agent or tool that made this link; empty (omitted) when
	// absent.
	By string `json:"by,omitempty"`

	// empty marks the members present with an empty value; a mark matters
	// only while its field is "".
	empty ProvenanceMember
}

// Relation is a typed edge from a frame to another resource. Rel is an open
// vocabulary (code.calls, doc.documents, vendor:edge ...).
//
// DisplayName keeps an explicit empty string apart from absence, as
// Provenance does for its members: decoding marks "display_name": "" and Set
// marks one a Go caller sets to ""; the encoding writes a marked member as
// "", and Validate reports it (rule G1). A composite literal has no marks.
type Relation struct {
	// Rel is the edge type, an open vocabulary (code.calls,
	// doc.documents, vendor:edge ...); never rejected for being unknown.
	Rel string `json:"rel"`
	// TargetURI is the resource the edge points to; it must not be blank
	// (rule G2).
	TargetURI string `json:"target_uri"`
	// DisplayName is an optional human label for the target; when present
	// it must not be blank (rule G1). Empty means absent (omitted) unless
	// the relation marks it present-and-empty (see Has).
	DisplayName string `json:"display_name,omitempty"`

	// empty marks the members present with an empty value; a mark matters
	// only while its field is "".
	empty relationMember
}

// ContentRef is an opaque handle a resolver can turn back into the full content.
type ContentRef struct {
	// ProviderID names the provider that can resolve the handle.
	ProviderID string `json:"provider_id"`
	// URI is the opaque handle to resolve.
	URI string `json:"uri"`
	// ExpiresAt is when the handle stops resolving, in the protocol
	// timestamp grammar; empty (omitted) means no stated expiry, unless the
	// reference marks it present-and-empty (see Has).
	ExpiresAt string `json:"expires_at,omitempty"`

	// empty marks the members present with an empty value; a mark matters
	// only while its field is "".
	empty contentRefMember
}

// Transform names the method that derived a compact frame from its source.
type Transform struct {
	// Method names the derivation (for example a summary or an outline).
	Method string `json:"method"`
	// Implementation names the tool or model that applied Method.
	Implementation string `json:"implementation"`
	// Version is the version of Implementation.
	Version string `json:"version"`
}

// Embedding is a vector a provider attaches to a frame, tagged with the
// fingerprint of the model that produced it.
type Embedding struct {
	// Fingerprint names the model that produced Vector, as
	// "<model-id>/<dims>[/<norm>]".
	Fingerprint string `json:"fingerprint"`
	// Vector holds the f32 embedding values; nil (omitted) when the
	// provider sends only the fingerprint.
	Vector []float32 `json:"vector,omitempty"`
}

// Frame is a CGP context frame: one unit of evidence a provider offers.
// Fields are in wire order. Score is a CGP f32. An empty string is an absent
// optional member; a nil pointer or slice likewise.
//
// The members a FrameMember names are the exception: the timestamps
// ValidFrom, ValidTo and RecordedAt, the digests ContentDigest and
// CanonicalContentHash, and the enumerations Representation,
// ContentFidelity, MinimumContentFidelity and InlineContentRequirement. A
// frame remembers when one was sent as "" (see Has), so that Validate holds
// the present value to its rule (F4, D1, a known spelling) and counts it as
// carried for P1-P3, the encoding writes it back as "", and a frame
// attestation commits a present content_digest. An empty digest binds no content,
// though: identity, dedup, the audit's verification and the trust verdict
// read it as no digest. Set marks a member a Go caller sets to ""; a frame
// built as a composite literal has no marks, so its empty members are
// absent.
type Frame struct {
	// ID is the provider-scoped, stable frame id.
	ID string `json:"id"`
	// Kind is the frame kind (snippet, symbol, fact, doc, memory, episode,
	// graph, or any other spelling kept verbatim).
	Kind Kind `json:"kind"`
	// Title is a short human title; it must not be empty (rule F2).
	Title string `json:"title"`
	// Content is the inline evidence text; empty (omitted) for a reference
	// frame, which carries ContentRef instead. It is untrusted material
	// (rule R3).
	Content string `json:"content,omitempty"`
	// ContentDigest is the provider-declared "sha256:<hex>" digest of the
	// content (rule D1 grammar); it is the third component of the frame's
	// identity. Empty (omitted) when absent, unless marked present-and-empty
	// (see Has); forbidden for reference frames.
	ContentDigest string `json:"content_digest,omitempty"`
	// URI is the frame's source resource; empty (omitted) when absent.
	URI string `json:"uri,omitempty"`
	// Representation is full, compact or reference; empty (omitted) means
	// full (rules P1–P3), unless marked present-and-empty (see Has), which
	// Validate refuses.
	Representation Representation `json:"representation,omitempty"`
	// ContentFidelity says how faithfully Content renders the source
	// (exact, normalized, summarized, omitted); empty (omitted) when
	// undeclared, unless marked present-and-empty (see Has).
	ContentFidelity Fidelity `json:"content_fidelity,omitempty"`
	// CanonicalContentHash is the digest of the complete source content;
	// required for compact and reference frames, not carried by full ones.
	// Empty (omitted) when absent, unless marked present-and-empty (see
	// Has).
	CanonicalContentHash string `json:"canonical_content_hash,omitempty"`
	// ContentRef is the handle that resolves the full content; required
	// for compact and reference frames, nil (omitted) otherwise.
	ContentRef *ContentRef `json:"content_ref,omitempty"`
	// Transform names how a compact frame was derived; required for
	// compact frames only, nil (omitted) otherwise.
	Transform *Transform `json:"transform,omitempty"`
	// MinimumContentFidelity is the least fidelity at which the frame is
	// still useful; empty (omitted) when undeclared, unless marked
	// present-and-empty (see Has).
	MinimumContentFidelity Fidelity `json:"minimum_content_fidelity,omitempty"`
	// InlineContentRequirement says whether the content must be inlined or
	// a resolvable reference is acceptable; empty (omitted) when
	// undeclared, unless marked present-and-empty (see Has).
	InlineContentRequirement InlineRequirement `json:"inline_content_requirement,omitempty"`
	// Score is the provider-local relevance in [0, 1] (rule F1); it orders
	// frames within one provider only.
	Score float32 `json:"score"`
	// TokenCost is the inline content's cost in budget tokens,
	// ceil(UTF-8 bytes / 4), exactly (rules B3, P4); 0 for a reference
	// frame.
	TokenCost uint32 `json:"token_cost"`
	// CanonicalTokenCost is the complete source's cost in budget tokens;
	// nil (omitted) when undeclared.
	CanonicalTokenCost *uint32 `json:"canonical_token_cost,omitempty"`
	// TokenizerRef names a model tokenizer (for example
	// "openai:o200k_base"); empty (omitted) when absent.
	TokenizerRef string `json:"tokenizer_ref,omitempty"`
	// ValidFrom is when the evidence starts to hold, in the protocol
	// timestamp grammar (rule F4); empty (omitted) when absent, unless
	// marked present-and-empty (see Has).
	ValidFrom string `json:"valid_from,omitempty"`
	// ValidTo is when the evidence stops holding, in the protocol
	// timestamp grammar (rule F4); empty (omitted) when absent, unless
	// marked present-and-empty (see Has).
	ValidTo string `json:"valid_to,omitempty"`
	// RecordedAt is when the provider recorded the evidence, in the
	// protocol timestamp grammar (rule F4); empty (omitted) when absent,
	// unless marked present-and-empty (see Has).
	RecordedAt string `json:"recorded_at,omitempty"`
	// Provenance is the chain back to the source, closest to the source
	// first; nil (omitted) when empty.
	Provenance []Provenance `json:"provenance,omitempty"`
	// CitationLabel is the label a model cites the frame by; rule F3
	// requires it present and not blank. Empty means absent (omitted).
	CitationLabel string `json:"citation_label,omitempty"`
	// Embedding is an optional vector for the frame; nil (omitted) when
	// absent.
	Embedding *Embedding `json:"embedding,omitempty"`
	// Relations are typed edges to other resources; nil (omitted) when
	// empty.
	Relations []Relation `json:"relations,omitempty"`

	// empty marks the FrameMember members present with an empty value; a
	// mark matters only while its field is "".
	empty FrameMember
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
