package wire

import (
	"bytes"
	"errors"
	"io"
	"testing"

	"github.com/ctxkit/ctxkit/internal/fixtures"
)

// FuzzDecode feeds arbitrary bytes to the NDJSON decoder. Nothing may panic;
// every line either fails with a *DecodeError or decodes to an envelope whose
// encoding is stable: encoding, decoding and encoding again gives the same
// bytes. Seeds: testdata/fuzz/FuzzDecode (the fixtures' lines) plus the
// embedded fixtures.
func FuzzDecode(f *testing.F) {
	f.Add(fixtures.File(fixtures.ReferenceVectors))
	f.Add(fixtures.File(fixtures.StdioSession))
	f.Add([]byte("{\"type\":\"frames\",\"result\":{\"frames\":[{\"score\":NaN}],\"truncated\":false}}\n\xff\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		d := NewDecoder(bytes.NewReader(data), &DecoderOptions{MaxLineBytes: 4096})
		for n := 0; n < 10000; n++ {
			env, err := d.Decode()
			if errors.Is(err, io.EOF) {
				return
			}
			if err != nil {
				var de *DecodeError
				if !errors.As(err, &de) || de.Line != d.Line() {
					t.Fatalf("untyped or misnumbered error %T: %v", err, err)
				}
				continue
			}
			_ = validate(env)
			enc1, err := Marshal(env)
			if err != nil {
				t.Fatalf("decoded envelope does not encode: %v", err)
			}
			back, err := Unmarshal(enc1)
			if err != nil {
				t.Fatalf("own encoding %s does not decode: %v", enc1, err)
			}
			enc2, err := Marshal(back)
			if err != nil || !bytes.Equal(enc1, enc2) {
				t.Fatalf("encoding not stable:\n%s\n%s (%v)", enc1, enc2, err)
			}
		}
	})
}

// FuzzCheckInput runs the validate command's input checker over arbitrary
// bytes: NDJSON or one document, any shape. Nothing may panic, every failure
// is a *DecodeError, and every finding names a rule and a detail.
func FuzzCheckInput(f *testing.F) {
	for _, name := range fixtures.Names() {
		f.Add(fixtures.File(name))
	}
	f.Add([]byte(`{"provider":"p","frame":` + frameJSON + "}\n[" + frameJSON + "]\n"))
	f.Add([]byte(`{"missing":` + frameJSON + `,"blank":{"goal":"g","max_frames":1,"max_tokens":1},"n":[1,"x",null]}`))
	f.Add([]byte(`{"cases":[]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, session := range []bool{false, true} {
			rep, err := CheckInput(bytes.NewReader(data), &CheckOptions{Decoder: DecoderOptions{MaxLineBytes: 4096}, Session: session})
			if err != nil {
				t.Fatalf("reading from memory failed: %v", err)
			}
			if rep.Valid() && (rep.Items == 0 || !rep.Checked()) {
				t.Fatalf("valid with nothing checked: %+v", rep)
			}
			for _, e := range rep.Errors {
				var de *DecodeError
				if !errors.As(e, &de) {
					t.Fatalf("untyped error %T: %v", e, e)
				}
			}
			for _, v := range rep.Violations {
				if v.Rule == "" || v.Detail == "" || v.Line < 1 {
					t.Fatalf("incomplete finding %+v", v)
				}
			}
		}
	})
}
