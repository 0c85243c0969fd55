package cgpjson

import (
	"encoding/json"
	"testing"
	"unicode/utf8"
)

// literalShaped reports whether raw could sit between a literal's quotes
// as a scanner delimits it: no bare quote, no control byte. Such a body
// that encoding/json refuses has a bad escape.
func literalShaped(raw string) bool {
	for i := 0; i < len(raw); i++ {
		switch c := raw[i]; {
		case c < 0x20:
			return false
		case c == '\\':
			i++
		case c == '"':
			return false
		}
	}
	return true
}

// FuzzUnescapeMatchesJSON holds the fast paths' one string decoder to
// encoding/json: whatever it accepts decodes to encoding/json's string,
// and every escape-free valid body is accepted.
func FuzzUnescapeMatchesJSON(f *testing.F) {
	for _, s := range []string{``, `plain`, `a\"b\\c\/d`, `\b\f\n\r\t`, `\u00e9\u4e16`, `\ud83d\ude00`, `\ud83d`, `\ude00x`,
		`\u12`, `\x`, `\`, `\uD83D\uDE00`, "é 世界"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		if !utf8.ValidString(raw) {
			return
		}
		got, ok := Unescape(raw)
		var want string
		err := json.Unmarshal([]byte(`"`+raw+`"`), &want)
		switch {
		case err != nil && literalShaped(raw) && ok:
			t.Fatalf("Unescape(%q) = %q, but encoding/json refuses it: %v", raw, got, err)
		case err == nil && ok && got != want:
			t.Fatalf("Unescape(%q) = %q, encoding/json %q", raw, got, want)
		}
	})
}
