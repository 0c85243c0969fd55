package wire

import (
	"errors"
	"testing"
)

func TestCodes(t *testing.T) {
	if len(codes) != 8 {
		t.Fatal("want 8 base codes")
	}
	for _, c := range codes {
		if !c.isKnown() || c.Effective() != c {
			t.Errorf("%s", c)
		}
		want := c == CodeUnavailable || c == CodeShuttingDown
		if c.Retryable() != want {
			t.Errorf("%s retryable = %v", c, c.Retryable())
		}
	}
	for _, c := range []Code{"", "quota_exhausted", "Bad_Request"} {
		if c.isKnown() || c.Effective() != CodeInternal || c.Retryable() {
			t.Errorf("%q should read as internal, not retryable", c)
		}
	}
}

// X1: an unknown code reads as internal while the original string is kept,
// byte for byte, through decode and encode.
func TestUnknownCodeIsKeptVerbatim(t *testing.T) {
	line := `{"type":"error","code":"quota_exhausted","message":"a code this revision does not define"}`
	env, err := Unmarshal([]byte(line))
	if err != nil {
		t.Fatal(err)
	}
	e := env.(*Error)
	if e.Code != "quota_exhausted" || e.Code.Effective() != CodeInternal {
		t.Fatalf("code %q effective %q", e.Code, e.Code.Effective())
	}
	if out, _ := Marshal(e); string(out) != line {
		t.Fatalf("re-encoded %s", out)
	}
	var asErr error = e
	var target *Error
	if !errors.As(asErr, &target) || asErr.Error() != "provider error quota_exhausted: a code this revision does not define" {
		t.Fatalf("as Go error: %v", asErr)
	}
	// X2: no code at all.
	if (&Error{Message: "m"}).Error() != "provider error internal: m" {
		t.Fatal("absent code must read as internal")
	}
}

func TestVersionFamilies(t *testing.T) {
	cases := []struct {
		a, b string
		ok   bool
	}{
		{"contextgraph/1.0-draft", "contextgraph/1.0", true},
		{"contextgraph/1.0-draft", "contextgraph/1.9", true},
		{"contextgraph/1.0", "contextgraph/2.0", false},
		{"contextgraph/1.0", "mcp/1.0", false},
		{"contextgraph/1.0", "contextgraph/10.0", false},
		{"nodot", "nodot", true},
	}
	for _, tc := range cases {
		if Compatible(tc.a, tc.b) != tc.ok {
			t.Errorf("Compatible(%q, %q) != %v", tc.a, tc.b, tc.ok)
		}
		err := versionMismatch(tc.a, tc.b)
		var vm *versionMismatchError
		if tc.ok != (err == nil) || (!tc.ok && (!errors.As(err, &vm) || vm.Theirs != tc.b)) {
			t.Errorf("CheckVersion(%q, %q) = %v", tc.a, tc.b, err)
		}
	}
	if Family("contextgraph/1.0-draft") != "contextgraph/1" || Family("x") != "x" {
		t.Fatal("Family")
	}
	for v, ok := range map[string]bool{"contextgraph/1.0-draft": true, "contextgraph/12.34": true,
		"contextgraph/1": false, "contextgraph/1.": false, "contextgraph/a.0": false, "mcp/1.0": false, "contextgraph/1.0-beta": false} {
		if wellFormedVersion(v) != ok {
			t.Errorf("WellFormedVersion(%q) != %v", v, ok)
		}
	}
}
