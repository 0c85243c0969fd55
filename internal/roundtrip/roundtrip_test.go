package roundtrip

import (
	"strings"
	"testing"
)

type stable struct {
	A string `json:"a"`
	B []int  `json:"b,omitempty"`
}

// lossy drops its member on decoding, so its encoding changes.
type lossy struct{ A string }

func (l *lossy) UnmarshalJSON([]byte) error { return nil }

// fake records a failure instead of stopping the test.
type fake struct {
	testing.TB
	failed string
}

func (f *fake) Helper() {}
func (f *fake) Fatalf(format string, args ...any) {
	if f.failed == "" {
		f.failed = format
	}
	panic(f)
}

func run(decode func(*fake)) (failed string) {
	f := &fake{}
	defer func() {
		if r := recover(); r != nil && r != any(f) {
			panic(r)
		}
		failed = f.failed
	}()
	decode(f)
	return ""
}

func TestJSONReturnsTheDecodedValue(t *testing.T) {
	back, enc := JSON[stable](t, stable{A: "x", B: []int{1, 2}})
	if back.A != "x" || len(back.B) != 2 || string(enc) != `{"a":"x","b":[1,2]}` {
		t.Fatalf("got %+v, %s", back, enc)
	}
}

func TestJSONFailsOnALossyType(t *testing.T) {
	failed := run(func(f *fake) { JSON[lossy](f, lossy{A: "x"}) })
	if !strings.Contains(failed, "does not survive a round trip") {
		t.Fatalf("a lossy type passed: %q", failed)
	}
	failed = run(func(f *fake) { JSON[stable](f, "not an object") })
	if !strings.Contains(failed, "decode") {
		t.Fatalf("an undecodable encoding passed: %q", failed)
	}
}
