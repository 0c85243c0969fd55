package conformance

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"github.com/ctxkit/ctxkit/frame"
	"github.com/ctxkit/ctxkit/host/transport"
	"github.com/ctxkit/ctxkit/wire"
)

//go:embed fixturedocs/*.md
var fixtureDocs embed.FS

// fixtureFingerprint is the embeddings fingerprint the honest fixture
// provider declares (384 dimensions).
const fixtureFingerprint = "bge-small-en-v1.5/384/l2"

// MisbehaveMode is one way the fixture provider can break the protocol on
// purpose, with the provider checks that must catch it.
type MisbehaveMode struct {
	// Name is the value given to --misbehave.
	Name string
	// Summary says in one line how the mode breaks the protocol.
	Summary string
	// Targets are the provider checks this mode must make fail.
	Targets []string
}

// MisbehaveModes lists every --misbehave mode: the 21 of docs/protocol.md
// §5.2 and seven of ctxkit's own: die-on-unknown-envelope, dirty-shutdown
// and anonymous, for checks those leave untripped, and four that only a
// probe of every declared kind and of a tight budget catches
// (doc-for-every-kind, ignore-max-frames, ignore-max-tokens, and
// sdk-example, which behaves as the upstream SDK example providers do).
func MisbehaveModes() []MisbehaveMode {
	return []MisbehaveMode{
		{"lying-costs", "declares token_cost 99999 on every frame", []string{checkBudgetHonesty}},
		{"bad-score", "scores its first frame 1.5 (F1)", []string{checkFrameValidity}},
		{"empty-citation", "serves a frame without citation_label (F3)", []string{checkFrameValidity}},
		{"bad-version", "acknowledges with contextgraph/2.0 (H1)", []string{checkHandshake}},
		{"crash-on-query", "exits when it receives a query", []string{checkFrameValidity, checkBudgetHonesty}},
		{"crash-on-garbage", "exits when it receives a malformed line (R1)", []string{checkMalformedInput}},
		{"mislabel-malformed", "answers a malformed line with code internal instead of bad_request", []string{checkMalformedInput}},
		{"under-report-cost", "declares token_cost 1 on every frame (B3)", []string{checkBudgetHonesty}},
		{"bad-timestamp", "sets valid_from to \"last tuesday\" (F4)", []string{checkFrameValidity}},
		{"malformed-digest", "sets content_digest to sha256:abc (D1)", []string{checkFrameValidity}},
		{"stale-digest", "flips the last hex digit of its file provenance digests, consistently over verify", []string{checkProvenanceConsistency}},
		{"flood-frames", "returns 64 one-byte frames whatever max_frames says (B4)", []string{checkBudgetHonesty}},
		{"drop-correlation-id", "declares correlation but never echoes the query id (H4)", []string{checkCorrelation}},
		{"lying-representation", "claims representation reference while carrying content (P3)", []string{checkFrameValidity}},
		{"ignore-as-of", "ignores the as_of pin", []string{checkAsOf}},
		{"accept-bad-embedding", "answers a query whose embedding has the wrong length (E1)", []string{checkEmbedding}},
		{"rubber-stamp-verify", "answers valid to every verify", []string{checkVerifyHonesty}},
		{"hollow-verify", "declares verify but answers unknown to everything", []string{checkVerifyHonesty}},
		{"scope-lie", "declares egress scope third-party-index with egress false (C5)", []string{checkConsentScope}},
		{"ignore-kinds", "ignores the query's kinds (Q1)", []string{checkKindsFilter}},
		{"ignore-anchors", "drops the anchored frame when anchors are given (G4)", []string{checkAnchorRelevance}},
		{"die-on-unknown-envelope", "exits when it receives an envelope type it does not know", []string{checkUnknownEnvelope}},
		{"dirty-shutdown", "exits with status 3 on shutdown (R2)", []string{checkShutdownClean}},
		{"anonymous", "acknowledges with a blank provider name (H2)", []string{checkHandshake}},
		{"doc-for-every-kind", "labels every frame doc and ignores kinds: right for the first declared kind, wrong for the second (Q1)", []string{checkKindsFilter}},
		{"ignore-max-frames", "ignores max_frames, which a generous budget hides (B4)", []string{checkBudgetHonesty}},
		{"ignore-max-tokens", "ignores max_tokens, which a generous budget hides (B1)", []string{checkBudgetHonesty}},
		{"sdk-example", "serves every frame as doc and ignores kinds, max_frames and max_tokens, as the upstream SDK examples do", []string{checkKindsFilter, checkBudgetHonesty}},
	}
}

// FixtureOptions configures a FixtureProvider. A nil *FixtureOptions means an
// honest provider serving the two fixture documents.
type FixtureOptions struct {
	// Misbehave names a MisbehaveMode; "" is honest.
	Misbehave string
	// Scenario and Provider, when set, make the provider serve that
	// composition scenario provider's frames (verbatim, whatever the query)
	// instead of the documents.
	Scenario, Provider string
	// DocsDir is where the fixture documents are written so their file
	// provenance can be re-read; "" means a fresh temporary directory that
	// Close removes.
	DocsDir string
}

// ErrFixtureCrash is returned by ServeStdio when a misbehave mode makes the
// provider die abruptly; the command exits non-zero without a reply.
var ErrFixtureCrash = errors.New("fixture provider: crashing on purpose")

// FixtureProvider is a real CGP provider used to exercise hosts and the
// provider suite: honest, misbehaving in one named way, or serving one
// provider of a composition scenario. It is safe for concurrent use.
type FixtureProvider struct {
	mode     string
	scenario *ScenarioProvider
	dir      string
	tempDir  bool
	docs     []frame.Frame

	mu sync.Mutex // serializes HTTP requests
}

// NewFixtureProvider prepares a fixture provider. It writes the fixture
// documents under DocsDir (or a temporary directory).
func NewFixtureProvider(opts *FixtureOptions) (*FixtureProvider, error) {
	var o FixtureOptions
	if opts != nil {
		o = *opts
	}
	p := &FixtureProvider{mode: o.Misbehave}
	if p.mode != "" {
		known := false
		for _, m := range MisbehaveModes() {
			known = known || m.Name == p.mode
		}
		if !known {
			return nil, fmt.Errorf("fixture provider: unknown misbehave mode %q", p.mode)
		}
	}
	if o.Scenario != "" || o.Provider != "" {
		s, ok := lookupScenario(o.Scenario)
		if !ok {
			return nil, fmt.Errorf("fixture provider: unknown scenario %q (known: %s)", o.Scenario, strings.Join(scenarioNames(), ", "))
		}
		sp, ok := s.provider(o.Provider)
		if !ok {
			return nil, fmt.Errorf("fixture provider: scenario %s has no provider %q", o.Scenario, o.Provider)
		}
		p.scenario = &sp
		return p, nil
	}
	p.dir = o.DocsDir
	if p.dir == "" {
		d, err := os.MkdirTemp("", "ctxkit-fixture-")
		if err != nil {
			return nil, fmt.Errorf("fixture provider: %w", err)
		}
		p.dir, p.tempDir = d, true
	}
	if err := p.writeDocs(); err != nil {
		p.Close()
		return nil, err
	}
	return p, nil
}

// Close removes a temporary documents directory.
func (p *FixtureProvider) Close() error {
	if p.tempDir {
		return os.RemoveAll(p.dir)
	}
	return nil
}

type fixtureDoc struct {
	file, id, title string
	kind            frame.Kind
	score           float32
	validFrom, rng  string
}

func (p *FixtureProvider) writeDocs() error {
	abs, err := filepath.Abs(p.dir)
	if err != nil {
		return fmt.Errorf("fixture provider: %w", err)
	}
	docs := []fixtureDoc{
		{"getting-started.md", "frm_getting_started", "Getting started with the fixture provider", "doc", 0.82, "2026-01-01T00:00:00Z", "L1-40"},
		{"configuration.md", "frm_configuration", "Configuration", "snippet", 0.61, "2026-09-01T00:00:00Z", "L1-25"},
	}
	for _, d := range docs {
		b, err := fixtureDocs.ReadFile("fixturedocs/" + d.file)
		if err != nil {
			return fmt.Errorf("fixture provider: %w", err)
		}
		path := filepath.Join(abs, d.file)
		if err := os.WriteFile(path, b, 0o644); err != nil {
			return fmt.Errorf("fixture provider: %w", err)
		}
		uri := (&url.URL{Scheme: "file", Path: filepath.ToSlash(path)}).String()
		content := string(b) // the ranges reach past the end of each file and clamp to it
		p.docs = append(p.docs, frame.Frame{
			ID:            d.id,
			Kind:          d.kind,
			Title:         d.title,
			Content:       content,
			ContentDigest: digestOf(content),
			URI:           uri,
			Score:         d.score,
			TokenCost:     uint32(frame.BudgetTokens(content)),
			ValidFrom:     d.validFrom,
			Provenance:    []frame.Provenance{{Type: frame.ProvenanceFile, URI: uri, Range: d.rng, Digest: digestOf(content)}},
			CitationLabel: d.file,
			Relations:     []frame.Relation{{Rel: "doc.documents", TargetURI: "symbol:///docs/" + d.file + "#overview", DisplayName: "overview"}},
		})
	}
	return nil
}

// fixtureAction says what the serving loop does after a reply.
type fixtureAction int

const (
	actContinue fixtureAction = iota
	actExit                   // clean shutdown
	actCrash                  // die without replying
)

// respond handles one received line and returns the reply (nil for none).
func (p *FixtureProvider) respond(line []byte) ([]byte, fixtureAction) {
	env, err := decodeEnvelope(line)
	if err != nil {
		switch p.mode {
		case "crash-on-garbage":
			return nil, actCrash
		case "mislabel-malformed":
			return p.encode(&wire.Error{Code: wire.CodeInternal, Message: "something went wrong"}), actContinue
		}
		return p.encode(&wire.Error{Code: wire.CodeBadRequest, Message: "malformed envelope: " + clip(err.Error(), 200)}), actContinue
	}
	switch e := env.(type) {
	case *wire.Handshake:
		return p.encode(p.ack()), actContinue
	case *wire.Query:
		if p.mode == "crash-on-query" {
			return nil, actCrash
		}
		return p.encode(p.query(e)), actContinue
	case *wire.Verify:
		return p.encode(p.verify(e)), actContinue
	case *wire.Shutdown:
		if p.mode == "dirty-shutdown" {
			return nil, actCrash
		}
		return nil, actExit
	case *wire.Unknown:
		if p.mode == "die-on-unknown-envelope" {
			return nil, actCrash
		}
		return p.encode(&wire.Error{Code: wire.CodeBadRequest, Message: fmt.Sprintf("unknown envelope type %q", e.Tag)}), actContinue
	default:
		return p.encode(&wire.Error{Code: wire.CodeBadRequest, Message: fmt.Sprintf("a provider does not accept %s envelopes", env.Type())}), actContinue
	}
}

func (p *FixtureProvider) encode(env wire.Envelope) []byte {
	b, err := encodeEnvelope(env)
	if err != nil {
		b, _ = encodeEnvelope(&wire.Error{Code: wire.CodeInternal, Message: err.Error()})
	}
	return b
}

func (p *FixtureProvider) ack() *wire.HandshakeAck {
	ack := &wire.HandshakeAck{ProtocolVersion: wire.ProtocolVersion}
	if p.scenario != nil {
		ack.Provider = frame.ProviderInfo{Name: "ctxkit-fixture-" + p.scenario.ID, Version: "1.0.0",
			DataFlow: frame.DataFlow{Reads: true, EgressScopes: []frame.EgressScope{frame.ScopeLocalOnly}}}
		ack.Capabilities = frame.Capabilities{Query: frame.QueryCapabilities{Kinds: []frame.Kind{"doc"}}}
		return ack
	}
	ack.Provider = frame.ProviderInfo{Name: "ctxkit-fixture", Version: "1.0.0",
		DataFlow: frame.DataFlow{Reads: true, EgressScopes: []frame.EgressScope{frame.ScopeLocalOnly}}}
	ack.Capabilities = frame.Capabilities{
		Query:                 frame.QueryCapabilities{Kinds: []frame.Kind{"doc", "snippet"}},
		Correlation:           true,
		Graph:                 true,
		EmbeddingsFingerprint: fixtureFingerprint,
		Verify:                true,
	}
	switch p.mode {
	case "bad-version":
		ack.ProtocolVersion = "contextgraph/2.0"
	case "scope-lie":
		ack.Provider.DataFlow = frame.DataFlow{Reads: true, Egress: false, EgressScopes: []frame.EgressScope{frame.ScopeThirdPartyIndex}}
	case "anonymous":
		ack.Provider.Name = "  "
	}
	return ack
}

func (p *FixtureProvider) query(e *wire.Query) wire.Envelope {
	q := e.Query
	id := e.ID
	if p.mode == "drop-correlation-id" {
		id = ""
	}
	if p.scenario != nil {
		out := make([]frame.Frame, len(p.scenario.Frames))
		for i, f := range p.scenario.Frames {
			out[i] = *f
		}
		return &wire.Frames{ID: id, Result: wire.Result{Frames: out}}
	}
	if q.MaxTokens == 0 {
		return &wire.Error{ID: id, Code: wire.CodeBadRequest, Message: "query.max_tokens must be positive"}
	}
	if len(q.Embedding) > 0 && len(q.Embedding) != 384 && p.mode != "accept-bad-embedding" {
		return &wire.Error{ID: id, Code: wire.CodeBadRequest,
			Message: fmt.Sprintf("query.embedding has %d dimensions; %s has 384", len(q.Embedding), fixtureFingerprint)}
	}
	if p.mode == "flood-frames" {
		out := make([]frame.Frame, 64)
		for i := range out {
			c := string(rune('a' + i%26))
			out[i] = frame.Frame{ID: fmt.Sprintf("flood-%02d", i), Kind: "doc", Title: "flood", Content: c,
				Score: 0.5, TokenCost: 1, CitationLabel: fmt.Sprintf("flood-%02d", i)}
		}
		return &wire.Frames{ID: id, Result: wire.Result{Frames: out}}
	}
	var cands []frame.Frame
	for _, f := range p.docs {
		if p.ignores("kind labels") {
			f.Kind = frame.KindDoc
		}
		if len(q.Kinds) > 0 && !q.WantsKind(f.Kind) && !p.ignores("kinds") {
			continue
		}
		if q.AsOf != "" && p.mode != "ignore-as-of" {
			if c, err := frame.CompareTimestamps(f.ValidFrom, q.AsOf); err == nil && c > 0 {
				continue
			}
		}
		anchored := isAnchored(&f, q.Anchors)
		if anchored && p.mode == "ignore-anchors" {
			continue
		}
		cands = append(cands, f)
	}
	sort.SliceStable(cands, func(i, j int) bool {
		ai, aj := isAnchored(&cands[i], q.Anchors), isAnchored(&cands[j], q.Anchors)
		if ai != aj {
			return ai
		}
		return cands[i].Score > cands[j].Score
	})
	var out []frame.Frame
	used, truncated := 0, false
	for _, f := range cands {
		if (len(out) >= int(q.MaxFrames) && !p.ignores("max_frames")) ||
			(used+int(f.TokenCost) > int(q.MaxTokens) && !p.ignores("max_tokens")) {
			truncated = true
			continue
		}
		used += int(f.TokenCost)
		out = append(out, f)
	}
	for i := range out {
		f := &out[i]
		f.Provenance = append([]frame.Provenance(nil), f.Provenance...)
		switch p.mode {
		case "lying-costs":
			f.TokenCost = 99999
		case "under-report-cost":
			f.TokenCost = 1
		case "bad-timestamp":
			f.ValidFrom = "last tuesday"
		case "malformed-digest":
			f.ContentDigest = "sha256:abc"
		case "stale-digest":
			for j := range f.Provenance {
				f.Provenance[j].Digest = flipLastHex(f.Provenance[j].Digest)
			}
		case "lying-representation":
			f.Representation = frame.RepresentationReference
		}
		if i == 0 {
			switch p.mode {
			case "bad-score":
				f.Score = 1.5
			case "empty-citation":
				f.CitationLabel = ""
			}
		}
	}
	if out == nil {
		out = []frame.Frame{}
	}
	return &wire.Frames{ID: id, Result: wire.Result{Frames: out, Truncated: truncated}}
}

// ignores reports whether the misbehave mode disregards a part of the
// query: "kinds", "max_frames" or "max_tokens", or "kind labels" for a mode
// that serves every frame as doc.
func (p *FixtureProvider) ignores(part string) bool {
	switch p.mode {
	case "sdk-example":
		return true
	case "ignore-kinds":
		return part == "kinds"
	case "doc-for-every-kind":
		return part == "kinds" || part == "kind labels"
	case "ignore-max-frames":
		return part == "max_frames"
	case "ignore-max-tokens":
		return part == "max_tokens"
	}
	return false
}

func isAnchored(f *frame.Frame, anchors []string) bool {
	for _, a := range anchors {
		if f.URI == a {
			return true
		}
		for _, r := range f.Relations {
			if r.TargetURI == a {
				return true
			}
		}
	}
	return false
}

func flipLastHex(d string) string {
	if d == "" {
		return d
	}
	last := d[len(d)-1]
	repl := byte('0')
	if last == '0' {
		repl = '1'
	}
	return d[:len(d)-1] + string(repl)
}

func (p *FixtureProvider) verify(e *wire.Verify) wire.Envelope {
	resp := &wire.Verified{Response: wire.VerifyResponse{Verdicts: []wire.Verdict{}}}
	for _, id := range e.Request.Frames {
		v := wire.Verdict{Frame: id}
		var cur *frame.Frame
		for i := range p.docs {
			if p.docs[i].ID == id.Frame {
				cur = &p.docs[i]
			}
		}
		if p.scenario != nil {
			for _, f := range p.scenario.Frames {
				if f.ID == id.Frame {
					cur = f
				}
			}
		}
		switch {
		case p.mode == "rubber-stamp-verify":
			v.Status = wire.StatusValid
		case p.mode == "hollow-verify":
			v.Status = wire.StatusUnknown
		case cur == nil:
			v.Status = wire.StatusGone
		case id.Digest == "":
			v.Status = wire.StatusUnknown
		case id.Digest == cur.ContentDigest:
			v.Status = wire.StatusValid
		default:
			v.Status, v.ReplacementDigest = wire.StatusStale, cur.ContentDigest
		}
		resp.Response.Verdicts = append(resp.Response.Verdicts, v)
	}
	return resp
}

// maxLine bounds one received line or body (16 MiB, the CGP limit).
const maxLine = wire.DefaultMaxLineBytes

// ServeStdio serves NDJSON envelopes from r, writing replies to w, until a
// shutdown (nil), end of input (nil), a cancelled ctx, or a crash mode
// (ErrFixtureCrash). An over-long line is answered like any malformed line.
func (p *FixtureProvider) ServeStdio(ctx context.Context, r io.Reader, w io.Writer) error {
	c := transport.Stream(r, w, 0, nil)
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		line, err := c.Read()
		if errors.Is(err, io.EOF) {
			return nil
		}
		var tooLong *wire.TooLongError
		switch {
		case errors.As(err, &tooLong):
			line = []byte("{") // malformed: answered bad_request (or per mode)
		case err != nil:
			return fmt.Errorf("fixture provider: %w", err)
		}
		reply, act := p.respond(line)
		if act == actCrash {
			return ErrFixtureCrash
		}
		if reply != nil {
			if werr := c.Write(ctx, reply); werr != nil {
				return fmt.Errorf("fixture provider: %w", werr)
			}
		}
		if act == actExit {
			return nil
		}
	}
}

// ServeHTTP serves one envelope per POST body. A shutdown is answered 204
// (500 in dirty-shutdown mode); a crash mode aborts the connection.
func (p *FixtureProvider) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		http.Error(w, "POST one CGP envelope", http.StatusMethodNotAllowed)
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxLine+1))
	if err != nil || len(body) > maxLine {
		http.Error(w, "unreadable or over-long body", http.StatusRequestEntityTooLarge)
		return
	}
	p.mu.Lock()
	reply, act := p.respond(body)
	p.mu.Unlock()
	switch {
	case act == actCrash && p.mode == "dirty-shutdown":
		http.Error(w, "shutdown failed", http.StatusInternalServerError)
	case act == actCrash:
		panic(http.ErrAbortHandler)
	case reply == nil:
		w.WriteHeader(http.StatusNoContent)
	default:
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(reply)
	}
}
