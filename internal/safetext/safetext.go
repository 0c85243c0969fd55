// Package safetext is the one place ctxkit decides how text written by a
// provider is printed to a person: in the CLI's text audit, in error lines
// and in the service's logs. A provider controls its error messages, its
// stderr, its announced name and the ids of its frames; printed raw, a line
// break in any of them would forge an audit line and an escape sequence
// would drive the reader's terminal.
//
// Quote is for a single field (a name, an id): it is printed bare when it
// reads as one token and Go-quoted otherwise. Escape is for running text (an
// error message): it keeps spaces and quotes and writes every byte that
// could end a line or control a terminal as a Go escape. Neither ever
// returns a line break, a C0 or C1 control, DEL, a Unicode format or
// separator character, or invalid UTF-8.
package safetext

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// Quote returns s bare when every rune is printable, not a space and not a
// quote or backslash, and strconv.Quote(s) otherwise (the empty string too,
// so that an empty field still shows).
func Quote(s string) string {
	if s == "" {
		return `""`
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= utf8.RuneSelf {
			return quoteRunes(s)
		}
		if c <= ' ' || c == '"' || c == '\\' || c == 0x7F {
			return strconv.Quote(s)
		}
	}
	return s
}

func quoteRunes(s string) string {
	for _, r := range s {
		if r <= ' ' || r == '"' || r == '\\' || r == 0x7F || r == utf8.RuneError || !strconv.IsPrint(r) {
			return strconv.Quote(s)
		}
	}
	return s
}

// Escape returns s with each byte or rune that is not printable (strconv.IsPrint:
// controls, line and paragraph separators, format characters such as the
// bidirectional overrides, spaces other than U+0020) and each invalid UTF-8
// byte written as a Go escape (\n, \t, \x1b, \u202e, \xff). Printable text,
// spaces, quotes and backslashes are kept, so an error message stays
// readable. A string that needs nothing is returned as is, without
// allocating.
func Escape(s string) string {
	i := cleanPrefix(s)
	if i == len(s) {
		return s
	}
	b := make([]byte, 0, len(s)+16)
	b = append(b, s[:i]...)
	for i < len(s) {
		c := s[i]
		if c >= ' ' && c < 0x7F {
			b = append(b, c)
			i++
			continue
		}
		r, size := rune(c), 1
		if c >= utf8.RuneSelf {
			r, size = utf8.DecodeRuneInString(s[i:])
		}
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(b, '\\', 'x', hexDigits[c>>4], hexDigits[c&0xF])
		case c >= utf8.RuneSelf && strconv.IsPrint(r):
			b = append(b, s[i:i+size]...)
		default:
			// AppendQuoteRuneToASCII spells \n, \t, \x1b, \u202e ...;
			// its quotes are dropped.
			var q [16]byte
			e := strconv.AppendQuoteRuneToASCII(q[:0], r)
			b = append(b, e[1:len(e)-1]...)
		}
		i += size
	}
	return string(b)
}

// ForTerminal returns text shown to a person on a terminal (a prompt)
// with its line feeds and tabs kept and every other byte or rune Escape
// rewrites written as Escape writes it: the text can then neither move the
// cursor (a carriage return, an escape sequence), nor reorder what is shown
// (a bidirectional override), nor change the terminal's state. Text that
// needs nothing is returned as is.
func ForTerminal(s string) string {
	if cleanPrefixKeeping(s) == len(s) {
		return s
	}
	b := make([]byte, 0, len(s)+16)
	for len(s) > 0 {
		i := strings.IndexAny(s, "\n\t")
		if i < 0 {
			return string(append(b, Escape(s)...))
		}
		b = append(b, Escape(s[:i])...)
		b = append(b, s[i])
		s = s[i+1:]
	}
	return string(b)
}

// cleanPrefixKeeping is cleanPrefix passing over line feeds and tabs too.
func cleanPrefixKeeping(s string) int {
	n := 0
	for {
		i := cleanPrefix(s[n:])
		n += i
		if n == len(s) || (s[n] != '\n' && s[n] != '\t') {
			return n
		}
		n++
	}
}

// cleanPrefix returns the length of the longest prefix of s that Escape
// keeps unchanged.
func cleanPrefix(s string) int {
	i := 0
	for i < len(s) {
		c := s[i]
		if c >= ' ' && c < 0x7F {
			i++
			continue
		}
		if c < utf8.RuneSelf {
			return i
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if (r == utf8.RuneError && size == 1) || !strconv.IsPrint(r) {
			return i
		}
		i += size
	}
	return i
}

const hexDigits = "0123456789abcdef"
