package prompt

import "strings"

// The text before the nonce in an untrusted block's opening and closing tags.
const (
	openPrefix  = `<untrusted nonce="`
	closePrefix = `</untrusted nonce="`
	nonceAttr   = `untrusted nonce="`
)

// zeroNonce replaces a nonce when masking.
const zeroNonce = "00000000000000000000000000000000"

// MaskNonces returns s with the nonce of every untrusted block tag replaced
// by 32 zeros, so two renderings of one prompt with different nonces compare
// equal (record/replay fixtures, golden files, cache keys of a test double).
//
// Only real tags are masked: `<untrusted nonce="N">` and
// `</untrusted nonce="N">` with N made of 32 lowercase hex
// characters. Untrusted content cannot contain such a tag once rendered
// (a backslash is inserted after its "<"), so a nonce quoted in content, even one
// that looks valid, stays as it is and two prompts that differ only there
// still differ after masking. A tag the workflow wrote itself in a text
// part is masked like a real one.
//
// MaskNonces returns s itself when there is nothing to mask. Its cost is
// linear in len(s).
func MaskNonces(s string) string {
	var b strings.Builder
	start := 0 // s[start:] is not copied to b yet
	for from := 0; ; {
		k := strings.Index(s[from:], nonceAttr)
		if k < 0 {
			break
		}
		at := from + k // index of nonceAttr
		n := at + len(nonceAttr)
		from = n
		realTag := at >= 1 && s[at-1] == '<' || at >= 2 && s[at-2] == '<' && s[at-1] == '/'
		if !realTag || len(s) < n+nonceLen+2 || !validNonce(s[n:n+nonceLen]) || s[n+nonceLen:n+nonceLen+2] != `">` {
			continue
		}
		if s[n:n+nonceLen] == zeroNonce {
			continue
		}
		if b.Len() == 0 {
			b.Grow(len(s))
		}
		b.WriteString(s[start:n])
		b.WriteString(zeroNonce)
		start = n + nonceLen
		from = start
	}
	if start == 0 {
		return s
	}
	b.WriteString(s[start:])
	return b.String()
}
