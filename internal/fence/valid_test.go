package fence

import (
	"errors"
	"strings"
	"testing"
)

// repaired is what a Go reader makes of s: each byte that starts no valid
// sequence becomes U+FFFD (ranging over a string decodes it that way).
func repaired(s string) string { return string([]rune(s)) }

func checkValid(t *testing.T, s string) {
	t.Helper()
	want := repaired(s)
	if got := string(AppendValid(nil, s)); got != want {
		t.Fatalf("AppendValid(%q) = %q, want %q", s, got, want)
	}
	if got := ValidLen(s); got != len(want) {
		t.Fatalf("ValidLen(%q) = %d, want %d", s, got, len(want))
	}
	var b strings.Builder
	if err := WriteValid(&b, s); err != nil || b.String() != want {
		t.Fatalf("WriteValid(%q) = %q, %v; want %q", s, b.String(), err, want)
	}
	// Small chunks put a cut at every position of short texts.
	for chunk := 4; chunk <= 9; chunk++ {
		b.Reset()
		if err := writeValidChunks(&b, s, chunk); err != nil || b.String() != want {
			t.Fatalf("writeValidChunks(%q, %d) = %q, %v; want %q", s, chunk, b.String(), err, want)
		}
	}
}

func TestWriteValidRepairsAsAReaderDoes(t *testing.T) {
	for _, s := range []string{
		"", "plain", "<\xff<\xff", "\xef\xbc", "\xef\xbc\u200b\x9c",
		"abc\U0001F600def\u65e5", "ab\xf0\x9f\x98\x80\x80\x80\x80\x80",
		"\xe2\x80", "xyz\xe2\x80\x80", "\xc0\x80\xed\xa0\x80\xf4\x90\x80\x80",
		strings.Repeat("a\xffb\u00e9", 50),
	} {
		checkValid(t, s)
	}
}

// FuzzValid checks the repair against the reader's and chunked writes
// against the whole: a chunk that ended inside a sequence would turn valid
// bytes into U+FFFD.
func FuzzValid(f *testing.F) {
	f.Add("<\xff")
	f.Add("abc\xf0\x9f\x98\x80")
	f.Fuzz(checkValid)
}

type failingWriter struct{ writes int }

func (w *failingWriter) Write(p []byte) (int, error) {
	w.writes++
	return 0, errors.New("disk full")
}

func TestWriteValidStopsAtTheFirstError(t *testing.T) {
	w := &failingWriter{}
	if err := writeValidChunks(w, strings.Repeat("\xff", 100), 8); err == nil || w.writes != 1 {
		t.Fatalf("err %v after %d writes, want the error after one", err, w.writes)
	}
}

func TestWriteValidWritesFewTimes(t *testing.T) {
	w := &countWriter{}
	s := strings.Repeat("<\xff", 1<<16)
	if err := WriteValid(w, s); err != nil {
		t.Fatal(err)
	}
	if max := len(s)/validChunk + 2; w.writes > max {
		t.Fatalf("%d writes for %d bytes, want at most %d", w.writes, len(s), max)
	}
}

type countWriter struct{ writes, n int }

func (w *countWriter) Write(p []byte) (int, error) {
	w.writes++
	w.n += len(p)
	return len(p), nil
}
