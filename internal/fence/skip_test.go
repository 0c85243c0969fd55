package fence

import (
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"
)

// skipPlain agrees with a byte-at-a-time reading of its contract on every
// alignment and every special byte.
func TestSkipPlain(t *testing.T) {
	specials := []byte{'<', '&', '\\', '%', 0x80, 0xE6, 0xFF}
	for n := 0; n <= 40; n++ {
		for pos := -1; pos < n; pos++ {
			for _, sp := range specials {
				b := []byte(strings.Repeat("a$ !'=;[]{}#", 4)[:n])
				want := n
				if pos >= 0 {
					b[pos] = sp
					want = pos
				}
				s := string(b)
				got := skipPlain(s, 0)
				// It may stop early only at a '$'.
				for got < want && s[got] == '$' {
					got = skipPlain(s, got+1)
				}
				if got != want {
					t.Fatalf("skipPlain(%q) = %d, want %d", s, got, want)
				}
			}
		}
	}
}

// firstTrigger is skipPlain's contract read a byte at a time: the first
// offset at or after i whose byte may start a less-than unit, or len(s).
func firstTrigger(s string, i int) int {
	for ; i < len(s); i++ {
		if c := s[i]; c == '<' || c == '&' || c == '\\' || c == '%' || c >= utf8.RuneSelf {
			return i
		}
	}
	return i
}

// The skipper agrees with firstTrigger on long texts with sparse and dense
// triggers, whatever steps its caller takes (it may stop early only at a
// '$'), across the boundary of its word-at-a-time probe and after the
// positions it remembers have been passed.
func TestSkipper(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	specials := []byte{'<', '&', '\\', '%', 0x80, 0xC3, 0xE6, 0xFF, '$'}
	for iter := 0; iter < 3000; iter++ {
		n := rng.IntN(700)
		b := []byte(strings.Repeat("plain text, no triggers here: x = y + 1; ", 20)[:n])
		for range rng.IntN(6) {
			if n > 0 {
				b[rng.IntN(n)] = specials[rng.IntN(len(specials))]
			}
		}
		if iter%5 == 0 && n > 0 { // a dense run somewhere
			at := rng.IntN(n)
			for k := at; k < min(n, at+rng.IntN(40)); k += 1 + rng.IntN(3) {
				b[k] = specials[rng.IntN(len(specials))]
			}
		}
		s := string(b)
		var sk skipper
		for i := 0; i <= len(s); {
			want := firstTrigger(s, i)
			got := sk.skip(s, i)
			for got < want && s[got] == '$' {
				got = sk.skip(s, got+1)
			}
			if got != want {
				t.Fatalf("iter %d: skip(%q, %d) = %d, want %d", iter, s, i, got, want)
			}
			// Step like Scan: past the trigger, sometimes far past it
			// (a look-ahead that consumed text).
			i = got + 1 + rng.IntN(3)*rng.IntN(100)
		}
	}
}
