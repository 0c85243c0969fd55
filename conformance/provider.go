package conformance

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/ctxkit/ctxkit/frame"
	"github.com/ctxkit/ctxkit/internal/cgpjson"
	"github.com/ctxkit/ctxkit/rule"
	"github.com/ctxkit/ctxkit/wire"
)

// Names of the provider checks, in report order: the 13 of docs/protocol.md §5.1
// (same names and semantics) and ctxkit's unknown-envelope check.
const (
	checkHandshake             = "handshake"
	checkConsentScope          = "consent-scope"
	checkFrameValidity         = "frame-validity"
	checkVerifyHonesty         = "verify-honesty"
	checkBudgetHonesty         = "budget-honesty"
	checkAsOf                  = "as-of-temporal"
	checkKindsFilter           = "kinds-filter"
	checkAnchorRelevance       = "anchor-relevance"
	checkProvenanceConsistency = "provenance-fixture-consistency"
	checkShutdownClean         = "shutdown-clean"
	checkMalformedInput        = "malformed-input-tolerance"
	checkEmbedding             = "embedding-fingerprint"
	checkCorrelation           = "correlation"
	// checkUnknownEnvelope: an envelope of a type the provider does not
	// know is answered with bad_request or ignored, and the provider keeps
	// serving (U1, R1).
	checkUnknownEnvelope = "unknown-envelope"
)

// providerChecks lists the provider checks in report order.
func providerChecks() []string {
	return []string{checkHandshake, checkConsentScope, checkFrameValidity, checkVerifyHonesty,
		checkBudgetHonesty, checkAsOf, checkKindsFilter, checkAnchorRelevance, checkProvenanceConsistency,
		checkShutdownClean, checkMalformedInput, checkEmbedding, checkCorrelation, checkUnknownEnvelope}
}

// Probe values the provider suite sends.
const (
	// probeProviderID is the id the harness registers the provider under;
	// it is the provider_id of every FrameID the harness sends.
	probeProviderID = "provider-under-test"
	// probeCorrelationID is the id of the correlation probe.
	probeCorrelationID = "cgp-conformance-h4-7f3a"
	// probeAsOf is the as_of pin of the temporal probe.
	probeAsOf = "2026-07-01T00:00:00Z"
	// probeUnknownType is the type of the unknown-envelope probe.
	probeUnknownType = "cgp-conformance-unknown"
	probeGarbage     = "this is not valid json {{{"
	mutatedSuffix    = "-contextgraph-conformance-mutated"
)

// ProviderTarget is the provider under test: a command spoken to over
// stdio, or an HTTP endpoint. Exactly one of Command and URL is set.
type ProviderTarget struct {
	// Command is the program and its arguments.
	Command []string
	// Dir is the command's working directory ("" = the harness's).
	Dir string
	// URL is the provider's HTTP endpoint (one envelope per POST).
	URL string
	// Client is the HTTP client; nil means a client without a total
	// timeout (each exchange is bounded by the suite's Timeout).
	Client *http.Client
}

// String returns "stdio: program args" or "http: url".
func (t ProviderTarget) String() string {
	if t.URL != "" {
		return "http: " + t.URL
	}
	return "stdio: " + strings.Join(t.Command, " ")
}

// ProviderOptions configures RunProvider. A nil *ProviderOptions means the
// defaults.
type ProviderOptions struct {
	// Query is the sample query; nil means the sample query of docs/protocol.md §5.1 (any kind, max_frames 8, max_tokens 4096).
	Query *frame.Query
	// Timeout bounds each wait for one reply; 0 means 10 s.
	Timeout time.Duration
	// Stderr receives a stdio provider's stderr; nil discards it.
	Stderr io.Writer
}

// errTarget reports a provider target the harness cannot use at all (no
// command and no URL, or both). RunProvider reports other failures as checks.
var errTarget = errors.New("conformance: provider target needs exactly one of a command and a URL")

// RunProvider drives the provider through every provider check and returns
// the report, checks in providerChecks order. A provider that cannot be
// started or fails its handshake fails the handshake check; the checks that
// need a session are then skipped and the wire probes still run. Over HTTP
// the three stdio wire probes are skipped.
func RunProvider(ctx context.Context, t ProviderTarget, opts *ProviderOptions) (Report, error) {
	if (len(t.Command) == 0) == (t.URL == "") {
		return Report{}, errTarget
	}
	o := ProviderOptions{Timeout: 10 * time.Second}
	if opts != nil {
		if opts.Query != nil {
			o.Query = opts.Query
		}
		if opts.Timeout > 0 {
			o.Timeout = opts.Timeout
		}
		o.Stderr = opts.Stderr
	}
	if o.Query == nil {
		q := probeQuery(4096)
		o.Query = &q
	}
	r := &provRun{ctx: ctx, t: t, o: o, rep: &Report{Target: t.String()}}
	r.run()
	return *r.rep, nil
}

type provRun struct {
	ctx context.Context
	t   ProviderTarget
	o   ProviderOptions
	rep *Report

	conn   conn
	ack    *wire.HandshakeAck
	sample *wire.Frames
	// sampleGot describes the sample reply for evidence.
	sampleGot string
}

func (r *provRun) run() {
	defer func() {
		if r.conn != nil {
			r.conn.close()
		}
	}()
	r.handshake()
	if r.ack == nil {
		r.skip("no session: the handshake failed", checkConsentScope, checkFrameValidity, checkVerifyHonesty, checkBudgetHonesty,
			checkAsOf, checkKindsFilter, checkAnchorRelevance, checkProvenanceConsistency, checkShutdownClean)
	} else {
		r.consentScope()
		r.sampleQuery()
		r.frameValidity()
		r.verifyHonesty()
		r.budgetHonesty()
		r.asOf()
		r.kindsFilter()
		r.anchorRelevance()
		r.provenance()
		r.shutdownClean()
	}
	if r.t.URL != "" {
		r.skip("stdio only: the probe needs a raw line connection", checkMalformedInput, checkEmbedding, checkCorrelation)
	} else {
		r.malformedInput()
		r.embedding()
		r.correlation()
	}
	r.unknownEnvelope()
}

// skip reports every named check skipped, for reason.
func (r *provRun) skip(reason string, names ...string) {
	for _, name := range names {
		r.rep.add(name, Skipped, "%s", reason)
	}
}

// sent/got/expected evidence.
func ev(sent, got, expected string) string {
	return fmt.Sprintf("sent: %s; got: %s; expected: %s", sent, got, expected)
}

// decodeReply decodes a probe's reply. When the read failed or the line is
// no envelope it records check as failed, with that as the evidence, and
// returns false.
func (r *provRun) decodeReply(check, sent, expected string, reply []byte, err error) (wire.Envelope, bool) {
	if err != nil {
		r.fail(check, sent, err.Error(), expected)
		return nil, false
	}
	env, err := decodeEnvelope(reply)
	if err != nil {
		r.fail(check, sent, clip(string(reply), 300), expected)
		return nil, false
	}
	return env, true
}

func (r *provRun) fail(name, sent, got, expected string) {
	r.rep.add(name, Fail, "%s", ev(sent, got, expected))
}

// dial starts a session and performs the handshake, returning the ack.
func (r *provRun) dial() (conn, *wire.HandshakeAck, string, error) {
	var c conn
	var err error
	if r.t.URL != "" {
		c = newHTTPConn(r.t, r.o.Timeout)
	} else {
		c, err = startStdio(r.ctx, r.t, r.o.Stderr, r.o.Timeout)
		if err != nil {
			return nil, nil, "", err
		}
	}
	line, _ := encodeEnvelope(&wire.Handshake{ProtocolVersion: wire.ProtocolVersion})
	reply, err := c.roundTrip(r.ctx, line)
	if err != nil {
		c.close()
		return nil, nil, "", fmt.Errorf("handshake: %w", err)
	}
	env, err := decodeEnvelope(reply)
	if err != nil {
		c.close()
		return nil, nil, clip(string(reply), 300), fmt.Errorf("handshake reply: %w", err)
	}
	ack, ok := env.(*wire.HandshakeAck)
	if !ok {
		c.close()
		return nil, nil, clip(string(reply), 300), fmt.Errorf("handshake answered with %s", env.Type())
	}
	return c, ack, clip(string(reply), 300), nil
}

func (r *provRun) handshake() {
	sent := fmt.Sprintf("handshake %s", wire.ProtocolVersion)
	c, ack, raw, err := r.dial()
	if err != nil {
		got := err.Error()
		if raw != "" {
			got += ": " + raw
		}
		r.fail(checkHandshake, sent, got, "a handshake_ack")
		return
	}
	if !wire.Compatible(wire.ProtocolVersion, ack.ProtocolVersion) {
		c.close()
		r.fail(checkHandshake, sent, "handshake_ack with protocol_version "+ack.ProtocolVersion,
			"a version in family "+wire.Family(wire.ProtocolVersion)+" (H1); a host refuses this provider")
		return
	}
	r.conn, r.ack = c, ack
	if strings.TrimSpace(ack.Provider.Name) == "" || strings.TrimSpace(ack.Provider.Version) == "" {
		r.fail(checkHandshake, sent, fmt.Sprintf("provider name %q version %q", ack.Provider.Name, ack.Provider.Version),
			"non-blank provider name and version (H2)")
		return
	}
	r.rep.add(checkHandshake, Pass, "%s %s acknowledged %s", ack.Provider.Name, ack.Provider.Version, ack.ProtocolVersion)
}

func (r *provRun) consentScope() {
	df := r.ack.Provider.DataFlow
	if !df.ScopesConsistent() {
		r.fail(checkConsentScope, "handshake", fmt.Sprintf("data_flow egress=%v egress_scopes=%v", df.Egress, df.EgressScopes),
			"valid scopes, and no off-machine scope unless egress is true (C5, U3)")
		return
	}
	r.rep.add(checkConsentScope, Pass, "egress=%v scopes=%v consistent", df.Egress, df.EgressScopes)
}

// query sends q on the main session and returns the frames reply, or a
// description of what came back instead.
func (r *provRun) query(q frame.Query, id string) (*wire.Frames, string) {
	env, got := r.queryEnvelope(q, id)
	f, _ := env.(*wire.Frames)
	return f, got
}

// exchange sends env on the main session and returns the decoded reply with
// a description of it for evidence, or nil and what went wrong.
func (r *provRun) exchange(env wire.Envelope) (wire.Envelope, string) {
	line, _ := encodeEnvelope(env)
	reply, err := r.conn.roundTrip(r.ctx, line)
	if err != nil {
		return nil, err.Error()
	}
	got, err := decodeEnvelope(reply)
	if err != nil {
		return nil, fmt.Sprintf("%v: %s", err, clip(string(reply), 300))
	}
	return got, "a " + got.Type() + " envelope: " + clip(string(reply), 300)
}

// queryEnvelope sends q on the main session and returns the reply (nil when
// none could be read or decoded) and a description of it.
func (r *provRun) queryEnvelope(q frame.Query, id string) (wire.Envelope, string) {
	if r.conn == nil {
		return nil, "no session (lost earlier)"
	}
	env, desc := r.exchange(&wire.Query{ID: id, Query: q})
	if env == nil {
		return nil, desc
	}
	if f, ok := env.(*wire.Frames); ok {
		return f, describeFrames(f.Result.Frames)
	}
	return env, desc
}

func describeQuery(q frame.Query) string {
	b, _ := cgpjson.MarshalNoEscape(q)
	return "query " + string(b)
}

func describeFrames(fs []frame.Frame) string {
	parts := make([]string, len(fs))
	for i, f := range fs {
		parts[i] = fmt.Sprintf("%s(%s, score %g, token_cost %d)", f.ID, f.Kind, f.Score, f.TokenCost)
	}
	return fmt.Sprintf("%d frames [%s]", len(fs), clip(strings.Join(parts, " "), 600))
}

func (r *provRun) sampleQuery() {
	r.sample, r.sampleGot = r.query(*r.o.Query, "")
}

// declares reports whether the provider declared capability; when it did
// not, check is recorded as skipped.
func (r *provRun) declares(check string, declared bool, capability string) bool {
	if !declared {
		r.rep.add(check, Skipped, "the provider does not declare %s", capability)
	}
	return declared
}

// haveSample reports whether the baseline query got frames; when it did
// not, check fails with what came back instead of want.
func (r *provRun) haveSample(check, want string) bool {
	if r.sample == nil {
		r.fail(check, describeQuery(*r.o.Query), r.sampleGot, want)
	}
	return r.sample != nil
}

func (r *provRun) frameValidity() {
	sent := describeQuery(*r.o.Query)
	if !r.haveSample(checkFrameValidity, "a frames reply") {
		return
	}
	var bad []string
	for i := range r.sample.Result.Frames {
		for _, v := range frameViolations(&r.sample.Result.Frames[i]) {
			bad = append(bad, r.sample.Result.Frames[i].ID+": "+v)
		}
	}
	if len(bad) > 0 {
		r.fail(checkFrameValidity, sent, strings.Join(bad, "; "), "every frame valid (F1–F5, D1, P1–P3, G1, G2)")
		return
	}
	r.rep.add(checkFrameValidity, Pass, "%d frames, all valid", len(r.sample.Result.Frames))
}

func (r *provRun) budgetHonesty() {
	q := *r.o.Query
	sent := describeQuery(q)
	if !r.haveSample(checkBudgetHonesty, "a frames reply") {
		return
	}
	fs := r.sample.Result.Frames
	sum, bad := budgetViolations(fs, q, false)
	if len(bad) > 0 {
		r.fail(checkBudgetHonesty, sent, strings.Join(bad, "; "), "Σ token_cost ≤ max_tokens, token_cost = ceil(content bytes/4), frames ≤ max_frames")
		return
	}
	// A generous sample budget cannot tell a provider that honours
	// max_frames and max_tokens from one that ignores them: probe again
	// with limits the sample reply does not fit.
	for _, tight := range tightQueries(q, fs) {
		if !r.tightBudget(tight) {
			return
		}
	}
	r.rep.add(checkBudgetHonesty, Pass, "%d frames, Σ token_cost %d ≤ %d, every cost canonical; max_frames 1 and max_tokens %d honoured",
		len(fs), sum, q.MaxTokens, tightTokens(sum))
}

// tightTokens is the max_tokens of the tight budget probe: half of what the
// sample reply cost, at least 1, so a provider that ignores max_tokens and
// answers as before overruns it.
func tightTokens(sampleCost uint64) uint32 { return uint32(max(1, min(sampleCost/2, 1<<31))) }

// tightQueries are the sample query with max_frames 1, and with max_tokens
// at tightTokens of the sample reply's cost.
func tightQueries(q frame.Query, sample []frame.Frame) []frame.Query {
	var sum uint64
	for _, f := range sample {
		sum += uint64(f.TokenCost)
	}
	frames, tokens := q, q
	frames.MaxFrames = 1
	tokens.MaxTokens = tightTokens(sum)
	return []frame.Query{frames, tokens}
}

// tightBudget sends one tight probe and holds the reply to B1, B3 and B4;
// an error with code budget_unsatisfiable is an honest answer to a budget
// too small to serve. It records a failure and returns false when the reply
// breaks a rule.
func (r *provRun) tightBudget(q frame.Query) bool {
	sent := describeQuery(q)
	env, got := r.queryEnvelope(q, "")
	if e, ok := env.(*wire.Error); ok && e.Code == wire.CodeBudgetUnsatisfiable {
		return true
	}
	res, ok := env.(*wire.Frames)
	if !ok {
		r.fail(checkBudgetHonesty, sent, got, "a frames reply within the limits, or an error with code budget_unsatisfiable")
		return false
	}
	if _, bad := budgetViolations(res.Result.Frames, q, true); len(bad) > 0 {
		r.fail(checkBudgetHonesty, sent, strings.Join(bad, "; "), "Σ token_cost ≤ max_tokens and frames ≤ max_frames under a tight budget too")
		return false
	}
	return true
}

// budgetViolations holds the frames of a reply to query q to B3 (each
// token_cost is what its content costs), B1 (Σ token_cost ≤ max_tokens)
// and B4 (no more than max_frames frames). It returns Σ token_cost and one
// line per broken rule; tight, for a tight budget probe, adds to the B1
// and B4 lines that the provider ignores the limit.
func budgetViolations(fs []frame.Frame, q frame.Query, tight bool) (uint64, []string) {
	var bad []string
	var sum uint64
	for _, f := range fs {
		sum += uint64(f.TokenCost)
		if want := f.ExpectedInlineCost(); int(f.TokenCost) != want {
			bad = append(bad, fmt.Sprintf("%s: %s declares token_cost %d, its content costs %d", rule.B3, f.ID, f.TokenCost, want))
		}
	}
	tokensNote, framesNote := "", ""
	if tight {
		tokensNote, framesNote = " (the provider ignores max_tokens)", " (the provider ignores max_frames)"
	}
	if sum > uint64(q.MaxTokens) {
		bad = append(bad, fmt.Sprintf("%s: Σ token_cost %d > max_tokens %d%s", rule.B1, sum, q.MaxTokens, tokensNote))
	}
	if len(fs) > int(q.MaxFrames) {
		bad = append(bad, fmt.Sprintf("%s: %d frames > max_frames %d%s", rule.B4, len(fs), q.MaxFrames, framesNote))
	}
	return sum, bad
}

func (r *provRun) verifyHonesty() {
	if !r.declares(checkVerifyHonesty, r.ack.Capabilities.Verify, "verify") || !r.haveSample(checkVerifyHonesty, "frames to verify") {
		return
	}
	var ids []frame.ID
	for _, f := range r.sample.Result.Frames {
		if f.ContentDigest != "" { // a digest sent as "" cannot be verified
			ids = append(ids, f.Identity(probeProviderID))
		}
	}
	if len(ids) == 0 {
		r.rep.add(checkVerifyHonesty, Skipped, "no served frame carries a content_digest")
		return
	}
	mutated := make([]frame.ID, len(ids))
	for i, id := range ids {
		id.Digest += mutatedSuffix
		mutated[i] = id
	}
	for round, req := range [][]frame.ID{ids, mutated} {
		want := wire.StatusValid
		if round == 1 {
			want = wire.StatusStale
		}
		sent := fmt.Sprintf("verify of %d served identities", len(req))
		if round == 1 {
			sent = fmt.Sprintf("verify of %d served identities with digests mutated (+%q)", len(req), mutatedSuffix)
		}
		verdicts, got := r.verify(req)
		if verdicts == nil {
			r.fail(checkVerifyHonesty, sent, got, "a verified reply")
			return
		}
		var bad []string
		for _, id := range req {
			st := wire.StatusUnknown // V2: a missing verdict reads as unknown
			for _, v := range verdicts {
				if v.Frame == id {
					st = v.Status
				}
			}
			if st != want {
				bad = append(bad, fmt.Sprintf("%s: %s", id.Frame, st))
			}
		}
		if len(bad) > 0 {
			r.fail(checkVerifyHonesty, sent, strings.Join(bad, ", "), fmt.Sprintf("every verdict %s", want))
			return
		}
	}
	r.rep.add(checkVerifyHonesty, Pass, "%d served identities verified valid; mutated digests verified stale", len(ids))
}

func (r *provRun) verify(ids []frame.ID) ([]wire.Verdict, string) {
	if r.conn == nil {
		return nil, "no session (lost earlier)"
	}
	env, desc := r.exchange(&wire.Verify{Request: wire.VerifyRequest{Frames: ids}})
	if env == nil {
		return nil, desc
	}
	v, ok := env.(*wire.Verified)
	if !ok {
		return nil, desc
	}
	if v.Response.Verdicts == nil {
		return []wire.Verdict{}, ""
	}
	return v.Response.Verdicts, ""
}

func (r *provRun) asOf() {
	q := *r.o.Query
	q.AsOf = probeAsOf
	sent := describeQuery(q)
	res, got := r.query(q, "")
	if res == nil {
		r.fail(checkAsOf, sent, got, "a frames reply")
		return
	}
	var late []string
	for _, f := range res.Result.Frames {
		// Compared as instants: "…T00:00:00.5Z" is after the pin though
		// it sorts before it as a string. A valid_from outside the
		// grammar is frame-validity's F4 finding, not a lateness.
		if c, err := frame.CompareTimestamps(f.ValidFrom, probeAsOf); err == nil && c > 0 {
			late = append(late, fmt.Sprintf("%s valid_from %s", f.ID, f.ValidFrom))
		}
	}
	if len(late) > 0 {
		r.fail(checkAsOf, sent, strings.Join(late, ", "), "no frame valid only after the as_of pin "+probeAsOf)
		return
	}
	r.rep.add(checkAsOf, Pass, "%d frames, none valid only after %s", len(res.Result.Frames), probeAsOf)
}

// kindsFilter queries each declared kind on its own (Q1): a provider that
// honours only the first, or declares kinds it serves none of while
// returning other kinds, is caught on the kind it gets wrong. A kind outside
// the base vocabulary is queried like any other (U2). An error with code
// unsupported_kind is an honest answer.
func (r *provRun) kindsFilter() {
	var kinds []frame.Kind
	for _, k := range r.ack.Capabilities.Query.Kinds {
		if strings.TrimSpace(string(k)) != "" && !slices.Contains(kinds, k) {
			kinds = append(kinds, k)
		}
	}
	if len(kinds) == 0 {
		r.rep.add(checkKindsFilter, Skipped, "the provider declares no kinds")
		return
	}
	served := make([]string, 0, len(kinds))
	for _, k := range kinds {
		q := *r.o.Query
		q.Kinds = []frame.Kind{k}
		sent := describeQuery(q)
		env, got := r.queryEnvelope(q, "")
		if e, ok := env.(*wire.Error); ok && e.Code == wire.CodeUnsupportedKind {
			served = append(served, fmt.Sprintf("%s: unsupported_kind", k))
			continue
		}
		res, ok := env.(*wire.Frames)
		if !ok {
			r.fail(checkKindsFilter, sent, got, "a frames reply, or an error with code unsupported_kind")
			return
		}
		var other []string
		for _, f := range res.Result.Frames {
			if f.Kind != k {
				other = append(other, fmt.Sprintf("%s is %s", f.ID, f.Kind))
			}
		}
		if len(other) > 0 {
			r.fail(checkKindsFilter, sent, string(rule.Q1)+": "+strings.Join(other, ", "), "only frames of kind "+string(k)+" (Q1)")
			return
		}
		served = append(served, fmt.Sprintf("%s: %d frames", k, len(res.Result.Frames)))
	}
	r.rep.add(checkKindsFilter, Pass, "each declared kind queried alone, every frame of that kind (%s)", strings.Join(served, ", "))
}

func anchoredTo(f *frame.Frame, a string) bool { return isAnchored(f, []string{a}) }

func (r *provRun) anchorRelevance() {
	if !r.declares(checkAnchorRelevance, r.ack.Capabilities.Graph, "graph") || !r.haveSample(checkAnchorRelevance, "a baseline frames reply") {
		return
	}
	anchor := ""
	for _, f := range r.sample.Result.Frames {
		for _, rel := range f.Relations {
			if anchor == "" && rel.TargetURI != "" {
				anchor = rel.TargetURI
			}
		}
	}
	for _, f := range r.sample.Result.Frames {
		if anchor == "" && f.URI != "" {
			anchor = f.URI
		}
	}
	if anchor == "" {
		r.rep.add(checkAnchorRelevance, Skipped, "no served frame has a relation target or uri to anchor on")
		return
	}
	q := *r.o.Query
	q.Anchors = []string{anchor}
	sent := describeQuery(q)
	res, got := r.query(q, "")
	if res == nil {
		r.fail(checkAnchorRelevance, sent, got, "a frames reply")
		return
	}
	n, first := 0, false
	for i := range res.Result.Frames {
		if anchoredTo(&res.Result.Frames[i], anchor) {
			n++
			first = first || i == 0
		}
	}
	if n == 0 {
		r.fail(checkAnchorRelevance, sent, describeFrames(res.Result.Frames), "at least one frame anchored to "+anchor+" (G4): the baseline served one")
		return
	}
	r.rep.add(checkAnchorRelevance, Pass, "%d frames anchored to %s (first-ranked anchored: %v)", n, anchor, first)
}

func (r *provRun) provenance() {
	sent := describeQuery(*r.o.Query)
	if !r.haveSample(checkProvenanceConsistency, "a frames reply") {
		return
	}
	checked := 0
	var bad []string
	for _, f := range r.sample.Result.Frames {
		for _, p := range f.Provenance {
			if p.Type != frame.ProvenanceFile {
				continue
			}
			actual, err := fileRangeDigest(p.URI, p.Range)
			if err != nil {
				continue // not locally readable: nothing to compare
			}
			checked++
			if actual != p.Digest {
				bad = append(bad, fmt.Sprintf("%s: %s %s declares %s, the bytes hash to %s", f.ID, p.URI, p.Range, p.Digest, actual))
			}
		}
	}
	switch {
	case len(bad) > 0:
		r.fail(checkProvenanceConsistency, sent, strings.Join(bad, "; "), "every file provenance digest equal to the SHA-256 of the bytes it addresses")
	case checked == 0:
		r.rep.add(checkProvenanceConsistency, Skipped, "no file provenance readable on this machine")
	default:
		r.rep.add(checkProvenanceConsistency, Pass, "%d file provenance links re-read, every digest matches", checked)
	}
}

func (r *provRun) shutdownClean() {
	if r.conn == nil {
		r.fail(checkShutdownClean, "shutdown", "no session (lost earlier)", "a clean shutdown")
		return
	}
	c := r.conn
	r.conn = nil
	got, ok := c.shutdown(r.ctx)
	if !ok {
		r.fail(checkShutdownClean, "shutdown", got, "a clean exit (status 0 over stdio, a 2xx over HTTP) within the timeout (R2)")
		return
	}
	r.rep.add(checkShutdownClean, Pass, "%s", got)
}

// probe opens a fresh stdio session for a wire probe.
func (r *provRun) probe(name string) (conn, *wire.HandshakeAck, bool) {
	c, ack, raw, err := r.dial()
	if err != nil {
		got := err.Error()
		if raw != "" {
			got += ": " + raw
		}
		r.fail(name, "handshake on a fresh connection", got, "a handshake_ack")
		return nil, nil, false
	}
	return c, ack, true
}

func (r *provRun) malformedInput() {
	c, _, ok := r.probe(checkMalformedInput)
	if !ok {
		return
	}
	defer c.close()
	q, _ := encodeEnvelope(&wire.Query{Query: *r.o.Query})
	sent := fmt.Sprintf("%q then %s", probeGarbage, describeQuery(*r.o.Query))
	if err := c.send([]byte(probeGarbage)); err != nil {
		r.fail(checkMalformedInput, sent, err.Error(), "the provider to keep reading")
		return
	}
	if err := c.send(q); err != nil {
		r.fail(checkMalformedInput, sent, err.Error(), "the provider to keep reading")
		return
	}
	reply, err := c.next(r.ctx)
	expected := "a frames reply, or an error with code bad_request (R1)"
	env, ok := r.decodeReply(checkMalformedInput, sent, expected, reply, err)
	if !ok {
		return
	}
	switch e := env.(type) {
	case *wire.Frames:
		r.rep.add(checkMalformedInput, Pass, "malformed line ignored; the next query answered with frames")
	case *wire.Error:
		if e.Code != wire.CodeBadRequest {
			r.fail(checkMalformedInput, sent, fmt.Sprintf("error code %q: %s", e.Code, e.Message), expected)
			return
		}
		r.rep.add(checkMalformedInput, Pass, "malformed line answered with bad_request")
	default:
		r.fail(checkMalformedInput, sent, "a "+env.Type()+" envelope", expected)
	}
}

func (r *provRun) embedding() {
	fp := ""
	if r.ack != nil {
		fp = r.ack.Capabilities.EmbeddingsFingerprint
	}
	if fp == "" {
		// The handshake may have failed on the main session; ask a fresh one.
		c, ack, _, err := r.dial()
		if err == nil {
			fp = ack.Capabilities.EmbeddingsFingerprint
			c.close()
		}
	}
	if fp == "" {
		r.rep.add(checkEmbedding, Skipped, "the provider declares no embeddings_fingerprint")
		return
	}
	n := 1
	if parsed, err := frame.ParseFingerprint(fp); err == nil && parsed.Dims == 1 {
		n = 2
	}
	c, _, ok := r.probe(checkEmbedding)
	if !ok {
		return
	}
	defer c.close()
	q := *r.o.Query
	q.Embedding = make([]float32, n)
	line, _ := encodeEnvelope(&wire.Query{Query: q})
	sent := fmt.Sprintf("query with a %d-dimension embedding to a provider declaring %s", n, fp)
	expected := "an error (bad_request) refusing the wrong-length embedding (E1)"
	reply, err := c.roundTrip(r.ctx, line)
	env, ok := r.decodeReply(checkEmbedding, sent, expected, reply, err)
	if !ok {
		return
	}
	switch e := env.(type) {
	case *wire.Error:
		if e.Code == wire.CodeBadRequest {
			r.rep.add(checkEmbedding, Pass, "wrong-length embedding refused with bad_request")
		} else {
			r.rep.add(checkEmbedding, Pass, "wrong-length embedding refused (code %q; bad_request is the clean answer)", e.Code)
		}
	default:
		r.fail(checkEmbedding, sent, "a "+env.Type()+" envelope", expected)
	}
}

func (r *provRun) correlation() {
	var ack *wire.HandshakeAck
	c, a, ok := r.probe(checkCorrelation)
	if !ok {
		return
	}
	defer c.close()
	ack = a
	if !ack.Capabilities.Correlation {
		r.rep.add(checkCorrelation, Skipped, "the provider does not declare correlation")
		return
	}
	line, _ := encodeEnvelope(&wire.Query{ID: probeCorrelationID, Query: *r.o.Query})
	sent := fmt.Sprintf("query with id %q", probeCorrelationID)
	expected := fmt.Sprintf("a reply echoing id %q (H4)", probeCorrelationID)
	reply, err := c.roundTrip(r.ctx, line)
	env, ok := r.decodeReply(checkCorrelation, sent, expected, reply, err)
	if !ok {
		return
	}
	id := ""
	switch e := env.(type) {
	case *wire.Frames:
		id = e.ID
	case *wire.Error:
		id = e.ID
	}
	if id != probeCorrelationID {
		r.fail(checkCorrelation, sent, fmt.Sprintf("%s with id %q", env.Type(), id), expected)
		return
	}
	r.rep.add(checkCorrelation, Pass, "id %q echoed", id)
}

func (r *provRun) unknownEnvelope() {
	const name = checkUnknownEnvelope
	c, _, ok := r.probe(name)
	if !ok {
		return
	}
	defer c.close()
	unknown := []byte(`{"type":"` + probeUnknownType + `","probe":"ctxkit"}`)
	q, _ := encodeEnvelope(&wire.Query{Query: *r.o.Query})
	sent := fmt.Sprintf("%s then %s", unknown, describeQuery(*r.o.Query))
	expected := "an error with code bad_request or no reply, and the provider still answering the next query"
	var first []byte
	var err error
	if r.t.URL != "" {
		first, err = c.roundTrip(r.ctx, unknown)
		if err == nil && len(bytes.TrimSpace(first)) == 0 {
			first = nil // ignored
		}
	} else {
		if err = c.send(unknown); err == nil {
			err = c.send(q)
		}
		if err == nil {
			first, err = c.next(r.ctx)
		}
	}
	if err != nil {
		r.fail(name, sent, err.Error(), expected)
		return
	}
	answered := "ignored"
	if first != nil {
		env, derr := decodeEnvelope(first)
		switch e := env.(type) {
		case *wire.Error:
			if e.Code != wire.CodeBadRequest {
				r.fail(name, sent, fmt.Sprintf("error code %q: %s", e.Code, e.Message), expected)
				return
			}
			answered = "answered bad_request"
		case *wire.Frames:
			if r.t.URL != "" {
				r.fail(name, sent, "a frames envelope in reply to the unknown envelope", expected)
				return
			}
			r.rep.add(name, Pass, "unknown envelope ignored; the next query answered with frames")
			return
		default:
			got := clip(string(first), 300)
			if derr != nil {
				got = derr.Error() + ": " + got
			}
			r.fail(name, sent, got, expected)
			return
		}
	}
	var next []byte
	if r.t.URL != "" {
		next, err = c.roundTrip(r.ctx, q)
	} else {
		next, err = c.next(r.ctx)
	}
	if err != nil {
		r.fail(name, sent, fmt.Sprintf("unknown envelope %s, then %v", answered, err), expected)
		return
	}
	env, derr := decodeEnvelope(next)
	if derr != nil {
		r.fail(name, sent, fmt.Sprintf("unknown envelope %s, then %s", answered, clip(string(next), 300)), expected)
		return
	}
	if _, ok := env.(*wire.Frames); !ok {
		r.fail(name, sent, fmt.Sprintf("unknown envelope %s, then a %s envelope", answered, env.Type()), expected)
		return
	}
	r.rep.add(name, Pass, "unknown envelope %s; the provider kept serving", answered)
}
