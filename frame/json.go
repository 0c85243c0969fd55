package frame

import (
	"encoding/json"

	"github.com/ctxkit/ctxkit/internal/cgpjson"
)

// Each wire type has AppendJSON, which appends its exact CGP encoding, and
// MarshalJSON built on it. Types with required members also have
// UnmarshalJSON, which reports a missing (or null) required member as a
// *MissingMemberError; unknown members are ignored.

// AppendJSON appends the CGP encoding of p to dst.
func (p *Provenance) AppendJSON(dst []byte) ([]byte, error) {
	w := cgpjson.W{B: dst}
	p.write(&w)
	return w.B, w.Err
}

func (p *Provenance) write(w *cgpjson.W) {
	w.Open()
	w.Str("type", p.Type)
	p.optStr(w, "uri", p.URI, MemberURI)
	p.optStr(w, "range", p.Range, MemberRange)
	p.optStr(w, "digest", p.Digest, MemberDigest)
	p.optStr(w, "method", p.Method, MemberMethod)
	p.optStr(w, "by", p.By, MemberBy)
	w.Close()
}

// optStr writes optional member k when v is not empty or m is marked
// present-and-empty.
func (p *Provenance) optStr(w *cgpjson.W, k, v string, m ProvenanceMember) {
	if v != "" || p.empty&m != 0 {
		w.Str(k, v)
	}
}

// MarshalJSON returns the CGP encoding of p.
func (p Provenance) MarshalJSON() ([]byte, error) { return p.AppendJSON(nil) }

// UnmarshalJSON decodes a provenance link; type is required. An optional
// member sent as "" is marked present-and-empty (see Has); one sent as null
// or not sent is absent.
func (p *Provenance) UnmarshalJSON(b []byte) error {
	var aux struct {
		Type   *string `json:"type"`
		URI    *string `json:"uri"`
		Range  *string `json:"range"`
		Digest *string `json:"digest"`
		Method *string `json:"method"`
		By     *string `json:"by"`
	}
	if err := json.Unmarshal(b, &aux); err != nil {
		return err
	}
	if aux.Type == nil {
		return &MissingMemberError{Object: "Provenance", Member: "type"}
	}
	*p = Provenance{Type: *aux.Type}
	for _, o := range [...]struct {
		m ProvenanceMember
		v *string
	}{{MemberURI, aux.URI}, {MemberRange, aux.Range}, {MemberDigest, aux.Digest}, {MemberMethod, aux.Method}, {MemberBy, aux.By}} {
		if o.v != nil {
			p.Set(o.m, *o.v)
		}
	}
	return nil
}

func (r *Relation) write(w *cgpjson.W) {
	w.Open()
	w.Str("rel", r.Rel)
	w.Str("target_uri", r.TargetURI)
	if r.has(memberDisplayName) {
		w.Str("display_name", r.DisplayName)
	}
	w.Close()
}

// MarshalJSON returns the CGP encoding of r.
func (r Relation) MarshalJSON() ([]byte, error) { return cgpjson.Marshal(r.write) }

// UnmarshalJSON decodes a relation; rel and target_uri are required. A
// display_name sent as "" is marked present-and-empty (see Has); one sent as
// null or not sent is absent.
func (r *Relation) UnmarshalJSON(b []byte) error {
	var aux struct {
		Rel         *string `json:"rel"`
		TargetURI   *string `json:"target_uri"`
		DisplayName *string `json:"display_name"`
	}
	if err := json.Unmarshal(b, &aux); err != nil {
		return err
	}
	if aux.Rel == nil {
		return &MissingMemberError{Object: "Relation", Member: "rel"}
	}
	if aux.TargetURI == nil {
		return &MissingMemberError{Object: "Relation", Member: "target_uri"}
	}
	*r = Relation{Rel: *aux.Rel, TargetURI: *aux.TargetURI}
	if aux.DisplayName != nil {
		r.set(memberDisplayName, *aux.DisplayName)
	}
	return nil
}

func (c *ContentRef) write(w *cgpjson.W) {
	w.Open()
	w.Str("provider_id", c.ProviderID)
	w.Str("uri", c.URI)
	if c.has(memberExpiresAt) {
		w.Str("expires_at", c.ExpiresAt)
	}
	w.Close()
}

// MarshalJSON returns the CGP encoding of c.
func (c ContentRef) MarshalJSON() ([]byte, error) { return cgpjson.Marshal(c.write) }

// UnmarshalJSON decodes a content reference; provider_id and uri are
// required. An expires_at sent as "" is marked present-and-empty (see Has);
// one sent as null or not sent is absent.
func (c *ContentRef) UnmarshalJSON(b []byte) error {
	type plain ContentRef
	var aux struct {
		plain
		ProviderID *string `json:"provider_id"`
		URI        *string `json:"uri"`
		ExpiresAt  *string `json:"expires_at"`
	}
	if err := json.Unmarshal(b, &aux); err != nil {
		return err
	}
	if aux.ProviderID == nil {
		return &MissingMemberError{Object: "ContentRef", Member: "provider_id"}
	}
	if aux.URI == nil {
		return &MissingMemberError{Object: "ContentRef", Member: "uri"}
	}
	*c = ContentRef(aux.plain)
	c.ProviderID, c.URI = *aux.ProviderID, *aux.URI
	if aux.ExpiresAt != nil {
		c.set(memberExpiresAt, *aux.ExpiresAt)
	}
	return nil
}

func (t *Transform) write(w *cgpjson.W) {
	w.Open()
	w.Str("method", t.Method)
	w.Str("implementation", t.Implementation)
	w.Str("version", t.Version)
	w.Close()
}

// MarshalJSON returns the CGP encoding of t.
func (t Transform) MarshalJSON() ([]byte, error) { return cgpjson.Marshal(t.write) }

// UnmarshalJSON decodes a transform; all three members are required.
func (t *Transform) UnmarshalJSON(b []byte) error {
	var aux struct {
		Method         *string `json:"method"`
		Implementation *string `json:"implementation"`
		Version        *string `json:"version"`
	}
	if err := json.Unmarshal(b, &aux); err != nil {
		return err
	}
	switch {
	case aux.Method == nil:
		return &MissingMemberError{Object: "Transform", Member: "method"}
	case aux.Implementation == nil:
		return &MissingMemberError{Object: "Transform", Member: "implementation"}
	case aux.Version == nil:
		return &MissingMemberError{Object: "Transform", Member: "version"}
	}
	*t = Transform{Method: *aux.Method, Implementation: *aux.Implementation, Version: *aux.Version}
	return nil
}

func (e *Embedding) write(w *cgpjson.W) {
	w.Open()
	w.Str("fingerprint", e.Fingerprint)
	if e.Vector != nil {
		w.F32s("vector", e.Vector)
	}
	w.Close()
}

// MarshalJSON returns the CGP encoding of e.
func (e Embedding) MarshalJSON() ([]byte, error) { return cgpjson.Marshal(e.write) }

// UnmarshalJSON decodes an embedding; fingerprint is required.
func (e *Embedding) UnmarshalJSON(b []byte) error {
	type plain Embedding
	var aux struct {
		plain
		Fingerprint *string `json:"fingerprint"`
	}
	if err := json.Unmarshal(b, &aux); err != nil {
		return err
	}
	if aux.Fingerprint == nil {
		return &MissingMemberError{Object: "Embedding", Member: "fingerprint"}
	}
	*e = Embedding(aux.plain)
	e.Fingerprint = *aux.Fingerprint
	return nil
}

// AppendJSON appends the CGP encoding of f to dst.
func (f *Frame) AppendJSON(dst []byte) ([]byte, error) {
	w := cgpjson.W{B: dst}
	f.write(&w)
	return w.B, w.Err
}

func (f *Frame) write(w *cgpjson.W) {
	w.Open()
	w.Str("id", f.ID)
	w.Str("kind", string(f.Kind))
	w.Str("title", f.Title)
	f.optMember(w, memberContent)
	f.optMember(w, MemberContentDigest)
	w.OptStr("uri", f.URI)
	// "full" is the default and omitted; a representation sent as "" is
	// kept, as Validate refuses it.
	if f.Representation != RepresentationFull && f.Has(memberRepresentation) {
		w.Str("representation", string(f.Representation))
	}
	f.optMember(w, memberContentFidelity)
	f.optMember(w, memberCanonicalContentHash)
	if f.ContentRef != nil {
		w.Key("content_ref")
		f.ContentRef.write(w)
	}
	if f.Transform != nil {
		w.Key("transform")
		f.Transform.write(w)
	}
	f.optMember(w, memberMinimumContentFidelity)
	f.optMember(w, memberInlineContentRequirement)
	w.F32("score", f.Score)
	w.Uint("token_cost", uint64(f.TokenCost))
	w.OptUint("canonical_token_cost", f.CanonicalTokenCost)
	w.OptStr("tokenizer_ref", f.TokenizerRef)
	for _, m := range frameTimestamps {
		f.optMember(w, m)
	}
	if len(f.Provenance) > 0 {
		w.Key("provenance")
		w.OpenArray()
		for i := range f.Provenance {
			w.Elem()
			f.Provenance[i].write(w)
		}
		w.CloseArray()
	}
	w.OptStr("citation_label", f.CitationLabel)
	if f.Embedding != nil {
		w.Key("embedding")
		f.Embedding.write(w)
	}
	if len(f.Relations) > 0 {
		w.Key("relations")
		w.OpenArray()
		for i := range f.Relations {
			w.Elem()
			f.Relations[i].write(w)
		}
		w.CloseArray()
	}
	w.Close()
}

// optMember writes member m when it is present, "" included.
func (f *Frame) optMember(w *cgpjson.W, m FrameMember) {
	if v := f.field(m); hasMember(v, f.empty, m) {
		w.Str(m.String(), *v)
	}
}

// MarshalJSON returns the CGP encoding of f. A NaN or infinite score or
// embedding value is an error.
func (f Frame) MarshalJSON() ([]byte, error) { return f.AppendJSON(nil) }

// UnmarshalJSON decodes a frame; id, kind, title, score and token_cost are
// required. A token_cost outside the u32 range or a score outside the f32
// range is an error; a score outside [0,1] is left to Validate (rule F1). A
// member a FrameMember names (the content, a timestamp, digest or
// enumeration) sent as "" is marked present-and-empty (see Has); one sent
// as null or not sent is absent.
func (f *Frame) UnmarshalJSON(b []byte) error {
	type plain Frame
	var aux struct {
		plain
		ID        *string  `json:"id"`
		Kind      *Kind    `json:"kind"`
		Title     *string  `json:"title"`
		Score     *float32 `json:"score"`
		TokenCost *uint32  `json:"token_cost"`
		// The members a FrameMember names shadow plain's to tell "" from
		// absent.
		Content                  *string `json:"content"`
		ContentDigest            *string `json:"content_digest"`
		Representation           *string `json:"representation"`
		ContentFidelity          *string `json:"content_fidelity"`
		CanonicalContentHash     *string `json:"canonical_content_hash"`
		MinimumContentFidelity   *string `json:"minimum_content_fidelity"`
		InlineContentRequirement *string `json:"inline_content_requirement"`
		ValidFrom                *string `json:"valid_from"`
		ValidTo                  *string `json:"valid_to"`
		RecordedAt               *string `json:"recorded_at"`
	}
	if err := json.Unmarshal(b, &aux); err != nil {
		return err
	}
	missing := ""
	switch {
	case aux.ID == nil:
		missing = "id"
	case aux.Kind == nil:
		missing = "kind"
	case aux.Title == nil:
		missing = "title"
	case aux.Score == nil:
		missing = "score"
	case aux.TokenCost == nil:
		missing = "token_cost"
	}
	if missing != "" {
		return &MissingMemberError{Object: "ContextFrame", Member: missing}
	}
	*f = Frame(aux.plain)
	f.ID, f.Kind, f.Title, f.Score, f.TokenCost = *aux.ID, *aux.Kind, *aux.Title, *aux.Score, *aux.TokenCost
	for _, o := range [...]struct {
		m FrameMember
		v *string
	}{{memberContent, aux.Content}, {MemberContentDigest, aux.ContentDigest}, {memberRepresentation, aux.Representation},
		{memberContentFidelity, aux.ContentFidelity}, {memberCanonicalContentHash, aux.CanonicalContentHash},
		{memberMinimumContentFidelity, aux.MinimumContentFidelity},
		{memberInlineContentRequirement, aux.InlineContentRequirement},
		{MemberValidFrom, aux.ValidFrom}, {memberValidTo, aux.ValidTo}, {memberRecordedAt, aux.RecordedAt}} {
		if o.v != nil {
			f.Set(o.m, *o.v)
		}
	}
	return nil
}

// AppendJSON appends the CGP encoding of id (a FrameId) to dst.
func (a ID) AppendJSON(dst []byte) []byte {
	w := cgpjson.W{B: dst}
	a.write(&w)
	return w.B
}

func (a ID) write(w *cgpjson.W) {
	w.Open()
	w.Str("provider_id", a.Provider)
	w.Str("frame_id", a.Frame)
	w.OptStr("content_digest", a.Digest)
	w.Close()
}

// MarshalJSON returns the CGP encoding of a.
func (a ID) MarshalJSON() ([]byte, error) { return a.AppendJSON(nil), nil }

// UnmarshalJSON decodes a FrameId; provider_id and frame_id are required.
func (a *ID) UnmarshalJSON(b []byte) error {
	var aux struct {
		Provider *string `json:"provider_id"`
		Frame    *string `json:"frame_id"`
		Digest   string  `json:"content_digest"`
	}
	if err := json.Unmarshal(b, &aux); err != nil {
		return err
	}
	if aux.Provider == nil {
		return &MissingMemberError{Object: "FrameId", Member: "provider_id"}
	}
	if aux.Frame == nil {
		return &MissingMemberError{Object: "FrameId", Member: "frame_id"}
	}
	*a = ID{Provider: *aux.Provider, Frame: *aux.Frame, Digest: aux.Digest}
	return nil
}

func (q *Query) write(w *cgpjson.W) {
	w.Open()
	w.Str("goal", q.Goal)
	w.OptStr("query_text", q.QueryText)
	if q.Embedding != nil {
		w.F32s("embedding", q.Embedding)
	}
	cgpjson.OptStrs(w, "kinds", q.Kinds)
	cgpjson.OptStrs(w, "anchors", q.Anchors)
	w.Uint("max_frames", uint64(q.MaxFrames))
	w.Uint("max_tokens", uint64(q.MaxTokens))
	if q.Has(MemberAsOf) {
		w.Str("as_of", q.AsOf)
	}
	cgpjson.OptStrs(w, "representation_preferences", q.RepresentationPreferences)
	w.Close()
}

// MarshalJSON returns the CGP encoding of q.
func (q Query) MarshalJSON() ([]byte, error) { return cgpjson.Marshal(q.write) }

// UnmarshalJSON decodes a query; goal, max_frames and max_tokens are
// required. An as_of sent as "" is marked present-and-empty (see Has), so
// Validate reports it under rule F4 rather than reading it as now; one sent
// as null or not sent is absent.
func (q *Query) UnmarshalJSON(b []byte) error {
	type plain Query
	var aux struct {
		plain
		Goal      *string `json:"goal"`
		MaxFrames *uint32 `json:"max_frames"`
		MaxTokens *uint32 `json:"max_tokens"`
		AsOf      *string `json:"as_of"`
	}
	if err := json.Unmarshal(b, &aux); err != nil {
		return err
	}
	switch {
	case aux.Goal == nil:
		return &MissingMemberError{Object: "ContextQuery", Member: "goal"}
	case aux.MaxFrames == nil:
		return &MissingMemberError{Object: "ContextQuery", Member: "max_frames"}
	case aux.MaxTokens == nil:
		return &MissingMemberError{Object: "ContextQuery", Member: "max_tokens"}
	}
	*q = Query(aux.plain)
	q.Goal, q.MaxFrames, q.MaxTokens = *aux.Goal, *aux.MaxFrames, *aux.MaxTokens
	if aux.AsOf != nil {
		q.Set(MemberAsOf, *aux.AsOf)
	}
	return nil
}

func (d *DataFlow) write(w *cgpjson.W) {
	w.Open()
	w.Bool("reads", d.Reads)
	w.Bool("writes", d.Writes)
	w.Bool("egress", d.Egress)
	cgpjson.OptStrs(w, "egress_scopes", d.EgressScopes)
	w.Close()
}

// MarshalJSON returns the CGP encoding of d.
func (d DataFlow) MarshalJSON() ([]byte, error) { return cgpjson.Marshal(d.write) }

func (p *ProviderInfo) write(w *cgpjson.W) {
	w.Open()
	w.Str("name", p.Name)
	w.Str("version", p.Version)
	w.Key("data_flow")
	p.DataFlow.write(w)
	w.Close()
}

// MarshalJSON returns the CGP encoding of p.
func (p ProviderInfo) MarshalJSON() ([]byte, error) { return cgpjson.Marshal(p.write) }

// UnmarshalJSON decodes provider info; name, version and data_flow are required.
func (p *ProviderInfo) UnmarshalJSON(b []byte) error {
	var aux struct {
		Name     *string   `json:"name"`
		Version  *string   `json:"version"`
		DataFlow *DataFlow `json:"data_flow"`
	}
	if err := json.Unmarshal(b, &aux); err != nil {
		return err
	}
	switch {
	case aux.Name == nil:
		return &MissingMemberError{Object: "ProviderInfo", Member: "name"}
	case aux.Version == nil:
		return &MissingMemberError{Object: "ProviderInfo", Member: "version"}
	case aux.DataFlow == nil:
		return &MissingMemberError{Object: "ProviderInfo", Member: "data_flow"}
	}
	*p = ProviderInfo{Name: *aux.Name, Version: *aux.Version, DataFlow: *aux.DataFlow}
	return nil
}

func (c *Capabilities) write(w *cgpjson.W) {
	w.Open()
	w.Key("query")
	w.Open()
	cgpjson.Strs(w, "kinds", c.Query.Kinds)
	w.Close()
	w.Bool("correlation", c.Correlation)
	w.Bool("graph", c.Graph)
	w.OptStr("embeddings_fingerprint", c.EmbeddingsFingerprint)
	w.Bool("verify", c.Verify)
	cgpjson.OptStrs(w, "representations", c.Representations)
	w.Bool("resolve", c.Resolve)
	w.Close()
}

// MarshalJSON returns the CGP encoding of c. The query kinds list is always
// written, as [] when empty.
func (c Capabilities) MarshalJSON() ([]byte, error) { return cgpjson.Marshal(c.write) }
