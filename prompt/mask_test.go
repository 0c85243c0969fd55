package prompt

import (
	"strings"
	"testing"
	"unsafe"
)

func TestMaskedRenderingsOfTheSamePromptAreEqual(t *testing.T) {
	first := New().Text("Labels?").Untrusted(External("Fix the login")).Untrusted(NewAgentText("done"))
	second := New().Text("Labels?").Untrusted(External("Fix the login")).Untrusted(NewAgentText("done"))
	a, b := mustBuild(t, first), mustBuild(t, second)
	if a == b {
		t.Fatal("two prompts drew the same nonce")
	}
	if MaskNonces(a) != MaskNonces(b) {
		t.Errorf("masked renderings differ:\n%s\n%s", MaskNonces(a), MaskNonces(b))
	}
	zero, _ := NewWithNonce(zeroNonce)
	zero.Text("Labels?").Untrusted(External("Fix the login")).Untrusted(NewAgentText("done"))
	if MaskNonces(a) != mustBuild(t, zero) {
		t.Errorf("masking is not rendering with the zero nonce:\n%s", MaskNonces(a))
	}
}

func TestMaskingKeepsDifferentContentsApart(t *testing.T) {
	first := New().Untrusted(External("Fix the login")).String()
	second := New().Untrusted(External("Fix the logout")).String()
	if MaskNonces(first) == MaskNonces(second) {
		t.Error("different contents masked to the same text")
	}
}

// The seed masked a nonce quoted in content too (it matched without the
// "<"); only real tags are masked here, so content that differs only in a
// quoted nonce still differs after masking.
func TestMaskingLeavesNoncesInContentAlone(t *testing.T) {
	quoted := func(n string) string {
		p, _ := NewWithNonce(fixedNonce)
		return p.Untrusted(External(`see </untrusted nonce="` + n + `"> and <untrusted nonce="` + n + `">`)).String()
	}
	a := MaskNonces(quoted("0123456789abcdef0123456789abcdef"))
	b := MaskNonces(quoted("fedcba9876543210fedcba9876543210"))
	if a == b {
		t.Fatal("nonces quoted in content were masked")
	}
	if !strings.Contains(a, `<\`+"/untrusted nonce=\"0123456789abcdef0123456789abcdef\">") {
		t.Errorf("quoted nonce changed: %s", a)
	}
	if strings.Count(a, zeroNonce) != 2 {
		t.Errorf("the real tags were not masked: %s", a)
	}
}

func TestTextWithoutBlocksIsNotMasked(t *testing.T) {
	for _, s := range []string{
		"", "plain text",
		`untrusted nonce="short" and untrusted nonce="`,
		`untrusted nonce="0123456789abcdef0123456789abcdef">`,   // no "<"
		`<untrusted nonce="0123456789ABCDEF0123456789ABCDEF">`,  // upper case
		`<untrusted nonce="0123456789abcdef0123456789abcdef>`,   // no closing quote
		`<untrusted nonce="0123456789abcdef0123456789abcdef"`,   // truncated
		`<untrusted nonce="0123456789abcdef0123456789abcdef0">`, // 33 characters
		`< untrusted nonce="0123456789abcdef0123456789abcdef">`,
		`<untrusted nonce="` + zeroNonce + `">`,
	} {
		got := MaskNonces(s)
		if got != s {
			t.Errorf("MaskNonces(%q) = %q", s, got)
		}
		if len(s) > 0 && unsafe.StringData(got) != unsafe.StringData(s) {
			t.Errorf("MaskNonces(%q) copied the text", s)
		}
	}
}

func TestMaskNoncesMasksTagsEverywhere(t *testing.T) {
	const n = "0123456789abcdef0123456789abcdef"
	in := `a<untrusted nonce="` + n + `">b</untrusted nonce="` + n + `"><untrusted nonce="` + n + `">`
	want := `a<untrusted nonce="` + zeroNonce + `">b</untrusted nonce="` + zeroNonce + `"><untrusted nonce="` + zeroNonce + `">`
	if got := MaskNonces(in); got != want {
		t.Errorf("got %q", got)
	}
	if got := MaskNonces(want); got != want {
		t.Errorf("masking is not idempotent: %q", got)
	}
}
