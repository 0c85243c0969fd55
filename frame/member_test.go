package frame

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"unsafe"

	"github.com/ctxkit/ctxkit/internal/roundtrip"
)

// TestFrameEmptyMemberRoundTrip: a timestamp or display_name sent as ""
// survives decode and re-encode byte for byte, alone and with others, and
// validate reports it (F4, G1); one sent as null or not sent stays absent,
// re-encodes without the member and validates clean.
func TestFrameEmptyMemberRoundTrip(t *testing.T) {
	const head = `{"id":"a","kind":"doc","title":"t","content":"abcd","score":0.5,"token_cost":1`
	const tail = `,"citation_label":"c"`
	for _, tc := range []struct {
		members, relations string
		want               []string // the rule:field pairs Validate reports
	}{
		{`,"valid_from":""`, ``, []string{"F4:valid_from"}},
		{`,"valid_to":""`, ``, []string{"F4:valid_to"}},
		{`,"recorded_at":""`, ``, []string{"F4:recorded_at"}},
		{`,"valid_from":"","valid_to":"","recorded_at":""`, ``, []string{"F4:valid_from", "F4:valid_to", "F4:recorded_at"}},
		{`,"valid_from":"2026-01-01T00:00:00Z","recorded_at":""`, ``, []string{"F4:recorded_at"}},
		{``, `,"relations":[{"rel":"r","target_uri":"x","display_name":""}]`, []string{"G1:relations[0].display_name"}},
		{`,"valid_to":""`, `,"relations":[{"rel":"r","target_uri":"x"},{"rel":"r","target_uri":"y","display_name":""}]`, []string{"F4:valid_to", "G1:relations[0].display_name", "G1:relations[1].display_name"}},
		{`,"valid_from":"2026-01-01T00:00:00Z"`, `,"relations":[{"rel":"r","target_uri":"x","display_name":"n"}]`, nil},
		{``, ``, nil},
	} {
		in := head + tc.members + tail + tc.relations + `}`
		var f Frame
		if err := json.Unmarshal([]byte(in), &f); err != nil {
			t.Fatalf("%s: %v", in, err)
		}
		if got, err := json.Marshal(f); err != nil || string(got) != in {
			t.Errorf("round trip of %s gave %s (%v)", in, got, err)
		}
		var got []string
		for _, v := range f.Validate() {
			got = append(got, string(v.Rule)+":"+v.Field)
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: violations %v, want %v", in, got, tc.want)
		}
	}
	// null and absent are the same: no member, no mark. An absent
	// display_name breaks G1 (every relation names its target), as does
	// one sent as null.
	for _, in := range []string{
		head + `,"valid_from":null,"valid_to":null,"recorded_at":null` + tail + `,"relations":[{"rel":"r","target_uri":"x","display_name":null}]}`,
		head + tail + `,"relations":[{"rel":"r","target_uri":"x"}]}`,
	} {
		var f Frame
		if err := json.Unmarshal([]byte(in), &f); err != nil {
			t.Fatal(err)
		}
		for _, m := range frameMembers {
			if f.Has(m) != (m == memberContent) { // the head carries content
				t.Errorf("%s: Has(%v) = %v", in, m, f.Has(m))
			}
		}
		if f.Relations[0] != (Relation{Rel: "r", TargetURI: "x"}) {
			t.Errorf("%s: relation %#v, want an unmarked one", in, f.Relations[0])
		}
		want := head + tail + `,"relations":[{"rel":"r","target_uri":"x"}]}`
		if got, _ := json.Marshal(f); string(got) != want {
			t.Errorf("%s re-encoded as %s", in, got)
		}
		if v := f.Validate(); len(v) != 1 || v[0].Rule != "G1" || v[0].Field != "relations[0].display_name" {
			t.Errorf("%s: %v, want G1 relations[0].display_name only", in, v)
		}
	}
	// A relation decoded alone keeps its mark too.
	var r Relation
	if err := json.Unmarshal([]byte(`{"rel":"r","target_uri":"x","display_name":""}`), &r); err != nil {
		t.Fatal(err)
	}
	if b, _ := json.Marshal(r); string(b) != `{"rel":"r","target_uri":"x","display_name":""}` || !r.has(memberDisplayName) {
		t.Errorf("relation re-encoded as %s, Has %v", b, r.has(memberDisplayName))
	}
}

func TestFrameHasSetClear(t *testing.T) {
	var dec Frame
	if err := json.Unmarshal([]byte(`{"id":"a","kind":"doc","title":"t","score":0.5,"token_cost":0,"valid_to":"","recorded_at":"2026-01-01T00:00:00Z"}`), &dec); err != nil {
		t.Fatal(err)
	}
	want := map[FrameMember]bool{memberValidTo: true, memberRecordedAt: true}
	for _, m := range frameMembers {
		if dec.Has(m) != want[m] {
			t.Errorf("decoded Has(%v) = %v", m, dec.Has(m))
		}
	}
	// A literal keeps "" = absent; Set marks it present and matches the
	// decoded frame exactly (unexported marks included).
	built := Frame{ID: "a", Kind: KindDoc, Title: "t", Score: 0.5, RecordedAt: "2026-01-01T00:00:00Z"}
	if built.Has(memberValidTo) || reflect.DeepEqual(built, dec) {
		t.Fatal("a literal's empty valid_to reads as present")
	}
	built.Set(memberValidTo, "")
	if !built.Has(memberValidTo) || !reflect.DeepEqual(built, dec) {
		t.Fatalf("after Set(valid_to, \"\"): %#v, want %#v", built, dec)
	}
	// Copies keep the marks.
	cp := built
	if !cp.Has(memberValidTo) {
		t.Fatal("a copy lost the mark")
	}
	// set to a value, then Clear: absent again.
	cp.Set(memberValidTo, "2027-01-01T00:00:00Z")
	if cp.ValidTo != "2027-01-01T00:00:00Z" || !cp.Has(memberValidTo) {
		t.Fatalf("Set(valid_to, value): %#v", cp)
	}
	cp.Clear(memberValidTo)
	if cp.ValidTo != "" || cp.Has(memberValidTo) {
		t.Fatalf("Clear(valid_to): %#v", cp)
	}
	if b, _ := json.Marshal(cp); string(b) != `{"id":"a","kind":"doc","title":"t","score":0.5,"token_cost":0,"recorded_at":"2026-01-01T00:00:00Z"}` {
		t.Fatalf("cleared frame encodes as %s", b)
	}
	// A mark matters only while the field is "": assigning the field
	// directly makes the member present with that value.
	built.ValidTo = "x"
	if b, _ := json.Marshal(built); !built.Has(memberValidTo) || string(b) != `{"id":"a","kind":"doc","title":"t","score":0.5,"token_cost":0,"valid_to":"x","recorded_at":"2026-01-01T00:00:00Z"}` {
		t.Fatalf("assigned field: %s", b)
	}
	// Every member maps to its own field and wire name.
	for _, m := range frameMembers {
		f := Frame{Score: 0.5}
		f.Set(m, "v")
		b, _ := json.Marshal(f)
		want := `{"id":"","kind":"","title":"","score":0.5,"token_cost":0,"` + m.String() + `":"v"}`
		if m&^(MemberValidFrom|memberValidTo|memberRecordedAt) != 0 { // members before score in wire order
			want = `{"id":"","kind":"","title":"","` + m.String() + `":"v","score":0.5,"token_cost":0}`
		}
		if string(b) != want {
			t.Errorf("Set(%v): %s, want %s", m, b, want)
		}
		for _, o := range frameMembers {
			if f.Has(o) != (o == m) {
				t.Errorf("Set(%v) makes Has(%v) %v", m, o, f.Has(o))
			}
		}
	}
	// Values that name no single member are refused.
	for _, bad := range []FrameMember{0, MemberValidFrom | memberRecordedAt, 1 << 10, 1 << 15} {
		f := Frame{ValidFrom: "v"}
		f.Set(bad, "")
		f.Clear(bad)
		if f.Has(bad) || bad.String() != "" || !reflect.DeepEqual(f, Frame{ValidFrom: "v"}) {
			t.Errorf("member %d: %#v", bad, f)
		}
	}
}

func TestRelationHasSetClear(t *testing.T) {
	r := Relation{Rel: "r", TargetURI: "x"}
	if r.has(memberDisplayName) {
		t.Fatal("a literal's empty display_name reads as present")
	}
	r.set(memberDisplayName, "")
	var dec Relation
	if err := json.Unmarshal([]byte(`{"rel":"r","target_uri":"x","display_name":""}`), &dec); err != nil {
		t.Fatal(err)
	}
	if !r.has(memberDisplayName) || r != dec {
		t.Fatalf("after Set(display_name, \"\"): %#v, want %#v", r, dec)
	}
	r.set(memberDisplayName, "n")
	if r.DisplayName != "n" || !r.has(memberDisplayName) {
		t.Fatalf("Set(display_name, n): %#v", r)
	}
	r.clear(memberDisplayName)
	if r != (Relation{Rel: "r", TargetURI: "x"}) || r.has(memberDisplayName) {
		t.Fatalf("Clear: %#v", r)
	}
	if memberDisplayName.String() != "display_name" {
		t.Fatalf("String() = %q", memberDisplayName.String())
	}
	for _, bad := range []relationMember{0, 1 << 1, 1 << 7} {
		q := Relation{Rel: "r", TargetURI: "x", DisplayName: "n"}
		q.set(bad, "")
		q.clear(bad)
		if q.has(bad) || bad.String() != "" || q != (Relation{Rel: "r", TargetURI: "x", DisplayName: "n"}) {
			t.Errorf("member %d: %#v", bad, q)
		}
	}
}

// A content reference's expires_at sent as "" is present: it round-trips
// inside a frame and alone, and breaks F4 at content_ref.expires_at; null
// or no member is absent and valid.
func TestContentRefEmptyExpiryRoundTrip(t *testing.T) {
	f := baseCompact(t)
	if f.ContentRef == nil {
		t.Fatal("the compact fixture frame has no content_ref")
	}
	cr := *f.ContentRef
	cr.set(memberExpiresAt, "")
	f.ContentRef = &cr
	back, enc := roundtrip.JSON[Frame](t, f)
	if !back.ContentRef.has(memberExpiresAt) {
		t.Fatalf("frame with expires_at \"\" lost the member: %s", enc)
	}
	v := back.Validate()
	if len(v) != 1 || v[0].Rule != "F4" || v[0].Field != "content_ref.expires_at" {
		t.Errorf("violations %v, want F4 on content_ref.expires_at", v)
	}
	for in, want := range map[string]bool{
		`{"provider_id":"p","uri":"u","expires_at":""}`:                     true,
		`{"provider_id":"p","uri":"u","expires_at":null}`:                   false,
		`{"provider_id":"p","uri":"u"}`:                                     false,
		`{"provider_id":"p","uri":"u","expires_at":"2026-01-01T00:00:00Z"}`: true,
	} {
		var c ContentRef
		if err := json.Unmarshal([]byte(in), &c); err != nil {
			t.Fatal(err)
		}
		out, _ := json.Marshal(c)
		if c.has(memberExpiresAt) != want || (want && string(out) != in) || (!want && string(out) != `{"provider_id":"p","uri":"u"}`) {
			t.Errorf("%s: Has %v, re-encoded %s", in, c.has(memberExpiresAt), out)
		}
	}
	var c ContentRef
	c.set(memberExpiresAt, "")
	c.clear(memberExpiresAt)
	if c.has(memberExpiresAt) || memberExpiresAt.String() != "expires_at" || contentRefMember(4).String() != "" || c.has(contentRefMember(4)) {
		t.Error("Clear left expires_at present, or a member name is wrong")
	}
}

// content_digest and canonical_content_hash sent as "" are present, as in
// the reference: they round-trip, break D1, and count as carried for the
// representation rules (P1-P3), so an empty one is never a missing one. An
// enumeration sent as "" is present and names no value.
func TestEmptyDigestsAndEnumsArePresent(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string // rule:field, in Validate's order
	}{
		{`{"id":"a","kind":"doc","title":"t","content":"abcd","content_digest":"","score":0.5,"token_cost":1,"citation_label":"c"}`,
			[]string{"D1:content_digest"}},
		{`{"id":"a","kind":"doc","title":"t","content":"abcd","canonical_content_hash":"","score":0.5,"token_cost":1,"citation_label":"c"}`,
			[]string{"D1:canonical_content_hash", "P1:canonical_content_hash"}},
		{`{"id":"a","kind":"doc","title":"t","content_digest":"","representation":"reference","canonical_content_hash":"","content_ref":{"provider_id":"p","uri":"u"},"score":0.5,"token_cost":0,"citation_label":"c"}`,
			[]string{"D1:content_digest", "D1:canonical_content_hash", "P3:content_digest"}},
		{`{"id":"a","kind":"doc","title":"t","content":"abcd","content_digest":null,"canonical_content_hash":null,"score":0.5,"token_cost":1,"citation_label":"c"}`,
			nil},
		// Enumerations sent as "" name no value.
		{`{"id":"a","kind":"doc","title":"t","content":"abcd","representation":"","content_fidelity":"","minimum_content_fidelity":"","inline_content_requirement":"","score":0.5,"token_cost":1,"citation_label":"c"}`,
			[]string{"schema:representation", "schema:content_fidelity", "schema:minimum_content_fidelity", "schema:inline_content_requirement"}},
	} {
		var f Frame
		if err := json.Unmarshal([]byte(tc.in), &f); err != nil {
			t.Fatalf("%s: %v", tc.in, err)
		}
		out, err := json.Marshal(f)
		if err != nil {
			t.Fatal(err)
		}
		if want := strings.ReplaceAll(strings.ReplaceAll(tc.in, `"content_digest":null,`, ""), `"canonical_content_hash":null,`, ""); string(out) != want {
			t.Errorf("round trip of %s gave %s", tc.in, out)
		}
		var got []string
		for _, v := range f.Validate() {
			got = append(got, string(v.Rule)+":"+v.Field)
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: violations %v, want %v", tc.in, got, tc.want)
		}
	}
}

// Each member's field is the struct field whose JSON name is the member's
// String: memberName and memberField take their lists in the same (bit)
// order.
func TestMemberNamesMatchTheirFieldsTags(t *testing.T) {
	var f Frame
	for _, m := range frameMembers {
		checkMemberTag(t, &f, f.field(m), m.String())
	}
	var p Provenance
	for _, m := range []ProvenanceMember{MemberURI, MemberRange, MemberDigest, MemberMethod, MemberBy} {
		checkMemberTag(t, &p, p.field(m), m.String())
	}
	var r Relation
	checkMemberTag(t, &r, r.field(memberDisplayName), memberDisplayName.String())
	var q Query
	checkMemberTag(t, &q, q.field(MemberAsOf), MemberAsOf.String())
	var c ContentRef
	checkMemberTag(t, &c, c.field(memberExpiresAt), memberExpiresAt.String())
}

// checkMemberTag fails t unless field is the address of a field of the
// struct s points to whose JSON name is name.
func checkMemberTag(t *testing.T, s any, field *string, name string) {
	t.Helper()
	v := reflect.ValueOf(s).Elem()
	for i := range v.NumField() {
		if v.Field(i).Addr().UnsafePointer() == unsafe.Pointer(field) {
			if tag, _, _ := strings.Cut(v.Type().Field(i).Tag.Get("json"), ","); tag != name {
				t.Errorf("%T member %q is field %s, JSON name %q", s, name, v.Type().Field(i).Name, tag)
			}
			return
		}
	}
	t.Errorf("%T member %q: field not found", s, name)
}
