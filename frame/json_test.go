package frame

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func TestFrameDecodeIgnoresUnknownMembersAndNulls(t *testing.T) {
	in := `{"id":"a","kind":"doc","title":"t","content":"abcd","score":0.5,"token_cost":1,
		"uri":null,"provenance":null,"relations":null,"embedding":null,"content_ref":null,
		"canonical_token_cost":null,"future_member":{"deep":[1,2,{"x":null}]},
		"citation_label":"c"}`
	var f Frame
	if err := json.Unmarshal([]byte(in), &f); err != nil {
		t.Fatal(err)
	}
	if f.ID != "a" || f.Content != "abcd" || f.URI != "" || f.Provenance != nil || f.CanonicalTokenCost != nil || f.CitationLabel != "c" {
		t.Fatalf("decoded %+v", f)
	}
	got, err := json.Marshal(f)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"id":"a","kind":"doc","title":"t","content":"abcd","score":0.5,"token_cost":1,"citation_label":"c"}`
	if string(got) != want {
		t.Fatalf("re-encoded %s", got)
	}
}

func TestFrameDecodeMissingRequiredMember(t *testing.T) {
	full := map[string]string{"id": `"a"`, "kind": `"doc"`, "title": `"t"`, "score": `0.5`, "token_cost": `1`}
	for _, drop := range []string{"id", "kind", "title", "score", "token_cost"} {
		for _, asNull := range []bool{false, true} {
			var parts []string
			for k, v := range full {
				if k == drop {
					if !asNull {
						continue
					}
					v = "null"
				}
				parts = append(parts, `"`+k+`":`+v)
			}
			var f Frame
			err := json.Unmarshal([]byte("{"+strings.Join(parts, ",")+"}"), &f)
			var me *MissingMemberError
			if !errors.As(err, &me) || me.Member != drop || me.Object != "ContextFrame" {
				t.Errorf("dropping %s (null=%v): err = %v", drop, asNull, err)
			}
		}
	}
}

func TestFrameDecodeRejectsOutOfRangeNumbers(t *testing.T) {
	for _, tc := range []string{
		`"token_cost":-1`, `"token_cost":4294967296`, `"token_cost":1.5`, `"token_cost":"1"`,
		`"score":1e39`, `"score":"0.5"`, `"score":true`,
	} {
		in := `{"id":"a","kind":"doc","title":"t","score":0.5,"token_cost":1,` + tc + `}`
		var f Frame
		err := json.Unmarshal([]byte(in), &f)
		var te *json.UnmarshalTypeError
		if !errors.As(err, &te) {
			t.Errorf("%s: err = %v (%T)", tc, err, err)
		}
	}
	// The largest u32 is fine.
	var f Frame
	if err := json.Unmarshal([]byte(`{"id":"a","kind":"doc","title":"t","score":0.5,"token_cost":4294967295}`), &f); err != nil || f.TokenCost != 4294967295 {
		t.Fatalf("max u32: %v %d", err, f.TokenCost)
	}
}

func TestUnknownKindIsPreservedVerbatim(t *testing.T) {
	in := []byte(`{"id":"a","kind":"vendor:Ticket","title":"t","score":0.25,"token_cost":0,"citation_label":"c"}`)
	var f Frame
	if err := json.Unmarshal(in, &f); err != nil {
		t.Fatal(err)
	}
	if f.Kind != "vendor:Ticket" || f.Kind.isBase() {
		t.Fatalf("kind = %q", f.Kind)
	}
	out, _ := json.Marshal(f)
	if !bytes.Equal(out, in) {
		t.Fatalf("re-encoded %s", out)
	}
}

func TestFrameEncodingIsExact(t *testing.T) {
	n := uint32(40)
	f := Frame{
		ID: "x", Kind: KindSnippet, Title: "<b>&\"q\"</b>", Content: "line\u2028two\n", Score: 1,
		TokenCost: 3, CanonicalTokenCost: &n, Representation: RepresentationFull,
		Embedding:     &Embedding{Fingerprint: "m/2", Vector: []float32{0.1, -2}},
		CitationLabel: "c",
	}
	got, err := f.AppendJSON([]byte("prefix:"))
	if err != nil {
		t.Fatal(err)
	}
	want := "prefix:{\"id\":\"x\",\"kind\":\"snippet\",\"title\":\"<b>&\\\"q\\\"</b>\",\"content\":\"line\u2028two\\n\"," +
		"\"score\":1.0,\"token_cost\":3,\"canonical_token_cost\":40,\"citation_label\":\"c\"," +
		"\"embedding\":{\"fingerprint\":\"m/2\",\"vector\":[0.1,-2.0]}}"
	if string(got) != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
}

func TestMarshalNonFiniteScoreFails(t *testing.T) {
	f := Frame{ID: "x", Kind: KindDoc, Title: "t", Score: float32(inf())}
	if _, err := json.Marshal(f); err == nil {
		t.Fatal("infinite score marshalled")
	}
}

func inf() float64 { var z float64; return 1 / z }

func TestNestedRequiredMembers(t *testing.T) {
	cases := map[string]string{
		`{"provenance":[{"uri":"u"}]}`:                       "type",
		`{"relations":[{"rel":"r"}]}`:                        "target_uri",
		`{"relations":[{"target_uri":"t"}]}`:                 "rel",
		`{"content_ref":{"uri":"u"}}`:                        "provider_id",
		`{"content_ref":{"provider_id":"p"}}`:                "uri",
		`{"transform":{"method":"m","version":"v"}}`:         "implementation",
		`{"transform":{"implementation":"i","version":"v"}}`: "method",
		`{"transform":{"method":"m","implementation":"i"}}`:  "version",
		`{"embedding":{"vector":[1]}}`:                       "fingerprint",
	}
	for extra, member := range cases {
		in := `{"id":"a","kind":"doc","title":"t","score":0.5,"token_cost":1,` + extra[1:]
		var f Frame
		err := json.Unmarshal([]byte(in), &f)
		var me *MissingMemberError
		if !errors.As(err, &me) || me.Member != member {
			t.Errorf("%s: err = %v", extra, err)
		}
	}
}

func TestQueryAndProviderJSON(t *testing.T) {
	in := `{"goal":"g","query_text":"t","embedding":[0.1,-0.25,0.5],"kinds":["doc"],"anchors":["a"],"max_frames":8,"max_tokens":4096,"as_of":"2026-07-21T12:34:56Z","representation_preferences":["compact","full"]}`
	var q Query
	if err := json.Unmarshal([]byte(in), &q); err != nil {
		t.Fatal(err)
	}
	if out, _ := json.Marshal(q); string(out) != in {
		t.Fatalf("query re-encoded %s", out)
	}
	for member, doc := range map[string]string{
		"goal":       `{"max_frames":1,"max_tokens":1}`,
		"max_frames": `{"goal":"g","max_tokens":1}`,
		"max_tokens": `{"goal":"g","max_frames":1,"max_tokens":null}`,
	} {
		var q Query
		var me *MissingMemberError
		if err := json.Unmarshal([]byte(doc), &q); !errors.As(err, &me) || me.Member != member {
			t.Errorf("query without %s: %v", member, err)
		}
	}
	// as_of sent as "" is not "now": it is present, round-trips, and
	// breaks F4; null or no member is absent.
	emptyPin := `{"goal":"g","max_frames":1,"max_tokens":1,"as_of":""}`
	if err := json.Unmarshal([]byte(emptyPin), &q); err != nil || !q.Has(MemberAsOf) {
		t.Fatalf(`as_of "": err %v, present %v`, err, q.Has(MemberAsOf))
	}
	if out, _ := json.Marshal(q); string(out) != emptyPin {
		t.Errorf("query re-encoded %s, want %s", out, emptyPin)
	}
	if v := q.Validate(); len(v) != 1 || v[0].Rule != "F4" || v[0].Field != "as_of" {
		t.Errorf(`as_of "": violations %v, want F4 on as_of`, v)
	}
	for _, doc := range []string{`{"goal":"g","max_frames":1,"max_tokens":1,"as_of":null}`, `{"goal":"g","max_frames":1,"max_tokens":1}`} {
		q := Query{AsOf: "stale"}
		q.Set(MemberAsOf, "")
		if err := json.Unmarshal([]byte(doc), &q); err != nil || q.Has(MemberAsOf) || len(q.Validate()) != 0 {
			t.Errorf("%s: present %v, err %v, violations %v; want absent and valid", doc, q.Has(MemberAsOf), err, q.Validate())
		}
	}
	// Set, Has and Clear from Go.
	var g Query
	g.Goal, g.MaxFrames, g.MaxTokens = "g", 1, 1
	g.Set(MemberAsOf, "")
	if out, _ := json.Marshal(g); string(out) != emptyPin {
		t.Errorf("Set(MemberAsOf, \"\") encodes %s", out)
	}
	g.clear(MemberAsOf)
	if g.Has(MemberAsOf) || MemberAsOf.String() != "as_of" || QueryMember(2).String() != "" || g.Has(QueryMember(2)) {
		t.Error("Clear left as_of present, or a member name is wrong")
	}
	var p ProviderInfo
	if err := json.Unmarshal([]byte(`{"name":"n","version":"v"}`), &p); err == nil {
		t.Error("provider info without data_flow accepted")
	}
	if err := json.Unmarshal([]byte(`{"name":"n","version":"v","data_flow":{}}`), &p); err != nil {
		t.Fatal(err)
	}
	if out, _ := json.Marshal(p); string(out) != `{"name":"n","version":"v","data_flow":{"reads":false,"writes":false,"egress":false}}` {
		t.Fatalf("provider re-encoded %s", out)
	}
	var c Capabilities
	if err := json.Unmarshal([]byte(`{"embeddings_fingerprint":null,"upsert":true}`), &c); err != nil {
		t.Fatal(err)
	}
	if out, _ := json.Marshal(c); string(out) != `{"query":{"kinds":[]},"correlation":false,"graph":false,"verify":false,"resolve":false}` {
		t.Fatalf("capabilities re-encoded %s", out)
	}
}

func TestIDJSON(t *testing.T) {
	for _, in := range []string{`{"provider_id":"p","frame_id":"f"}`, `{"provider_id":"p","frame_id":"f","content_digest":"sha256:x"}`} {
		var id ID
		if err := json.Unmarshal([]byte(in), &id); err != nil {
			t.Fatal(err)
		}
		if out, _ := json.Marshal(id); string(out) != in {
			t.Errorf("re-encoded %s", out)
		}
	}
	var id ID
	if err := json.Unmarshal([]byte(`{"frame_id":"f"}`), &id); err == nil {
		t.Error("FrameId without provider_id accepted")
	}
}
