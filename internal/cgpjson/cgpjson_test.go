package cgpjson

import (
	"encoding/json"
	"math"
	"strconv"
	"testing"
	"unicode/utf8"
)

func TestAppendF32(t *testing.T) {
	cases := map[float32]string{
		0:                             "0.0",
		float32(math.Copysign(0, -1)): "-0.0",
		1:                             "1.0",
		-1:                            "-1.0",
		0.875:                         "0.875",
		0.1:                           "0.1",
		-0.25:                         "-0.25",
		0.125:                         "0.125",
		12:                            "12.0",
		0.8:                           "0.8",
		0.92:                          "0.92",
		1e-5:                          "0.00001",
		1e-6:                          "0.000001",
		1e-7:                          "1e-7",
		1.5e-7:                        "1.5e-7",
		1234567:                       "1234567.0",
		1e12:                          "1000000000000.0",
		1e13:                          "1e13",
		1.25e20:                       "1.25e20",
		123.456:                       "123.456",
		math.MaxFloat32:               "3.4028235e38",
		math.SmallestNonzeroFloat32:   "1e-45",
	}
	for v, want := range cases {
		got, err := appendF32(nil, v)
		if err != nil || string(got) != want {
			t.Errorf("AppendF32(%v) = %q, %v; want %q", v, got, err, want)
		}
	}
}

func TestAppendF32RejectsNonFinite(t *testing.T) {
	for _, v := range []float32{float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1))} {
		if _, err := appendF32(nil, v); err != errNonFinite {
			t.Errorf("AppendF32(%v) error = %v", v, err)
		}
	}
}

// Every finite f32 written must read back as the same f32, and must be a JSON
// number. Walk a spread of bit patterns.
func TestAppendF32RoundTrips(t *testing.T) {
	for bits := uint32(0); bits < math.MaxUint32-(1<<19); bits += 1<<19 + 7 {
		v := math.Float32frombits(bits)
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			continue
		}
		b, err := appendF32(nil, v)
		if err != nil {
			t.Fatal(err)
		}
		if !json.Valid(b) {
			t.Fatalf("%v wrote invalid JSON %q", v, b)
		}
		back, err := strconv.ParseFloat(string(b), 32)
		if err != nil || float32(back) != v {
			t.Fatalf("%v wrote %q which reads back as %v (%v)", v, b, back, err)
		}
	}
}

func TestAppendStringMatchesReference(t *testing.T) {
	cases := map[string]string{
		"plain":        `"plain"`,
		`a"b\c`:        `"a\"b\\c"`,
		"<a>&b":        `"<a>&b"`,
		"caf\u00e9":    "\"caf\u00e9\"",
		"line\nnext\t": `"line\nnext\t"`,
		"\b\f\r":       `"\b\f\r"`,
		"\x00\x1f\x7f": "\"\\u0000\\u001f\x7f\"",
		"\u2028\u2029": "\"\u2028\u2029\"",
		"bad\xffbyte":  "\"bad\ufffdbyte\"",
		"":             `""`,
	}
	for in, want := range cases {
		if got := string(appendString(nil, in)); got != want {
			t.Errorf("appendString(%q) = %q; want %q", in, got, want)
		}
	}
}

func FuzzAppendString(f *testing.F) {
	for _, s := range []string{"", "a\"b", "\x00", "caf\u00e9", "\xff", "</frame>"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		b := appendString(nil, s)
		var back string
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatalf("appendString(%q) = %q is not a JSON string: %v", s, b, err)
		}
		if utf8.ValidString(s) && back != s {
			t.Fatalf("appendString(%q) read back as %q", s, back)
		}
	})
}

func TestWriterNesting(t *testing.T) {
	var w W
	w.Open()
	w.Str("a", "x")
	w.Key("o")
	w.Open()
	w.Bool("b", true)
	w.Close()
	w.Key("l")
	w.OpenArray()
	w.Elem()
	w.Open()
	w.Close()
	w.Elem()
	w.Open()
	w.Uint("n", 3)
	w.Close()
	w.CloseArray()
	OptStrs(&w, "none", []string(nil))
	Strs(&w, "s", []string{"p", "q"})
	w.F32s("f", []float32{1, 0.5})
	w.OptStr("empty", "")
	w.Close()
	want := `{"a":"x","o":{"b":true},"l":[{},{"n":3}],"s":["p","q"],"f":[1.0,0.5]}`
	if string(w.B) != want || w.Err != nil {
		t.Fatalf("got %s (%v); want %s", w.B, w.Err, want)
	}
}

// TestMarshal: Marshal returns what the write function wrote, and the
// first failure the W recorded.
func TestMarshal(t *testing.T) {
	b, err := Marshal(func(w *W) { w.Open(); w.Str("a", "x"); w.Close() })
	if string(b) != `{"a":"x"}` || err != nil {
		t.Fatalf("got %s, %v", b, err)
	}
	if _, err := Marshal(func(w *W) { w.Open(); w.F32("f", float32(math.NaN())); w.Close() }); err == nil {
		t.Fatal("a NaN was not reported")
	}
}
