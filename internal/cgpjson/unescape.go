package cgpjson

import (
	"unicode/utf16"
	"unicode/utf8"
)

// Unescape decodes the escapes of a JSON string literal's inner bytes, as
// encoding/json does. It declines (ok false) a malformed escape and a
// surrogate escape that is not half of a pair (encoding/json turns that
// into U+FFFD): a caller's slow path through encoding/json keeps that rule.
// raw must be valid UTF-8 (the callers have checked their whole input).
// It is the one JSON string decoder of the fast paths (the HTTP server's
// request reader, window's request scanner).
func Unescape(raw string) (string, bool) {
	out := make([]byte, 0, len(raw))
	for i := 0; i < len(raw); {
		c := raw[i]
		if c != '\\' {
			out = append(out, c)
			i++
			continue
		}
		r, n := escapeAt(raw, i)
		if n == 0 {
			return "", false
		}
		out = utf8.AppendRune(out, r)
		i += n
	}
	return string(out), true
}

// UnescapeLoose is Unescape for text that is not known to be a JSON
// string (a provider's error body, its stderr): each well-formed escape is
// decoded and any other backslash kept as it is, so that one stray
// backslash cannot hide the escapes around it.
func UnescapeLoose(text string) string {
	out := make([]byte, 0, len(text))
	for i := 0; i < len(text); {
		if text[i] == '\\' {
			if r, n := escapeAt(text, i); n > 0 {
				out = utf8.AppendRune(out, r)
				i += n
				continue
			}
		}
		out = append(out, text[i])
		i++
	}
	return string(out)
}

// escapeAt decodes the escape whose backslash is raw[i]: the rune and the
// bytes it spans, 0 for a malformed escape or an unpaired surrogate.
func escapeAt(raw string, i int) (rune, int) {
	if i+1 >= len(raw) {
		return 0, 0
	}
	switch raw[i+1] {
	case '"', '\\', '/':
		return rune(raw[i+1]), 2
	case 'b':
		return '\b', 2
	case 'f':
		return '\f', 2
	case 'n':
		return '\n', 2
	case 'r':
		return '\r', 2
	case 't':
		return '\t', 2
	case 'u':
		ru, ok := hex4(raw, i+2)
		if !ok {
			return 0, 0
		}
		if !utf16.IsSurrogate(ru) {
			return ru, 6
		}
		lo, ok := hex4(raw, i+8)
		if !ok || raw[i+6] != '\\' || raw[i+7] != 'u' {
			return 0, 0
		}
		if ru = utf16.DecodeRune(ru, lo); ru == utf8.RuneError {
			return 0, 0
		}
		return ru, 12
	}
	return 0, 0
}

// hex4 reads four hex digits at raw[i:].
func hex4(raw string, i int) (rune, bool) {
	if i+4 > len(raw) {
		return 0, false
	}
	var v rune
	for _, c := range []byte(raw[i : i+4]) {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c -= 'a' - 10
		case 'A' <= c && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, false
		}
		v = v<<4 | rune(c)
	}
	return v, true
}
