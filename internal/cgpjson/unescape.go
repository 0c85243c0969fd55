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
		if i+1 >= len(raw) {
			return "", false
		}
		switch raw[i+1] {
		case '"', '\\', '/':
			out = append(out, raw[i+1])
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			ru, ok := hex4(raw, i+2)
			if !ok {
				return "", false
			}
			if utf16.IsSurrogate(ru) {
				lo, ok := hex4(raw, i+8)
				if !ok || raw[i+6] != '\\' || raw[i+7] != 'u' {
					return "", false
				}
				ru = utf16.DecodeRune(ru, lo)
				if ru == utf8.RuneError {
					return "", false
				}
				i += 6
			}
			out = utf8.AppendRune(out, ru)
			i += 6
			continue
		default:
			return "", false
		}
		i += 2
	}
	return string(out), true
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
