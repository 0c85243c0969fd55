package trust

import (
	"encoding/json"
	"strings"
	"testing"
)

func allStates() []State {
	return []State{
		{},
		NewUnattested(),
		NewAttested("k1", "acme", true),
		NewAttested("k2", "", false),
		NewNoTrustedKey("k9"),
		NewUnknownAlgorithm("rsa-pss"),
		NewInvalid(CommitmentMismatch),
		NewInvalid(BadSignature),
	}
}

func TestStateZeroIsNotChecked(t *testing.T) {
	var s State
	if s.kind != notChecked || s.String() != "not_checked" || s.WasOffered() || s.IsAttested() {
		t.Fatalf("zero state = %v (kind %d)", s, s.kind)
	}
}

func TestStateJSONSpelling(t *testing.T) {
	want := []string{
		`{"state":"not_checked"}`,
		`{"state":"unattested"}`,
		`{"state":"attested","key_id":"k1","attester_id":"acme","covers_content":true}`,
		`{"state":"attested","key_id":"k2","attester_id":"","covers_content":false}`,
		`{"state":"no_trusted_key","key_id":"k9"}`,
		`{"state":"unknown_algorithm","algorithm":"rsa-pss"}`,
		`{"state":"invalid","verdict":"commitment_mismatch"}`,
		`{"state":"invalid","verdict":"bad_signature"}`,
	}
	for i, s := range allStates() {
		b, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		if string(b) != want[i] {
			t.Errorf("marshal %v = %s, want %s", s, b, want[i])
		}
		var back State
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatalf("unmarshal %s: %v", b, err)
		}
		if back != s {
			t.Errorf("round trip %s: got %#v want %#v", b, back, s)
		}
		if !strings.Contains(string(b), `"state":"`+s.String()+`"`) {
			t.Errorf("String %q not the JSON spelling %s", s, b)
		}
	}
}

func TestStateUnmarshalRejectsInconsistent(t *testing.T) {
	for _, in := range []string{
		`{"state":"attested","key_id":"k"}`,
		`{"state":"unattested","key_id":"k"}`,
		`{"state":"invalid"}`,
		`{"state":"invalid","verdict":"nope"}`,
		`{"state":"Attested","key_id":"k","attester_id":"a","covers_content":true}`,
		`{"state":"no_trusted_key"}`,
		`{"state":"unknown_algorithm","verdict":"valid"}`,
		`[]`,
	} {
		var s State
		if err := json.Unmarshal([]byte(in), &s); err == nil {
			t.Errorf("unmarshal %s: no error, got %v", in, s)
		}
	}
}

func TestVerdictSpellings(t *testing.T) {
	want := map[Verdict]string{
		Valid: "valid", ValidIdentityOnly: "valid_identity_only", CommitmentMismatch: "commitment_mismatch",
		BadSignature: "bad_signature", UnknownAlgorithm: "unknown_algorithm", MalformedKey: "malformed_key",
		MalformedSignature: "malformed_signature", MalformedCommitment: "malformed_commitment",
	}
	for v, w := range want {
		if v.String() != w {
			t.Errorf("%d.String() = %q want %q", v, v.String(), w)
		}
		b, err := v.MarshalText()
		if err != nil || string(b) != w {
			t.Errorf("MarshalText(%v) = %s, %v", v, b, err)
		}
		var back Verdict
		if err := back.UnmarshalText(b); err != nil || back != v {
			t.Errorf("UnmarshalText(%s) = %v, %v", b, back, err)
		}
		if v.isValid() != (v == Valid) {
			t.Errorf("%v.IsValid() = %v", v, v.isValid())
		}
	}
	if _, err := Verdict(0).MarshalText(); err == nil {
		t.Error("zero verdict marshalled")
	}
	if _, err := json.Marshal(NewInvalid(0)); err == nil {
		t.Error("invalid state without verdict marshalled")
	}
}

func TestStateEchoIsBounded(t *testing.T) {
	long := strings.Repeat("é", 200) // 400 bytes
	s := NewUnknownAlgorithm(long)
	if len(s.algorithm) > maxEchoBytes || !strings.HasPrefix(long, s.algorithm) {
		t.Fatalf("algorithm echo %d bytes", len(s.algorithm))
	}
	if len(s.algorithm) != 128 {
		t.Fatalf("cut at %d bytes, want 128 (64 two-byte runes)", len(s.algorithm))
	}
	if got := NewUnknownAlgorithm("a\xffb").algorithm; got != "a\uFFFDb" {
		t.Fatalf("invalid UTF-8 kept: %q", got)
	}
	s = NewNoTrustedKey("a" + long)
	if len(s.KeyID()) != 127 {
		t.Fatalf("cut mid-rune: %d bytes", len(s.KeyID()))
	}
}

func TestWasOffered(t *testing.T) {
	for _, s := range allStates() {
		want := s.kind != notChecked && s.kind != unattested
		if s.WasOffered() != want {
			t.Errorf("%v.WasOffered() = %v", s, s.WasOffered())
		}
		if s.IsAttested() != (s.kind == attested) {
			t.Errorf("%v.IsAttested() wrong", s)
		}
		if s.CoversContent() && s.kind != attested {
			t.Errorf("%v covers content", s)
		}
	}
}
