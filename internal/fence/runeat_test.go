package fence

import (
	"testing"
	"unicode/utf8"
)

// runeAt decodes as utf8.DecodeRuneInString does, invalid bytes included
// (one U+FFFD per byte).
func TestRuneAtMatchesTheStandardLibrary(t *testing.T) {
	check := func(s string) {
		r, w := runeAt(s, 0)
		wr, ww := utf8.DecodeRuneInString(s)
		if r != wr || w != ww {
			t.Fatalf("runeAt(%+q) = %U, %d; want %U, %d", s, r, w, wr, ww)
		}
	}
	for r := rune(0x80); r <= utf8.MaxRune; r++ {
		if s := string(r); len(s) > 0 {
			check(s)
			check(s[:len(s)-1])
			check(s + "x")
		}
	}
	var b [4]byte
	for c0 := 0x80; c0 < 0x100; c0++ {
		for _, c1 := range []byte{0x00, 0x7F, 0x80, 0x8F, 0x90, 0x9F, 0xA0, 0xBF, 0xC0, 0xFF} {
			for _, c2 := range []byte{0x41, 0x80, 0xBF, 0xC0} {
				for _, c3 := range []byte{0x41, 0x80, 0xBF, 0xC0} {
					b = [4]byte{byte(c0), c1, c2, c3}
					for n := 1; n <= 4; n++ {
						check(string(b[:n]))
					}
				}
			}
		}
	}
}
