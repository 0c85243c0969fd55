package frame

import (
	"encoding/json"
	"errors"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/ctxkit/ctxkit/internal/fixtures"
	"github.com/ctxkit/ctxkit/rule"
)

// validFixtureFrames returns every frame of the three valid CGP fixtures.
func validFixtureFrames(t *testing.T) map[string]Frame {
	t.Helper()
	out := map[string]Frame{}
	var doc struct {
		Cases []struct {
			Name       string `json:"name"`
			Source     Frame  `json:"source"`
			Normalized Frame  `json:"expected_normalized"`
		} `json:"cases"`
	}
	if err := json.Unmarshal(fixtures.File(fixtures.ValidFrames), &doc); err != nil {
		t.Fatal(err)
	}
	for _, c := range doc.Cases {
		out[c.Name] = c.Source
		out[c.Name+"/normalized"] = c.Normalized
	}
	for name, b := range map[string][]byte{"compact": fixtures.File(fixtures.CompactFrame), "reference": fixtures.File(fixtures.ReferenceFrame)} {
		var f Frame
		if err := json.Unmarshal(b, &f); err != nil {
			t.Fatal(err)
		}
		out[name] = f
	}
	if len(out) != 6 {
		t.Fatalf("expected 6 fixture frames, got %d", len(out))
	}
	return out
}

func TestValidFixturesValidateClean(t *testing.T) {
	for name, f := range validFixtureFrames(t) {
		if v := f.Validate(); len(v) != 0 {
			t.Errorf("%s: %v", name, v)
		}
	}
}

func baseFull(t *testing.T) Frame    { return validFixtureFrames(t)["fully_populated_frame"] }
func baseCompact(t *testing.T) Frame { return validFixtureFrames(t)["compact"] }
func baseRef(t *testing.T) Frame     { return validFixtureFrames(t)["reference"] }

type ruleCase struct {
	name   string
	base   func(*testing.T) Frame
	mutate func(*Frame)
	rule   rule.Rule // the rule that must (fail) or must not (pass) be reported
	field  string    // for failing cases: the field the violation must name
	fails  bool
}

// presenceCases are the rules that read whether content or a display name
// is carried, "" included (contextgraph/1.0: P1 requires content on a full
// frame, P3 forbids even "" on a reference frame, G1 requires a display
// name on every relation).
func presenceCases() []ruleCase {
	return []ruleCase{
		{"full without content", baseFull, func(f *Frame) { f.Clear(memberContent); f.TokenCost = 0 }, "P1", "content", true},
		{"full with empty content", baseFull, func(f *Frame) { f.Set(memberContent, ""); f.TokenCost = 0 }, "P1", "", false},
		{"full with canonical hash", baseFull, func(f *Frame) { f.CanonicalContentHash = "sha256:" + strings.Repeat("a", 64) }, "P1", "canonical_content_hash", true},
		{"compact with empty content", baseCompact, func(f *Frame) { f.Set(memberContent, ""); f.TokenCost = 0 }, "P2", "", false},
		{"reference with empty content", baseRef, func(f *Frame) { f.Set(memberContent, "") }, "P3", "content", true},
		{"display name on every relation", baseFull, func(f *Frame) { f.Relations[1].DisplayName = "x" }, "G1", "", false},
	}
}

func TestFrameRules(t *testing.T) {
	file := func(f *Frame) *Provenance { return &f.Provenance[0] }
	cases := []ruleCase{
		{"score above 1", baseFull, func(f *Frame) { f.Score = 1.5 }, "F1", "score", true},
		{"negative score", baseFull, func(f *Frame) { f.Score = -0.01 }, "F1", "score", true},
		{"NaN score", baseFull, func(f *Frame) { f.Score = float32(math.NaN()) }, "F1", "score", true},
		{"score exactly 0", baseFull, func(f *Frame) { f.Score = 0 }, "F1", "", false},
		{"score exactly 1", baseFull, func(f *Frame) { f.Score = 1 }, "F1", "", false},

		{"empty title", baseFull, func(f *Frame) { f.Title = "" }, "F2", "title", true},
		{"blank title", baseFull, func(f *Frame) { f.Title = " \t" }, "F2", "title", true},
		{"one-letter title", baseFull, func(f *Frame) { f.Title = "x" }, "F2", "", false},

		{"missing citation label", baseFull, func(f *Frame) { f.CitationLabel = "" }, "F3", "citation_label", true},
		{"blank citation label", baseFull, func(f *Frame) { f.CitationLabel = "   " }, "F3", "citation_label", true},
		{"non-ASCII citation label", baseFull, func(f *Frame) { f.CitationLabel = "café" }, "F3", "", false},

		{"prose timestamp", baseFull, func(f *Frame) { f.ValidFrom = "last tuesday" }, "F4", "valid_from", true},
		{"offset timestamp", baseFull, func(f *Frame) { f.ValidTo = "2026-01-01T00:00:00+00:00" }, "F4", "valid_to", true},
		{"lowercase z", baseFull, func(f *Frame) { f.RecordedAt = "2026-01-01T00:00:00z" }, "F4", "recorded_at", true},
		{"February 30", baseFull, func(f *Frame) { f.RecordedAt = "2026-02-30T00:00:00Z" }, "F4", "recorded_at", true},
		{"Feb 29 in 1900", baseFull, func(f *Frame) { f.RecordedAt = "1900-02-29T00:00:00Z" }, "F4", "recorded_at", true},
		{"hour 24", baseFull, func(f *Frame) { f.RecordedAt = "2026-01-01T24:00:00Z" }, "F4", "recorded_at", true},
		{"second 61", baseFull, func(f *Frame) { f.RecordedAt = "2026-01-01T23:59:61Z" }, "F4", "recorded_at", true},
		{"empty fraction", baseFull, func(f *Frame) { f.RecordedAt = "2026-01-01T00:00:00.Z" }, "F4", "recorded_at", true},
		{"bad content_ref expiry", baseCompact, func(f *Frame) { f.ContentRef.ExpiresAt = "soon" }, "F4", "content_ref.expires_at", true},
		{"leap day 2000", baseFull, func(f *Frame) { f.RecordedAt = "2000-02-29T00:00:00Z" }, "F4", "", false},
		{"leap second and fraction", baseFull, func(f *Frame) { f.RecordedAt = "2016-12-31T23:59:60.123456Z" }, "F4", "", false},
		{"valid_from sent as empty", baseFull, func(f *Frame) { f.Set(MemberValidFrom, "") }, "F4", "valid_from", true},
		{"valid_to sent as empty", baseFull, func(f *Frame) { f.Set(memberValidTo, "") }, "F4", "valid_to", true},
		{"recorded_at sent as empty", baseFull, func(f *Frame) { f.Set(memberRecordedAt, "") }, "F4", "recorded_at", true},
		{"absent timestamps", baseFull, func(f *Frame) {
			for _, m := range frameMembers {
				f.Clear(m)
			}
		}, "F4", "", false},
		{"empty timestamp field unmarked", baseFull, func(f *Frame) { f.ValidFrom, f.ValidTo, f.RecordedAt = "", "", "" }, "F4", "", false},

		{"file provenance without digest", baseFull, func(f *Frame) { file(f).Digest = "" }, "F5", "provenance[0].digest", true},
		{"short file digest", baseFull, func(f *Frame) { file(f).Digest = "sha256:abc" }, "F5", "provenance[0].digest", true},
		{"uppercase file digest", baseFull, func(f *Frame) { file(f).Digest = strings.ToUpper(file(f).Digest) }, "F5", "provenance[0].digest", true},
		{"non-file link without digest", baseFull, func(f *Frame) { f.Provenance[1].Digest = "" }, "F5", "", false},

		{"GitHub-style range", baseFull, func(f *Frame) { file(f).Range = "L1-L9" }, "F17", "provenance[0].range", true},
		{"zero line", baseFull, func(f *Frame) { file(f).Range = "L0-3" }, "F17", "provenance[0].range", true},
		{"reversed range", baseFull, func(f *Frame) { file(f).Range = "L9-3" }, "F17", "provenance[0].range", true},
		{"lowercase l", baseFull, func(f *Frame) { file(f).Range = "l3" }, "F17", "provenance[0].range", true},
		{"single line", baseFull, func(f *Frame) { file(f).Range = "L3" }, "F17", "", false},
		{"range sent as empty", baseFull, func(f *Frame) { file(f).Set(MemberRange, "") }, "F17", "provenance[0].range", true},
		{"absent range", baseFull, func(f *Frame) { file(f).Clear(MemberRange) }, "F17", "", false},
		{"huge end line", baseFull, func(f *Frame) { file(f).Range = "L3-99999999999999999999999" }, "F17", "", false},
		{"non-file range is opaque", baseFull, func(f *Frame) { f.Provenance[1].Range = "step:2" }, "F17", "", false},

		{"malformed content digest", baseFull, func(f *Frame) { f.ContentDigest = "md5:abcd" }, "D1", "content_digest", true},
		{"malformed canonical hash", baseCompact, func(f *Frame) { f.CanonicalContentHash = "sha256:xyz" }, "D1", "canonical_content_hash", true},
		{"well-formed content digest", baseFull, func(f *Frame) { f.ContentDigest = "sha256:" + strings.Repeat("0f", 32) }, "D1", "", false},

		{"full with content_ref", baseFull, func(f *Frame) { f.ContentRef = &ContentRef{ProviderID: "p", URI: "u"} }, "P1", "content_ref", true},
		{"full with transform", baseFull, func(f *Frame) { f.Transform = &Transform{"m", "i", "v"} }, "P1", "transform", true},
		{"explicit full", baseFull, func(f *Frame) { f.Representation = RepresentationFull }, "P1", "", false},

		{"compact without transform", baseCompact, func(f *Frame) { f.Transform = nil }, "P2", "transform", true},
		{"compact without digest", baseCompact, func(f *Frame) { f.ContentDigest = "" }, "P2", "content_digest", true},
		{"compact without content_ref", baseCompact, func(f *Frame) { f.ContentRef = nil }, "P2", "content_ref", true},
		{"compact without canonical hash", baseCompact, func(f *Frame) { f.CanonicalContentHash = "" }, "P2", "canonical_content_hash", true},
		{"compact without content", baseCompact, func(f *Frame) { f.Content = ""; f.TokenCost = 0 }, "P2", "content", true},
		{"compact with expiry", baseCompact, func(f *Frame) { f.ContentRef.ExpiresAt = "2027-01-01T00:00:00Z" }, "P2", "", false},

		{"reference with content", baseRef, func(f *Frame) { f.Content = "x" }, "P3", "content", true},
		{"reference with digest", baseRef, func(f *Frame) { f.ContentDigest = "sha256:" + strings.Repeat("a", 64) }, "P3", "content_digest", true},
		{"reference without content_ref", baseRef, func(f *Frame) { f.ContentRef = nil }, "P3", "content_ref", true},
		{"reference without canonical hash", baseRef, func(f *Frame) { f.CanonicalContentHash = "" }, "P3", "canonical_content_hash", true},
		{"reference with inline requirement", baseRef, func(f *Frame) { f.InlineContentRequirement = InlineResolvableReferenceAllowed }, "P3", "", false},

		{"reference with cost", baseRef, func(f *Frame) { f.TokenCost = 5 }, "P4", "token_cost", true},
		{"reference with canonical cost", baseRef, func(f *Frame) { n := uint32(30); f.CanonicalTokenCost = &n }, "P4", "", false},

		{"under-reported cost", baseFull, func(f *Frame) { f.TokenCost = 1 }, "B3", "token_cost", true},
		{"over-reported cost", baseFull, func(f *Frame) { f.TokenCost = 99999 }, "B3", "token_cost", true},
		{"compact lying cost", baseCompact, func(f *Frame) { f.TokenCost = 27 }, "B3", "token_cost", true},
		{"cost tracks content", baseFull, func(f *Frame) { f.Content = "abcde"; f.TokenCost = 2 }, "B3", "", false},

		{"blank display name", baseFull, func(f *Frame) { f.Relations[0].DisplayName = "  " }, "G1", "relations[0].display_name", true},
		{"absent display name", baseFull, func(f *Frame) { f.Relations[0].DisplayName = "" }, "G1", "relations[0].display_name", true},
		{"display name sent as empty", baseFull, func(f *Frame) { f.Relations[1].set(memberDisplayName, "") }, "G1", "relations[1].display_name", true},
		{"cleared display name", baseFull, func(f *Frame) { f.Relations[0].clear(memberDisplayName) }, "G1", "relations[0].display_name", true},
		{"blank target", baseFull, func(f *Frame) { f.Relations[1].TargetURI = " " }, "G2", "relations[1].target_uri", true},
		{"any target", baseFull, func(f *Frame) { f.Relations[1].TargetURI = "x" }, "G2", "", false},

		{"blank id", baseFull, func(f *Frame) { f.ID = "" }, rule.Schema, "id", true},
		{"unknown representation", baseFull, func(f *Frame) { f.Representation = "partial" }, rule.Schema, "representation", true},
		{"unknown fidelity", baseFull, func(f *Frame) { f.ContentFidelity = "lossy" }, rule.Schema, "content_fidelity", true},
		{"unknown kind is opaque", baseFull, func(f *Frame) { f.Kind = "vendor:ticket" }, rule.Schema, "", false},
	}
	cases = append(cases, presenceCases()...)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := tc.base(t)
			tc.mutate(&f)
			v := f.Validate()
			if !tc.fails {
				if v.has(tc.rule) {
					t.Fatalf("%s reported: %v", tc.rule, v)
				}
				return
			}
			for _, e := range v {
				if e.Rule == tc.rule && e.Field == tc.field {
					if e.Detail == "" {
						t.Fatal("violation has no detail")
					}
					return
				}
			}
			t.Fatalf("want %s on %s, got %v", tc.rule, tc.field, v)
		})
	}
}

func TestValidateReportsEveryViolation(t *testing.T) {
	f := baseFull(t)
	f.Score = 2
	f.Title = ""
	f.CitationLabel = " "
	f.TokenCost = 0
	f.ValidFrom = "yesterday"
	v := f.Validate()
	for _, rule := range []rule.Rule{"F1", "F2", "F3", "B3", "F4"} {
		if !v.has(rule) {
			t.Errorf("missing %s in %v", rule, v)
		}
	}
	if len(v) != 5 {
		t.Errorf("want exactly 5 violations, got %d: %v", len(v), v)
	}
	var re *RuleError
	if !errors.As(v.Err(), &re) || re.Rule != "F1" {
		t.Errorf("errors.As did not find the first *RuleError: %v", re)
	}
	if got := v[0].Error(); got != "F1 score: score 2 is outside [0,1]" {
		t.Errorf("rendering = %q", got)
	}
	if (Violations)(nil).Err() != nil {
		t.Error("empty violations must be a nil error")
	}
}

func TestViolationsPrefix(t *testing.T) {
	v := Violations{{Rule: "F3", Field: "citation_label"}, {Rule: "X", Field: ""}}
	v.Prefix("result.frames[2]")
	if v[0].Field != "result.frames[2].citation_label" || v[1].Field != "result.frames[2]" {
		t.Fatalf("got %q, %q", v[0].Field, v[1].Field)
	}
}

func TestDataFlowRules(t *testing.T) {
	cases := []struct {
		d     DataFlow
		rules []rule.Rule
	}{
		{DataFlow{Egress: true, EgressScopes: []EgressScope{ScopeOrgTenant, ScopeThirdPartyModel, "acme:vector-store"}}, nil},
		{DataFlow{EgressScopes: []EgressScope{ScopeLocalOnly}}, nil},
		{DataFlow{Egress: true}, nil},
		{DataFlow{EgressScopes: []EgressScope{ScopeThirdPartyIndex}}, []rule.Rule{"C5"}},
		{DataFlow{EgressScopes: []EgressScope{"acme:store"}}, []rule.Rule{"C5"}},
		{DataFlow{Egress: true, EgressScopes: []EgressScope{"cloud"}}, []rule.Rule{"U3"}},
		{DataFlow{Egress: true, EgressScopes: []EgressScope{":x", "x:"}}, []rule.Rule{"U3", "U3"}},
	}
	for i, tc := range cases {
		v := tc.d.validate()
		if len(v) != len(tc.rules) {
			t.Errorf("case %d: got %v, want %v", i, v, tc.rules)
			continue
		}
		for j, r := range tc.rules {
			if v[j].Rule != r {
				t.Errorf("case %d: got %v, want %v", i, v, tc.rules)
			}
		}
		if tc.d.ScopesConsistent() != (len(tc.rules) == 0) {
			t.Errorf("case %d: ScopesConsistent disagrees with Validate", i)
		}
	}
}

func TestProviderInfoRules(t *testing.T) {
	ok := ProviderInfo{Name: "p", Version: "1"}
	if v := ok.Validate(); len(v) != 0 {
		t.Fatal(v)
	}
	bad := ProviderInfo{Name: " ", Version: "", DataFlow: DataFlow{EgressScopes: []EgressScope{ScopeOrgTenant}}}
	v := bad.Validate()
	if len(v) != 3 || v[0].Rule != "H2" || v[1].Rule != "H2" || v[2].Rule != "C5" || v[2].Field != "data_flow.egress_scopes[0]" {
		t.Fatalf("got %v", v)
	}
}

func TestCapabilitiesRules(t *testing.T) {
	good := Capabilities{EmbeddingsFingerprint: "bge-small-en-v1.5/384/l2", Representations: []Representation{"full", "compact"}, Resolve: true}
	if v := good.Validate(); len(v) != 0 {
		t.Fatal(v)
	}
	for _, fp := range []string{"bge", "bge/0", "bge/x", "/384", "bge/384/", "a/1/b/c", "bge/+3", "bge/0384"} {
		c := Capabilities{EmbeddingsFingerprint: fp}
		if v := c.Validate(); !v.has("E1") {
			t.Errorf("fingerprint %q accepted", fp)
		}
	}
	noResolve := Capabilities{Representations: []Representation{"reference"}}
	if v := noResolve.Validate(); !v.has(rule.Schema) {
		t.Error("reference without resolve accepted")
	}
}

func TestCheckQueryEmbedding(t *testing.T) {
	caps := Capabilities{EmbeddingsFingerprint: "m/3"}
	q := Query{Goal: "g", Embedding: []float32{1, 2, 3}}
	if v := CheckQueryEmbedding(&q, &caps); len(v) != 0 {
		t.Fatal(v)
	}
	q.Embedding = q.Embedding[:1]
	if v := CheckQueryEmbedding(&q, &caps); !v.has("E1") {
		t.Fatal("wrong length accepted")
	}
	if v := CheckQueryEmbedding(&q, &Capabilities{}); !v.has("E1") {
		t.Fatal("embedding to a provider without fingerprint accepted")
	}
	q.Embedding = nil
	if v := CheckQueryEmbedding(&q, &Capabilities{}); len(v) != 0 {
		t.Fatal(v)
	}
}

func TestQueryRules(t *testing.T) {
	q := Query{Goal: "g", AsOf: "2026-07-21T12:34:56Z", RepresentationPreferences: []Representation{"compact", "full"}}
	if v := q.Validate(); len(v) != 0 {
		t.Fatal(v)
	}
	q = Query{Goal: " ", AsOf: "2026-13-01T00:00:00Z", RepresentationPreferences: []Representation{"tiny"}}
	v := q.Validate()
	if !v.has("F4") || !v.has(rule.Schema) || len(v) != 3 {
		t.Fatalf("got %v", v)
	}
}

func TestIDValidate(t *testing.T) {
	if v := (ID{Provider: "p", Frame: "f", Digest: "sha256:" + strings.Repeat("a", 64)}).Validate(); len(v) != 0 {
		t.Fatal(v)
	}
	v := (ID{Provider: "", Frame: "f", Digest: "sha256:A"}).Validate()
	if !v.has("D1") || !v.has(rule.Schema) {
		t.Fatal(v)
	}
}

func TestWellFormedDigest(t *testing.T) {
	good := "sha256:" + strings.Repeat("0123456789abcdef", 4)
	if !WellFormedDigest(good) {
		t.Fatal("good digest rejected")
	}
	for _, s := range []string{"", "sha256", "sha256:", good + "0", good[:70], "SHA256:" + good[7:], "sha512:" + good[7:], "sha256:" + strings.Repeat("g", 64)} {
		if WellFormedDigest(s) {
			t.Errorf("%q accepted", s)
		}
	}
}

// TestPresenceRulesFromTheWire: the rules that read whether a member was
// sent, decoded from JSON as a provider sends it. A full frame with no
// content (absent or null) breaks P1 and one with "content": "" does not; a
// reference frame carrying "content": "" breaks P3; a relation whose
// display_name is absent or null breaks G1 (contextgraph/1.0).
func TestPresenceRulesFromTheWire(t *testing.T) {
	const head = `{"id":"f","kind":"doc","title":"t","score":0.5,"token_cost":0,"citation_label":"c"`
	const ref = `,"representation":"reference","canonical_content_hash":"sha256:` +
		"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa" + `","content_ref":{"provider_id":"p","uri":"u"}`
	for _, tc := range []struct {
		in, want string // want: "RULE field", or "" for valid
	}{
		{head + `}`, "P1 content"},
		{head + `,"content":null}`, "P1 content"},
		{head + `,"content":""}`, ""},
		{head + ref + `}`, ""},
		{head + ref + `,"content":""}`, "P3 content"},
		{head + `,"content":"","relations":[{"rel":"r","target_uri":"x"}]}`, "G1 relations[0].display_name"},
		{head + `,"content":"","relations":[{"rel":"r","target_uri":"x","display_name":null}]}`, "G1 relations[0].display_name"},
		{head + `,"content":"","relations":[{"rel":"r","target_uri":"x","display_name":"X"}]}`, ""},
	} {
		var f Frame
		if err := json.Unmarshal([]byte(tc.in), &f); err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, v := range f.Validate() {
			got = append(got, string(v.Rule)+" "+v.Field)
		}
		if want := []string{tc.want}; (tc.want == "" && len(got) != 0) || (tc.want != "" && !slices.Equal(got, want)) {
			t.Errorf("%s: violations %v, want %v", tc.in, got, tc.want)
		}
	}
}
