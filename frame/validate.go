package frame

import (
	"fmt"
	"math"
	"strconv"

	"github.com/ctxkit/ctxkit/rule"
)

// collector accumulates violations.
type collector struct{ v Violations }

func (c *collector) add(r rule.Rule, field, format string, args ...any) {
	c.v = append(c.v, &RuleError{Rule: r, Field: field, Detail: fmt.Sprintf(format, args...)})
}

func (c *collector) merge(prefix string, v Violations) { c.v = append(c.v, v.Prefix(prefix)...) }

// digest holds s to the digest grammar unless it is "" (absent).
func (c *collector) digest(r rule.Rule, field, s string) {
	if s != "" {
		c.checkDigest(r, field, s)
	}
}

// checkDigest holds the value s of a present member to the digest grammar
// ("" included, which the grammar rejects).
func (c *collector) checkDigest(r rule.Rule, field, s string) {
	if p := digestProblem(s); p != "" {
		c.add(r, field, "malformed digest %q: %s", s, p)
	}
}

// finite reports the first value of the vector v (member field) that is
// NaN or infinite, which JSON cannot carry.
func (c *collector) finite(field string, v []float32) {
	for i, x := range v {
		if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
			c.add(rule.Schema, field+"["+strconv.Itoa(i)+"]", "value is not finite")
			return
		}
	}
}

// checkTimestamp holds the value s of a present member to the F4 grammar
// ("" included, which the grammar rejects).
func (c *collector) checkTimestamp(field, s string) {
	if err := checkTimestamp(s); err != nil {
		c.add(rule.F4, field, "timestamp %q: %v", s, err)
	}
}

// frameTimestamp checks frame timestamp member m when it is present, sent
// as "" included (which the grammar rejects).
func (c *collector) frameTimestamp(f *Frame, m FrameMember) {
	if !f.Has(m) {
		return
	}
	c.checkTimestamp(m.String(), *f.field(m))
}

// Validate checks every rule a single frame can break and returns all
// violations: F1 score in [0,1]; F2 non-blank title; F3 non-blank
// citation_label; F4 timestamps (one sent as "" is present and breaks it);
// F5 well-formed digest on file provenance; F17 line ranges on file
// provenance (a range sent as "" is present and breaks it); D1
// content_digest and canonical_content_hash grammar; P1-P3 representation
// invariants (content is carried when Has(MemberContent), "" included, so
// a full frame without it breaks P1 and a reference frame with "content":
// "" breaks P3); P4 a reference frame costs 0; B3 token_cost equals the
// budget tokens of the content; G1 every relation carries a non-blank
// display_name (absent breaks it too); G2 relations; and "schema" for a
// blank id, kind or embedding fingerprint, a non-finite embedding value, or
// an unknown enum spelling. A kind outside the base vocabulary is opaque
// (U2), not an error. A frame's own embedding fingerprint is opaque here:
// rule E1 binds the query embedding to the provider's declared fingerprint
// (see CheckQueryEmbedding).
//
// Two checks are stricter than the reference implementation's: a full frame
// carrying content_ref, transform or canonical_content_hash breaks P1 as
// the specification words it (the reference checks only that content is
// present), and every P1-P3 member is checked, not the first one missing.
func (f *Frame) Validate() Violations {
	var c collector
	if isBlank(f.ID) {
		c.add(rule.Schema, "id", "frame id is blank")
	}
	if isBlank(string(f.Kind)) {
		c.add(rule.Schema, "kind", "kind is blank")
	}
	if s := float64(f.Score); math.IsNaN(s) || s < 0 || s > 1 {
		c.add(rule.F1, "score", "score %v is outside [0,1]", f.Score)
	}
	if isBlank(f.Title) {
		c.add(rule.F2, "title", "title is blank")
	}
	if isBlank(f.CitationLabel) {
		if f.CitationLabel == "" {
			c.add(rule.F3, "citation_label", "citation_label is missing or empty")
		} else {
			c.add(rule.F3, "citation_label", "citation_label is blank")
		}
	}
	for _, m := range frameTimestamps {
		c.frameTimestamp(f, m)
	}
	// A digest sent as "" is present and malformed.
	for _, m := range [...]FrameMember{MemberContentDigest, memberCanonicalContentHash} {
		if f.Has(m) {
			c.checkDigest(rule.D1, m.String(), *f.field(m))
		}
	}
	f.checkRepresentation(&c)
	// An enumeration sent as "" is present and names no value.
	if f.Has(memberContentFidelity) && !f.ContentFidelity.isKnown() {
		c.add(rule.Schema, "content_fidelity", "unknown content fidelity %q", f.ContentFidelity)
	}
	if f.Has(memberMinimumContentFidelity) && !f.MinimumContentFidelity.isKnown() {
		c.add(rule.Schema, "minimum_content_fidelity", "unknown content fidelity %q", f.MinimumContentFidelity)
	}
	if f.Has(memberInlineContentRequirement) && !f.InlineContentRequirement.isKnown() {
		c.add(rule.Schema, "inline_content_requirement", "unknown inline content requirement %q", f.InlineContentRequirement)
	}
	want := f.ExpectedInlineCost()
	switch {
	case f.Representation.Effective() == RepresentationReference:
		if f.TokenCost != 0 {
			c.add(rule.P4, "token_cost", "a reference frame must declare token_cost 0, not %d", f.TokenCost)
		}
	case int64(f.TokenCost) != int64(want):
		c.add(rule.B3, "token_cost", "token_cost %d is not ceil(%d content bytes / 4) = %d", f.TokenCost, len(f.Content), want)
	}
	for i := range f.Provenance {
		p := &f.Provenance[i]
		field := "provenance[" + strconv.Itoa(i) + "]"
		if isBlank(p.Type) {
			c.add(rule.Schema, field+".type", "provenance type is blank")
		}
		if p.Type != ProvenanceFile {
			continue
		}
		if p.Digest == "" {
			c.add(rule.F5, field+".digest", "file provenance carries no digest")
		} else {
			c.digest(rule.F5, field+".digest", p.Digest)
		}
		if p.Has(MemberRange) { // a range sent as "" is present and malformed
			if _, err := ParseLineRange(p.Range); err != nil {
				c.add(rule.F17, field+".range", "line range %q: %v", p.Range, err)
			}
		}
	}
	for i := range f.Relations {
		r := &f.Relations[i]
		field := "relations[" + strconv.Itoa(i) + "]"
		if isBlank(r.Rel) {
			c.add(rule.Schema, field+".rel", "relation rel is blank")
		}
		if isBlank(r.TargetURI) {
			c.add(rule.G2, field+".target_uri", "relation target_uri is blank")
		}
		switch {
		case !r.has(memberDisplayName):
			c.add(rule.G1, field+".display_name", "relation carries no display_name")
		case isBlank(r.DisplayName): // "" included
			c.add(rule.G1, field+".display_name", "relation display_name is blank")
		}
	}
	if e := f.Embedding; e != nil {
		if isBlank(e.Fingerprint) {
			c.add(rule.Schema, "embedding.fingerprint", "embedding fingerprint is blank")
		}
		c.finite("embedding.vector", e.Vector)
	}
	return c.v
}

// checkRepresentation applies P1-P3 and the F4 grammar of content_ref.expires_at.
func (f *Frame) checkRepresentation(c *collector) {
	if f.ContentRef != nil {
		if isBlank(f.ContentRef.ProviderID) {
			c.add(rule.Schema, "content_ref.provider_id", "content_ref provider_id is blank")
		}
		if isBlank(f.ContentRef.URI) {
			c.add(rule.Schema, "content_ref.uri", "content_ref uri is blank")
		}
		if f.ContentRef.has(memberExpiresAt) {
			c.checkTimestamp("content_ref.expires_at", f.ContentRef.ExpiresAt)
		}
	}
	if f.Has(memberRepresentation) && f.Representation == "" {
		c.add(rule.Schema, "representation", `unknown representation ""`)
	}
	switch r := f.Representation.Effective(); r {
	case RepresentationFull:
		if !f.Has(memberContent) {
			c.add(rule.P1, "content", "a full frame must carry content")
		}
		if f.ContentRef != nil {
			c.add(rule.P1, "content_ref", "a full frame must not carry content_ref")
		}
		if f.Transform != nil {
			c.add(rule.P1, "transform", "a full frame must not carry transform")
		}
		if f.Has(memberCanonicalContentHash) {
			c.add(rule.P1, "canonical_content_hash", "a full frame must not carry canonical_content_hash")
		}
	case RepresentationCompact:
		if !f.Has(memberContent) {
			c.add(rule.P2, "content", "a compact frame must carry content")
		}
		if !f.Has(MemberContentDigest) {
			c.add(rule.P2, "content_digest", "a compact frame must carry content_digest")
		}
		if !f.Has(memberCanonicalContentHash) {
			c.add(rule.P2, "canonical_content_hash", "a compact frame must carry canonical_content_hash")
		}
		if f.Transform == nil {
			c.add(rule.P2, "transform", "a compact frame must carry transform")
		}
		if f.ContentRef == nil {
			c.add(rule.P2, "content_ref", "a compact frame must carry content_ref")
		}
	case RepresentationReference:
		if f.ContentRef == nil {
			c.add(rule.P3, "content_ref", "a reference frame must carry content_ref")
		}
		if !f.Has(memberCanonicalContentHash) {
			c.add(rule.P3, "canonical_content_hash", "a reference frame must carry canonical_content_hash")
		}
		if f.Has(memberContent) {
			c.add(rule.P3, "content", `a reference frame must not carry content, not even ""`)
		}
		if f.Has(MemberContentDigest) {
			c.add(rule.P3, "content_digest", "a reference frame must not carry content_digest")
		}
		if f.Transform != nil {
			c.add(rule.P3, "transform", "a reference frame must not carry transform")
		}
	default:
		c.add(rule.Schema, "representation", "unknown representation %q", r)
	}
}

// Validate checks a query: a non-blank goal, the F4 grammar of as_of, known
// representation preferences, and finite embedding values.
func (q *Query) Validate() Violations {
	var c collector
	if isBlank(q.Goal) {
		c.add(rule.Schema, "goal", "goal is blank")
	}
	if q.Has(MemberAsOf) {
		c.checkTimestamp("as_of", q.AsOf)
	}
	for i, r := range q.RepresentationPreferences {
		if r == "" || !r.isKnown() {
			c.add(rule.Schema, "representation_preferences["+strconv.Itoa(i)+"]", "unknown representation %q", r)
		}
	}
	for i, k := range q.Kinds {
		if isBlank(string(k)) {
			c.add(rule.Schema, "kinds["+strconv.Itoa(i)+"]", "kind is blank")
		}
	}
	c.finite("embedding", q.Embedding)
	return c.v
}

// validate checks a data-flow declaration: every egress scope is a base scope
// or a vendor "ns:name" scope (U3), and no off-machine scope is declared
// with egress false (C5).
func (d *DataFlow) validate() Violations {
	var c collector
	for i, s := range d.EgressScopes {
		field := "egress_scopes[" + strconv.Itoa(i) + "]"
		if !s.Valid() {
			c.add(rule.U3, field, "egress scope %q is neither a base scope nor namespace:name", s)
			continue
		}
		if s.offMachine() && !d.Egress {
			c.add(rule.C5, field, "off-machine scope %q declared with egress false", s)
		}
	}
	return c.v
}

// Validate checks provider info: non-blank name and version (H2) and the
// data-flow declaration.
func (p *ProviderInfo) Validate() Violations {
	var c collector
	if isBlank(p.Name) {
		c.add(rule.H2, "name", "provider name is blank")
	}
	if isBlank(p.Version) {
		c.add(rule.H2, "version", "provider version is blank")
	}
	c.merge("data_flow", p.DataFlow.validate())
	return c.v
}

// Validate checks capabilities: the embeddings fingerprint grammar (E1),
// known representations, and resolve declared when compact or reference is
// advertised.
func (cp *Capabilities) Validate() Violations {
	var c collector
	if cp.EmbeddingsFingerprint != "" {
		if _, err := ParseFingerprint(cp.EmbeddingsFingerprint); err != nil {
			c.add(rule.E1, "embeddings_fingerprint", "fingerprint %q: %v", cp.EmbeddingsFingerprint, err)
		}
	}
	for i, r := range cp.Representations {
		field := "representations[" + strconv.Itoa(i) + "]"
		switch {
		case r == "" || !r.isKnown():
			c.add(rule.Schema, field, "unknown representation %q", r)
		case r != RepresentationFull && !cp.Resolve:
			c.add(rule.Schema, field, "advertises %s without resolve", r)
		}
	}
	return c.v
}

// Validate checks a frame identity: non-blank provider and frame ids and the
// digest grammar (D1) when a digest is present.
func (a ID) Validate() Violations {
	var c collector
	if isBlank(a.Provider) {
		c.add(rule.Schema, "provider_id", "provider_id is blank")
	}
	if isBlank(a.Frame) {
		c.add(rule.Schema, "frame_id", "frame_id is blank")
	}
	c.digest(rule.D1, "content_digest", a.Digest)
	return c.v
}

// CheckQueryEmbedding applies rule E1 to a query sent to a provider with
// capabilities caps: a query may carry an embedding only when the provider
// declares an embeddings fingerprint, and its length must equal the
// fingerprint's dimension count.
func CheckQueryEmbedding(q *Query, caps *Capabilities) Violations {
	var c collector
	if q.Embedding == nil {
		return nil
	}
	if caps.EmbeddingsFingerprint == "" {
		c.add(rule.E1, "embedding", "query carries an embedding but the provider declares no embeddings_fingerprint")
		return c.v
	}
	fp, err := ParseFingerprint(caps.EmbeddingsFingerprint)
	if err == nil && len(q.Embedding) != fp.Dims {
		c.add(rule.E1, "embedding", "embedding has %d values but the provider's fingerprint %q declares %d",
			len(q.Embedding), caps.EmbeddingsFingerprint, fp.Dims)
	}
	return c.v
}
