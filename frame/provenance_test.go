package frame

import (
	"encoding/json"
	"testing"
)

var members = [...]ProvenanceMember{MemberURI, MemberRange, MemberDigest, MemberMethod, MemberBy}

// TestProvenanceEmptyMemberRoundTrip: a member sent as "" survives decode and
// re-encode byte for byte, alone, with others, and inside a frame; a member
// sent as null or not sent stays absent.
func TestProvenanceEmptyMemberRoundTrip(t *testing.T) {
	for _, in := range []string{
		`{"type":"file","uri":""}`,
		`{"type":"file","range":""}`,
		`{"type":"file","uri":"","range":"","digest":"","method":"","by":""}`,
		`{"type":"derivation","uri":"u","range":"","method":"m","by":""}`,
		`{"type":"","digest":""}`,
		`{"type":"file"}`,
		`{"type":"file","uri":"file:///a","range":"L1-2","digest":"sha256:00","method":"m","by":"b"}`,
	} {
		var p Provenance
		if err := json.Unmarshal([]byte(in), &p); err != nil {
			t.Fatalf("%s: %v", in, err)
		}
		got, err := json.Marshal(p)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != in {
			t.Errorf("round trip of %s gave %s", in, got)
		}
		fr := `{"id":"a","kind":"doc","title":"t","score":0.5,"token_cost":0,"provenance":[` + in + `,{"type":"x","by":""}]}`
		var f Frame
		if err := json.Unmarshal([]byte(fr), &f); err != nil {
			t.Fatal(err)
		}
		if got, _ := json.Marshal(f); string(got) != fr {
			t.Errorf("frame round trip:\n%s\n%s", fr, got)
		}
	}
	for _, in := range []string{`{"type":"file","uri":null,"range":null}`, `{"type":"file"}`} {
		var p Provenance
		if err := json.Unmarshal([]byte(in), &p); err != nil {
			t.Fatal(err)
		}
		if p != (Provenance{Type: "file"}) {
			t.Errorf("%s decoded to %#v, want an unmarked link", in, p)
		}
		if got, _ := json.Marshal(p); string(got) != `{"type":"file"}` {
			t.Errorf("%s re-encoded as %s", in, got)
		}
	}
}

func TestProvenanceHasSetClear(t *testing.T) {
	var dec Provenance
	if err := json.Unmarshal([]byte(`{"type":"file","uri":"","digest":"sha256:00"}`), &dec); err != nil {
		t.Fatal(err)
	}
	want := map[ProvenanceMember]bool{MemberURI: true, MemberDigest: true}
	for _, m := range members {
		if dec.Has(m) != want[m] {
			t.Errorf("decoded Has(%v) = %v", m, dec.Has(m))
		}
	}
	// A literal keeps today's meaning; Set marks "" present.
	built := Provenance{Type: "file", Digest: "sha256:00"}
	if built.Has(MemberURI) || built == dec {
		t.Fatal("a literal's empty URI reads as present")
	}
	built.Set(MemberURI, "")
	if !built.Has(MemberURI) || built != dec {
		t.Fatalf("after Set(uri, \"\"): %#v, want %#v", built, dec)
	}
	// Copies keep the marks, and == and map keys see them.
	cp := built
	seen := map[Provenance]bool{cp: true}
	if !seen[dec] || seen[Provenance{Type: "file", Digest: "sha256:00"}] {
		t.Fatal("map keys do not follow the marks")
	}
	// set to a value, then Clear: absent again.
	cp.Set(MemberURI, "u")
	if cp.URI != "u" || !cp.Has(MemberURI) {
		t.Fatalf("Set(uri, u): %#v", cp)
	}
	cp.Clear(MemberURI)
	if cp.URI != "" || cp.Has(MemberURI) || cp != (Provenance{Type: "file", Digest: "sha256:00"}) {
		t.Fatalf("Clear(uri): %#v", cp)
	}
	dec.Clear(MemberDigest)
	if dec.Digest != "" || dec.Has(MemberDigest) || !dec.Has(MemberURI) {
		t.Fatalf("Clear(digest): %#v", dec)
	}
	// Every member maps to its own field and wire name.
	for _, m := range members {
		var p Provenance
		p.Set(m, "v")
		b, _ := json.Marshal(p)
		if want := `{"type":"","` + m.String() + `":"v"}`; string(b) != want {
			t.Errorf("Set(%v): %s, want %s", m, b, want)
		}
		for _, o := range members {
			if p.Has(o) != (o == m) {
				t.Errorf("Set(%v) makes Has(%v) %v", m, o, p.Has(o))
			}
		}
	}
	// Values that name no single member are refused.
	for _, bad := range []ProvenanceMember{0, MemberURI | MemberBy, 1 << 7} {
		p := Provenance{Type: "t", URI: "u"}
		p.Set(bad, "")
		p.Clear(bad)
		if p.Has(bad) || bad.String() != "" || p != (Provenance{Type: "t", URI: "u"}) {
			t.Errorf("member %d: %#v", bad, p)
		}
	}
}
