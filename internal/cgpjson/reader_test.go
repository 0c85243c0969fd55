package cgpjson

import (
	"encoding/json"
	"math"
	"reflect"
	"testing"
	"unicode/utf8"
)

// readAs reads all of b as one value into a new T through Value or Into,
// as a fast decoder would; ok is false when the Reader declines.
func readAs[T any](b []byte, into bool) (v T, ok bool) {
	r := NewReader(b)
	if into {
		ok = r.Into(&v)
	} else {
		ok = r.Value(&v)
	}
	return v, ok && r.End()
}

// checkAs fails t if the Reader accepts b as a T that encoding/json
// refuses or decodes differently.
func checkAs[T any](t *testing.T, b []byte, into bool) bool {
	t.Helper()
	got, ok := readAs[T](b, into)
	if !ok {
		return false
	}
	var want T
	if err := json.Unmarshal(b, &want); err != nil {
		t.Fatalf("Reader accepted %q as %T, encoding/json refuses it: %v", b, want, err)
	}
	if !reflect.DeepEqual(got, want) && !(isNaN(got) && isNaN(want)) {
		t.Fatalf("%q as %T: Reader %v, encoding/json %v", b, want, got, want)
	}
	return true
}

func isNaN(v any) bool {
	f, ok := v.(float64)
	return ok && math.IsNaN(f)
}

// checkAll runs checkAs for every type a fast decoder reads.
func checkAll(t *testing.T, b []byte) {
	checkAs[string](t, b, false)
	checkAs[bool](t, b, false)
	checkAs[int](t, b, false)
	checkAs[*int](t, b, false)
	checkAs[float32](t, b, false)
	checkAs[float64](t, b, false)
	checkAs[uint32](t, b, false)
	checkAs[*uint32](t, b, false)
	checkAs[map[string]uint32](t, b, true)
	checkAs[[]any](t, b, true)
}

// TestReaderValues pins what the Reader takes and what it leaves to
// encoding/json.
func TestReaderValues(t *testing.T) {
	for _, c := range []struct {
		in   string
		ok   bool
		into bool
	}{
		{`"a\u00e9\ud83d\ude00\n"`, true, false}, {` "x" `, true, false},
		{`"\ud800"`, false, false}, {`null`, false, false}, {`"a" 1`, false, false},
	} {
		if _, ok := readAs[string]([]byte(c.in), c.into); ok != c.ok {
			t.Errorf("string %s: accepted %v, want %v", c.in, ok, c.ok)
		}
	}
	for in, want := range map[string]bool{`0`: true, `-0`: false, `4294967295`: true, `4294967296`: false, `1.0`: false, `1e2`: false, `-1`: false, `01`: false} {
		if _, ok := readAs[uint32]([]byte(in), false); ok != want {
			t.Errorf("uint32 %s: accepted %v, want %v", in, ok, want)
		}
	}
	if _, ok := readAs[[]int]([]byte(`[1,2]`), false); ok {
		t.Error("Value accepted a type it does not read; that is Into's")
	}
	for _, s := range []string{`"a\u00e9\ud83d\ude00\n"`, `true`, `-0`, `1e-1`, `3.4e38`, `3.5e38`, `{"a":1,"b":2}`, `[1,[2,{"x":null}]]`} {
		checkAll(t, []byte(s))
	}
}

// FuzzReaderMatchesJSON holds every value the Reader takes to
// encoding/json's reading of the same bytes.
func FuzzReaderMatchesJSON(f *testing.F) {
	for _, s := range []string{`"a\u00e9\ud83d\ude00\n"`, `true`, `-0`, `1e-1`, `4294967295`, `{"a":1}`, `[1,[2,{"x":null}]]`, ` 12 `} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if utf8.Valid(b) {
			checkAll(t, b)
		}
	})
}
