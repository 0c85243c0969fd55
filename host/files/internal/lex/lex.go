// Package lex reads text the way the files index does: it splits lines and
// tells the parts of an identifier apart. The index and its frozen legacy
// copy (kept for the relevance evaluation) both use it, so that the two
// read text from one piece of code and cannot drift apart by accident.
package lex

import (
	"bytes"
	"unicode"
	"unicode/utf8"
)

// Line is one line of a text: its offset and its length in bytes, its LF
// included.
type Line struct{ Off, Len int }

// SplitLines splits data on LF, each line keeping its LF; a trailing LF
// does not start an empty line (the protocol's L<a>-<b> line model).
func SplitLines(data []byte) []Line {
	var out []Line
	off := 0
	for off < len(data) {
		i := bytes.IndexByte(data[off:], '\n')
		if i < 0 {
			out = append(out, Line{off, len(data) - off})
			break
		}
		out = append(out, Line{off, i + 1})
		off += i + 1
	}
	return out
}

// isUpper reports whether r is an upper-case letter, without a table
// look-up for ASCII.
func isUpper(r rune) bool {
	if r < utf8.RuneSelf {
		return 'A' <= r && r <= 'Z'
	}
	return unicode.IsUpper(r)
}

// isLower reports whether r is a lower-case letter, without a table
// look-up for ASCII.
func isLower(r rune) bool {
	if r < utf8.RuneSelf {
		return 'a' <= r && r <= 'z'
	}
	return unicode.IsLower(r)
}

// IsBoundary reports whether a new part of the word w starts at w[i], for
// i > 0: "budgetSplit" at S, "HTTPServer" at the S of Server.
func IsBoundary(w []rune, i int) bool {
	if !isUpper(w[i]) {
		return false
	}
	return isLower(w[i-1]) || (i+1 < len(w) && isLower(w[i+1]) && isUpper(w[i-1]))
}

// AppendLower appends rs, lower-cased, to dst as UTF-8.
func AppendLower(dst []byte, rs []rune) []byte {
	for _, r := range rs {
		if r < utf8.RuneSelf {
			if 'A' <= r && r <= 'Z' {
				r += 'a' - 'A'
			}
			dst = append(dst, byte(r))
			continue
		}
		dst = utf8.AppendRune(dst, unicode.ToLower(r))
	}
	return dst
}
