package cgpjson

// plainUntil returns the index of the first byte at or after i that a JSON
// string cannot carry as it is: '"', '\\', a byte below 0x20, and, when
// stopNonASCII is set, any byte of a multi-byte UTF-8 sequence. It returns
// len(s) when there is none.
//
// Both the encoder and the server's request reader spend most of their time
// walking long runs of plain text, so the walk tests eight bytes per step:
// a word with none of those bytes is skipped whole, and the first word that
// has one is searched byte by byte.
func plainUntil[T ~string | ~[]byte](s T, i int, stopNonASCII bool) int {
	const (
		ones  = 0x0101010101010101
		highs = 0x8080808080808080
	)
	var extra uint64 // the high bit of every byte, when those stop the walk
	if stopNonASCII {
		extra = highs
	}
	for ; i+8 <= len(s); i += 8 {
		w := s[i : i+8] // one bounds check, so the eight loads become one
		x := uint64(w[0]) | uint64(w[1])<<8 | uint64(w[2])<<16 | uint64(w[3])<<24 |
			uint64(w[4])<<32 | uint64(w[5])<<40 | uint64(w[6])<<48 | uint64(w[7])<<56
		// zero(v) is non-zero exactly when some byte of v is zero.
		quote := x ^ (ones * '"')
		slash := x ^ (ones * '\\')
		special := (x-ones*0x20)&^x | (quote-ones)&^quote | (slash-ones)&^slash
		if (special&highs)|(x&extra) != 0 {
			break
		}
	}
	for ; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c == '"' || c == '\\' || (stopNonASCII && c >= 0x80) {
			return i
		}
	}
	return len(s)
}
