package cgpjson

import (
	"bytes"
	"encoding/json"
	"testing"
)

// FuzzAppendStdString checks the string escaper against encoding/json with
// HTML escaping off, invalid UTF-8 included.
func FuzzAppendStdString(f *testing.F) {
	for _, s := range []string{"", "plain", "<a href=\"x\">&amp;</a>", "\u2028\u2029", "\x00\x1f\x7f\b\f\n\r\t\\", "\xff\xfe bad \xe2\x80", "é 世界 😀"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(s); err != nil {
			t.Fatal(err)
		}
		want := bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
		if got := AppendStdString([]byte("x"), s); !bytes.Equal(got[1:], want) || got[0] != 'x' {
			t.Fatalf("AppendStdString(%q) = %s; encoding/json %s", s, got, want)
		}
	})
}

// TestMarshalNoEscape: json.Marshal's bytes except that "<", ">" and "&"
// are not escaped; no trailing newline; an unencodable value is an error.
func TestMarshalNoEscape(t *testing.T) {
	v := map[string]any{"a": "<b> & c", "n": []int{1, 2}}
	got, err := MarshalNoEscape(v)
	if err != nil || string(got) != `{"a":"<b> & c","n":[1,2]}` {
		t.Fatalf("got %s, %v", got, err)
	}
	if _, err := MarshalNoEscape(func() {}); err == nil {
		t.Fatal("a func encoded")
	}
}
