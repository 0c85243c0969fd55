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
		if s[i] < utf8.RuneSelf {
			i++
			continue
		}
		w, bad := sequenceAt(s, i)
		if bad {
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
		if s[i] < utf8.RuneSelf {
			i++
			continue
		}
		w, bad := sequenceAt(s, i)
		if bad {
			dst = append(dst, s[start:i]...)
			dst = append(dst, replacement...)
			start = i + 1
		}
		i += w
	}
	return append(dst, s[start:]...)
}

// sequenceAt returns the length of the sequence at s[i], a non-ASCII
// byte, and whether it is one invalid byte. A byte that no valid sequence
// starts with (a continuation byte, 0xC0, 0xC1, 0xF5 and above) is decided
// without a decode: dense invalid text is mostly such bytes.
func sequenceAt(s string, i int) (w int, bad bool) {
	if b := s[i]; b < 0xC2 || b > 0xF4 {
		return 1, true
	}
	r, w := utf8.DecodeRuneInString(s[i:])
	return w, r == utf8.RuneError && w == 1
}

// validChunk is how many bytes of invalid text WriteValid repairs per
// write: a few writes per chunk instead of two per invalid byte, which on
// text of alternating valid and invalid bytes cost more than the repair.
const validChunk = 32 << 10

// WriteValid writes s to w with each invalid byte written as U+FFFD.
// Valid text is written as it is, in one write and without a copy.
func WriteValid(w io.Writer, s string) error {
	if utf8.ValidString(s) {
		_, err := io.WriteString(w, s)
		return err
	}
	return writeValidChunks(w, s, validChunk)
}

// writeValidChunks writes s repaired, about chunk bytes of s at a time
// (chunk ≥ utf8.UTFMax), each chunk repaired as the whole text would be.
func writeValidChunks(w io.Writer, s string, chunk int) error {
	buf := make([]byte, 0, chunk*len(replacement))
	for len(s) > 0 {
		n := len(s)
		if n > chunk {
			n = cut(s, chunk)
		}
		buf = AppendValid(buf[:0], s[:n])
		if _, err := w.Write(buf); err != nil {
			return err
		}
		s = s[n:]
	}
	return nil
}

// cut returns where s may be split at or just before n (0 < n < len(s))
// without splitting a valid sequence: before the sequence when one spans
// n, else n.
func cut(s string, n int) int {
	for k := 1; k < utf8.UTFMax && k < n; k++ {
		if b := s[n-k]; utf8.RuneStart(b) {
			if _, w := utf8.DecodeRuneInString(s[n-k:]); w > k {
				return n - k
			}
			return n
		}
	}
	return n
}
