package cgpjson

import (
	"strings"
	"testing"
)

// plainUntilByBytes is plainUntil's definition, one byte at a time.
func plainUntilByBytes(s string, i int, stopNonASCII bool) int {
	for ; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c == '"' || c == '\\' || (stopNonASCII && c >= 0x80) {
			return i
		}
	}
	return len(s)
}

func TestPlainUntil(t *testing.T) {
	long := strings.Repeat("plain text ", 5)
	for _, s := range []string{"", "a", long, long + `"`, long + `\`, long + "\x1f", long + "\x00x", long + "é",
		`"` + long, "\x7f\x20\x21" + long, strings.Repeat("\xff", 17), "1234567\n", "12345678\n", "\x20\x1f"} {
		for _, stop := range []bool{false, true} {
			for i := 0; i <= len(s); i++ {
				want := plainUntilByBytes(s, i, stop)
				if got := plainUntil(s, i, stop); got != want {
					t.Errorf("plainUntil(%q, %d, %v) = %d, want %d", s, i, stop, got, want)
				}
				if got := plainUntil([]byte(s), i, stop); got != want {
					t.Errorf("plainUntil([]byte(%q), %d, %v) = %d, want %d", s, i, stop, got, want)
				}
			}
		}
	}
}

// FuzzPlainUntil holds the eight-bytes-a-step walk to the byte-by-byte one.
func FuzzPlainUntil(f *testing.F) {
	f.Add("0123456789abcdef\"", uint8(0), false)
	f.Add("0123456789abcdef\x80", uint8(3), true)
	f.Add("\\\x1f\x20 ~\x7f", uint8(1), true)
	f.Fuzz(func(t *testing.T, s string, start uint8, stop bool) {
		i := int(start) % (len(s) + 1)
		if got, want := plainUntil(s, i, stop), plainUntilByBytes(s, i, stop); got != want {
			t.Fatalf("plainUntil(%q, %d, %v) = %d, want %d", s, i, stop, got, want)
		}
	})
}

func BenchmarkPlainUntil(b *testing.B) {
	s := strings.Repeat("Composition packs frames by rendered cost under one budget. ", 20)
	bs := []byte(s)
	b.Run("string", func(b *testing.B) {
		b.SetBytes(int64(len(s)))
		for b.Loop() {
			if plainUntil(s, 0, true) != len(s) {
				b.Fatal("stopped early")
			}
		}
	})
	b.Run("bytes", func(b *testing.B) {
		b.SetBytes(int64(len(bs)))
		for b.Loop() {
			if plainUntil(bs, 0, false) != len(bs) {
				b.Fatal("stopped early")
			}
		}
	})
}
