package fence

import (
	"io"
	"unicode/utf8"
)

// Invalid UTF-8 is written as U+FFFD, one for each byte that starts no
// valid sequence (as encoding/json and utf8.DecodeRuneInString read it).
// Kept raw, fragments of a sequence could fuse into a character once a
// reader deletes what stands between them: "\xef\xbc" + U+200B + "\x9c"
// is U+FF1C (a less-than look-alike) to a reader who strips format
// characters byte-wise and then applies NFKC, and no scan of the text as
// written can know which fusions a reader will make. In valid UTF-8,
// deleting whole characters never forms a new one.

const replacement = "\uFFFD"

// ValidLen is len(AppendValid(nil, s)).
func ValidLen(s string) int {
	if utf8.ValidString(s) {
		return len(s)
	}
	n := len(s)
	for i := 0; i < len(s); {
		r, w := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && w == 1 {
			n += len(replacement) - 1
		}
		i += w
	}
	return n
}

// AppendValid appends s to dst with each invalid byte written as U+FFFD.
func AppendValid(dst []byte, s string) []byte {
	if utf8.ValidString(s) {
		return append(dst, s...)
	}
	start := 0
	for i := 0; i < len(s); {
		r, w := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && w == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, replacement...)
			start = i + 1
		}
		i += w
	}
	return append(dst, s[start:]...)
}

// WriteValid writes s to w with each invalid byte written as U+FFFD.
func WriteValid(w io.StringWriter, s string) error {
	if utf8.ValidString(s) {
		_, err := w.WriteString(s)
		return err
	}
	start := 0
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 {
			if _, err := w.WriteString(s[start:i]); err != nil {
				return err
			}
			if _, err := w.WriteString(replacement); err != nil {
				return err
			}
			start = i + 1
		}
		i += n
	}
	_, err := w.WriteString(s[start:])
	return err
}
