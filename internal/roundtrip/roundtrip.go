// Package roundtrip checks, for the tests of ctxkit's packages, that a
// value's JSON encoding survives decoding byte for byte: the property every
// wire and report shape promises.
package roundtrip

import (
	"encoding/json"
	"testing"
)

// JSON encodes v, decodes the encoding into a new T and encodes that again.
// It fails t unless the two encodings are the same bytes, and returns the
// decoded value and the encoding.
func JSON[T any](t testing.TB, v any) (T, []byte) {
	t.Helper()
	var back T
	enc, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("encode %T: %v", v, err)
	}
	if err := json.Unmarshal(enc, &back); err != nil {
		t.Fatalf("decode %s into %T: %v", enc, back, err)
	}
	again, err := json.Marshal(&back)
	if err != nil {
		t.Fatalf("re-encode %T: %v", back, err)
	}
	if string(again) != string(enc) {
		t.Fatalf("%T does not survive a round trip:\n%s\nbecame\n%s", back, enc, again)
	}
	return back, enc
}
