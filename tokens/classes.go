package tokens

import (
	"sync"
	"unicode"
	"unicode/utf8"
)

// Character classes of the pre-tokenisers' regular expressions, one bit
// each. The definitions are those of the Rust regex crate that tiktoken
// uses: \p{L}, \p{N} and \p{M} are general categories and \s is the
// Unicode White_Space property (Go's unicode.IsSpace is the same set).
const (
	clLetter  = 1 << iota // \p{L}
	clNumber              // \p{N}
	clSpace               // \s
	clUpper               // [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}] (o200k_base)
	clLower               // [\p{Ll}\p{Lm}\p{Lo}\p{M}] (o200k_base)
	clNewline             // \r or \n
)

func classify(r rune) uint8 {
	var c uint8
	switch {
	case unicode.Is(unicode.Lu, r), unicode.Is(unicode.Lt, r):
		c = clLetter | clUpper
	case unicode.Is(unicode.Ll, r):
		c = clLetter | clLower
	case unicode.Is(unicode.Lm, r), unicode.Is(unicode.Lo, r):
		c = clLetter | clUpper | clLower
	case unicode.IsMark(r):
		c = clUpper | clLower
	case unicode.IsNumber(r):
		c = clNumber
	}
	if unicode.IsSpace(r) {
		c |= clSpace
	}
	if r == '\r' || r == '\n' {
		c |= clNewline
	}
	return c
}

// asciiClass holds the classes of the ASCII characters. It is computed
// once and never written afterwards.
var asciiClass = func() (t [utf8.RuneSelf]uint8) {
	for r := range rune(utf8.RuneSelf) {
		t[r] = classify(r)
	}
	return t
}()

// bmpClasses holds the classes of the Basic Multilingual Plane, built on
// first use (about 64 KB); other planes are classified on the fly.
var bmpClasses struct {
	once sync.Once
	t    []uint8
}

func bmpTable() []uint8 {
	bmpClasses.once.Do(func() {
		t := make([]uint8, 0x10000)
		for r := range rune(0x10000) {
			t[r] = classify(r)
		}
		bmpClasses.t = t
	})
	return bmpClasses.t
}

// scanner walks valid UTF-8 text by character class.
type scanner struct {
	s   string
	bmp []uint8
}

// at returns the class and the byte length of the character at s[i:].
// It is small enough to inline: most characters are ASCII.
func (sc *scanner) at(i int) (uint8, int) {
	b := sc.s[i]
	if b >= utf8.RuneSelf {
		return sc.atMultibyte(i)
	}
	return asciiClass[b&0x7f], 1
}

func (sc *scanner) atMultibyte(i int) (uint8, int) {
	r, n := utf8.DecodeRuneInString(sc.s[i:])
	if r < 0x10000 {
		return sc.bmp[r], n
	}
	return classify(r), n
}

// skip returns the end of the run of characters from i that have a class
// bit in want (any character when want is 0) and none in avoid.
func (sc *scanner) skip(i int, want, avoid uint8) int {
	for i < len(sc.s) {
		c, n := asciiClass[sc.s[i]&0x7f], 1 // at, inlined by hand
		if sc.s[i] >= utf8.RuneSelf {
			c, n = sc.atMultibyte(i)
		}
		if want != 0 && c&want == 0 || c&avoid != 0 {
			break
		}
		i += n
	}
	return i
}

// replaceInvalid returns s with every ill-formed UTF-8 subsequence
// replaced by U+FFFD, one per maximal subpart (Unicode's recommended
// practice, which Python's errors="replace", the WHATWG TextDecoder and
// Node.js follow).
func replaceInvalid(s string) []byte {
	out := make([]byte, 0, len(s)+16)
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if r != utf8.RuneError || n > 1 {
			out = append(out, s[i:i+n]...)
			i += n
			continue
		}
		out = append(out, "\uFFFD"...)
		i += maximalSubpart(s[i:])
	}
	return out
}

// maximalSubpart returns the length of the ill-formed sequence at the
// start of s: a lead byte and the continuation bytes that could still
// begin a well-formed character (Unicode table 3-7), or 1.
func maximalSubpart(s string) int {
	lo, hi := byte(0x80), byte(0xBF)
	need := 0
	switch c := s[0]; {
	case c >= 0xC2 && c <= 0xDF:
		need = 1
	case c == 0xE0:
		need, lo = 2, 0xA0
	case c >= 0xE1 && c <= 0xEC, c == 0xEE, c == 0xEF:
		need = 2
	case c == 0xED:
		need, hi = 2, 0x9F
	case c == 0xF0:
		need, lo = 3, 0x90
	case c >= 0xF1 && c <= 0xF3:
		need = 3
	case c == 0xF4:
		need, hi = 3, 0x8F
	default:
		return 1
	}
	k := 1
	for ; k <= need && k < len(s); k++ {
		if s[k] < lo || s[k] > hi {
			break
		}
		lo, hi = 0x80, 0xBF
	}
	return k
}
