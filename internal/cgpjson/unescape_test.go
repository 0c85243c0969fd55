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
		// Where Unescape decodes, UnescapeLoose decodes the same; where it
		// declines, UnescapeLoose still returns, keeping what it cannot
		// decode.
		if loose := UnescapeLoose(raw); ok && loose != got {
			t.Fatalf("UnescapeLoose(%q) = %q, Unescape %q", raw, loose, got)
		}
	})
}

// A backslash that starts no escape is kept, and the escapes around it are
// decoded all the same.
func TestUnescapeLooseKeepsStrayBackslashes(t *testing.T) {
	for raw, want := range map[string]string{
		`C:\qemu \u0041\/b`: `C:\qemu A/b`,
		`\q\"x\`:            `\q"x\`,
		`\ud83d alone`:      `\ud83d alone`,
		`\ud83d\ude00!`:     "\U0001F600!",
	} {
		if got := UnescapeLoose(raw); got != want {
			t.Errorf("UnescapeLoose(%q) = %q, want %q", raw, got, want)
		}
	}
}
