package wire

import (
	"strconv"
	"testing"

	"github.com/ctxkit/ctxkit/frame"
	"github.com/ctxkit/ctxkit/internal/fixtures"
)

func mustUnmarshal(t *testing.T, line string) Envelope {
	t.Helper()
	env, err := Unmarshal([]byte(line))
	if err != nil {
		t.Fatal(err)
	}
	return env
}

func has(v frame.Violations, rule, field string) bool {
	for _, e := range v {
		if string(e.Rule) == rule && e.Field == field {
			return true
		}
	}
	return false
}

// Each reference vector is valid on its own. (They are not one session: run
// through a Checker, vector 7 answers vector 5's doc/snippet query with a
// fact frame, which Q1 would report.)
func TestReferenceVectorsValidate(t *testing.T) {
	for i, line := range fixtures.Lines(fixtures.ReferenceVectors) {
		env := mustUnmarshal(t, string(line))
		if v := validate(env); len(v) != 0 {
			t.Errorf("vector %d: %v", i+1, v)
		}
	}
}

func TestEnvelopeRules(t *testing.T) {
	cases := []struct {
		line, rule, field string
	}{
		{`{"type":"handshake","protocol_version":"contextgraph/2.0"}`, "H1", "protocol_version"},
		{`{"type":"handshake","protocol_version":"mcp/1.0"}`, "H1", "protocol_version"},
		{`{"type":"handshake","protocol_version":"contextgraph/1.x"}`, "schema", "protocol_version"},
		{`{"type":"handshake_ack","protocol_version":"contextgraph/1.0","provider":{"name":" ","version":"1","data_flow":{}},"capabilities":{}}`, "H2", "provider.name"},
		{`{"type":"handshake_ack","protocol_version":"contextgraph/1.0","provider":{"name":"n","version":"1","data_flow":{"egress":false,"egress_scopes":["third-party-index"]}},"capabilities":{}}`, "C5", "provider.data_flow.egress_scopes[0]"},
		{`{"type":"handshake_ack","protocol_version":"contextgraph/1.0","provider":{"name":"n","version":"1","data_flow":{"egress":true,"egress_scopes":["vendorstore"]}},"capabilities":{}}`, "U3", "provider.data_flow.egress_scopes[0]"},
		{`{"type":"handshake_ack","protocol_version":"contextgraph/1.0","provider":{"name":"n","version":"1","data_flow":{}},"capabilities":{"embeddings_fingerprint":"bge-384"}}`, "E1", "capabilities.embeddings_fingerprint"},
		{`{"type":"query","query":{"goal":"g","max_frames":1,"max_tokens":1,"as_of":"2026-07-21"}}`, "F4", "query.as_of"},
		{framesLine(`"score":1.5`), "F1", "result.frames[0].score"},
		{framesLine(`"score":0.5,"content":"abcdefgh"`), "B3", "result.frames[0].token_cost"},
		{`{"type":"verify","request":{"frames":[{"provider_id":"p","frame_id":"f","content_digest":"sha256:abc"}]}}`, "D1", "request.frames[0].content_digest"},
		{`{"type":"verified","response":{"verdicts":[{"frame":{"provider_id":"p","frame_id":"f"},"status":"gone","replacement_digest":"sha256:` + hex64 + `"}]}}`, "V4", "response.verdicts[0].replacement_digest"},
		{`{"type":"verified","response":{"verdicts":[{"frame":{"provider_id":"p","frame_id":"f"},"status":"expired"}]}}`, "schema", "response.verdicts[0].status"},
		{`{"type":"error","message":"  "}`, "schema", "message"},
	}
	for _, tc := range cases {
		v := validate(mustUnmarshal(t, tc.line))
		if !has(v, tc.rule, tc.field) {
			t.Errorf("%s: want %s on %s, got %v", tc.line, tc.rule, tc.field, v)
		}
	}
}

const hex64 = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

func TestResultValidateFor(t *testing.T) {
	q := frame.Query{Goal: "g", MaxFrames: 2, MaxTokens: 3, Kinds: []frame.Kind{frame.KindDoc}}
	ok := Result{Frames: []frame.Frame{{Kind: frame.KindDoc, TokenCost: 1}, {Kind: frame.KindDoc, TokenCost: 2}}}
	if v := ok.validateFor(&q); len(v) != 0 {
		t.Fatal(v)
	}
	bad := Result{Frames: []frame.Frame{{Kind: frame.KindDoc, TokenCost: 4294967295}, {Kind: frame.KindFact, TokenCost: 4294967295}, {Kind: frame.KindDoc}}}
	v := bad.validateFor(&q)
	if !has(v, "B1", "frames") || !has(v, "B4", "frames") || !has(v, "Q1", "frames[1].kind") || len(v) != 3 {
		t.Fatalf("got %v", v)
	}
}

func TestCheckerSpansEnvelopes(t *testing.T) {
	var c Checker
	ack := `{"type":"handshake_ack","protocol_version":"contextgraph/1.0","provider":{"name":"n","version":"1","data_flow":{}},"capabilities":{"correlation":true,"embeddings_fingerprint":"m/2"}}`
	if v := c.Check(mustUnmarshal(t, ack)); len(v) != 0 {
		t.Fatal(v)
	}
	q := `{"type":"query","id":"q1","query":{"goal":"g","embedding":[1,2,3],"max_frames":1,"max_tokens":1}}`
	if v := c.Check(mustUnmarshal(t, q)); !has(v, "E1", "query.embedding") {
		t.Fatalf("E1 not reported: %v", v)
	}
	q2 := `{"type":"query","id":"q2","query":{"goal":"g","max_frames":1,"max_tokens":1}}`
	if v := c.Check(mustUnmarshal(t, q2)); len(v) != 0 {
		t.Fatal(v)
	}
	// Answers q2 by id: two frames of cost 1 break B1 and B4.
	two := `{"type":"frames","id":"q2","result":{"frames":[` + frameJSON + `,` + frameJSON + `],"truncated":false}}`
	v := c.Check(mustUnmarshal(t, two))
	if !has(v, "B1", "result.frames") || !has(v, "B4", "result.frames") {
		t.Fatalf("got %v", v)
	}
	// The remaining query (q1) is answered without its id: H4.
	one := `{"type":"frames","result":{"frames":[` + frameJSON + `],"truncated":false}}`
	if v := c.Check(mustUnmarshal(t, one)); !has(v, "H4", "id") || len(v) != 1 {
		t.Fatalf("got %v", v)
	}
	// Nothing pending: a frames envelope is checked on its own.
	if v := c.Check(mustUnmarshal(t, two)); len(v) != 0 {
		t.Fatalf("got %v", v)
	}
}

// A correlating provider's reply whose id matches no pending query is an H4
// violation (not silently unchecked), and the oldest pending query's limits
// still apply to it; an error envelope with a wrong id is one too.
func TestCheckerWrongCorrelationID(t *testing.T) {
	ack := func(corr bool) string {
		return `{"type":"handshake_ack","protocol_version":"contextgraph/1.0","provider":{"name":"n","version":"1","data_flow":{}},"capabilities":{"correlation":` + strconv.FormatBool(corr) + `}}`
	}
	q := `{"type":"query","id":"q1","query":{"goal":"g","max_frames":1,"max_tokens":1}}`
	wrong := `{"type":"frames","id":"q9","result":{"frames":[` + frameJSON + `,` + frameJSON + `],"truncated":false}}`
	var c Checker
	for _, env := range []string{ack(true), q} {
		if v := c.Check(mustUnmarshal(t, env)); len(v) != 0 {
			t.Fatal(v)
		}
	}
	v := c.Check(mustUnmarshal(t, wrong))
	if !has(v, "H4", "id") || !has(v, "B1", "result.frames") || !has(v, "B4", "result.frames") {
		t.Fatalf("wrong id: got %v", v)
	}
	c = Checker{}
	c.Check(mustUnmarshal(t, ack(true)))
	c.Check(mustUnmarshal(t, q))
	if v := c.Check(mustUnmarshal(t, `{"type":"error","id":"q9","code":"internal","message":"m"}`)); !has(v, "H4", "id") {
		t.Fatalf("error with a wrong id: got %v", v)
	}
	// Without correlation H4 does not apply; the limits still do.
	c = Checker{}
	c.Check(mustUnmarshal(t, ack(false)))
	c.Check(mustUnmarshal(t, q))
	if v := c.Check(mustUnmarshal(t, wrong)); has(v, "H4", "id") || !has(v, "B4", "result.frames") {
		t.Fatalf("no correlation: got %v", v)
	}
}

func TestStdioSessionValidates(t *testing.T) {
	var c Checker
	var rules []string
	for _, line := range fixtures.Lines(fixtures.StdioSession) {
		for _, e := range c.Check(mustUnmarshal(t, string(line))) {
			rules = append(rules, string(e.Rule)+" "+e.Field)
		}
	}
	// The recorded session is valid as a whole, cross-envelope rules included.
	if len(rules) != 0 {
		t.Fatalf("stdio session violations: %v", rules)
	}
}
