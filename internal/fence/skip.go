package fence

import (
	"math/bits"
	"strings"
	"unicode/utf8"
)

// The benign path: finding the next byte that may start a less-than unit
// ('<', '&', '\\', '%' or a non-ASCII byte) at memory speed.

// Word-at-a-time constants for skipPlain.
const (
	lsb = 0x0101010101010101
	msb = 0x8080808080808080
)

// skipPlain returns the offset of the first byte at or after i that may
// start a less-than unit, or len(s); it may also stop early at a '$', which
// the caller skips. It tests eight bytes at a time: a byte equal to c is a
// zero byte of x^(c*lsb), and (v-lsb) & ^v & msb flags the lowest zero byte
// of v exactly (higher flags may be spurious, the lowest never is).
func skipPlain(s string, i int) int {
	const (
		lt  = '<' * lsb
		bsl = '\\' * lsb
		dol = '$' * lsb
	)
	for ; i+8 <= len(s); i += 8 {
		x := load64(s, i)
		// x^'$' is below 3 for '$', '%' and '&': one test finds '%' and '&'
		// (a '$' is a harmless false candidate the caller steps over).
		a, b, c := x^lt, x^bsl, x^dol
		t := (x | (a-lsb)&^a | (b-lsb)&^b | (c-3*lsb)&^c) & msb
		if t != 0 {
			return i + bits.TrailingZeros64(t)/8
		}
	}
	for ; i < len(s); i++ {
		if isTrigger(s[i]) {
			return i
		}
	}
	return i
}

func isTrigger(c byte) bool {
	return c == '<' || c == '&' || c == '\\' || c == '%' || c >= utf8.RuneSelf
}

// skipper finds the next byte of s that may start a less-than unit, like
// skipPlain, for a caller whose offsets never decrease. After a short
// word-at-a-time probe it switches to strings.IndexByte (vectorised by the
// runtime) for each ASCII trigger and remembers where each one next occurs,
// so text with few triggers is read at memory speed and no byte is searched
// for the same trigger twice.
type skipper struct {
	// next[k] is the offset of the first triggers[k] at or after the
	// offset it was searched from, or len(s) when there is none; it stays
	// exact while the caller's offset has not passed it. The zero value
	// (every next 0) is "not searched yet": 0 is below the end of any probe.
	next [len(triggers)]int
}

// triggers are the ASCII bytes that may start a less-than unit.
const triggers = "<&\\%"

// probe is how far skip reads a word at a time before it searches.
const probe = 64

// skip returns the offset of the first byte at or after i that may start a
// less-than unit, or len(s); it may stop early at a '$' (see skipPlain).
// Successive calls must pass the same s and non-decreasing i.
func (k *skipper) skip(s string, i int) int {
	end := i + probe
	if end >= len(s) {
		return skipPlain(s, i)
	}
	if j := skipPlain(s[:end], i); j < end {
		return j
	}
	m := len(s)
	for t := range k.next {
		if k.next[t] < end {
			k.next[t] = len(s)
			if x := strings.IndexByte(s[end:], triggers[t]); x >= 0 {
				k.next[t] = end + x
			}
		}
		m = min(m, k.next[t])
	}
	return nonASCII(s, end, m)
}

// nonASCII returns the offset of the first byte of s[i:end] that is not
// ASCII, or end.
func nonASCII(s string, i, end int) int {
	for ; i+32 <= end; i += 32 {
		w := s[i : i+32]
		if (load64(w, 0)|load64(w, 8)|load64(w, 16)|load64(w, 24))&msb != 0 {
			break
		}
	}
	for ; i+8 <= end; i += 8 {
		if t := load64(s, i) & msb; t != 0 {
			return i + bits.TrailingZeros64(t)/8
		}
	}
	for ; i < end; i++ {
		if s[i] >= utf8.RuneSelf {
			return i
		}
	}
	return end
}

// load64 reads s[i:i+8] as a little-endian word (one load once compiled).
func load64(s string, i int) uint64 {
	w := s[i : i+8] // one bounds check; the eight indexes below need none
	return uint64(w[0]) | uint64(w[1])<<8 | uint64(w[2])<<16 | uint64(w[3])<<24 |
		uint64(w[4])<<32 | uint64(w[5])<<40 | uint64(w[6])<<48 | uint64(w[7])<<56
}
