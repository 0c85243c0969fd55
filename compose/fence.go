package compose

import (
	"unicode/utf8"

	"github.com/ctxkit/ctxkit/internal/fence"
)

// This file is the fence neutraliser: at every place where frame content
// (or an attribute value) could make a reader see a <frame> or </frame>
// token, it inserts a visible breaker. Nothing is deleted. Finding those
// places is package internal/fence's job (the scanner and its look-alike
// table, shared with package prompt); its doc lists the views and the
// compositions of views it covers.
//
// The breaker goes immediately after the less-than unit: a backslash, or two
// backslashes after a JSON escape so the JSON-decoded text still shows one.
// A backslash is stable under NFKC, is not a format character, is not part
// of any HTML reference, no decoder deletes it, and it is neither
// whitespace nor a slash, so the token stays broken in every view.

// frameScanner finds the fence tokens of "frame". It is immutable.
var frameScanner = fence.MustNew("frame", fence.Options{})

// scanFence reports, in increasing order, each byte offset of s at which a
// breaker must be inserted, with the breaker to insert there.
func scanFence(s string, emit func(at int, brk string)) {
	frameScanner.Scan(s, func(t fence.Token) { emit(t.End, t.Breaker()) })
}

// flagAttr marks the bytes that may be rewritten, or start a rewrite, in an
// attribute value.
var flagAttr = func() (t [256]bool) {
	for c := 0; c < 0x100; c++ {
		t[c] = c < 0x20 || c >= 0x7F || c == '"' || c == '>' || c == '<' || c == '&' || c == '\\' || c == '%'
	}
	return t
}()

// neutralizedLen is len(neutralize(s)), computed without building it.
func neutralizedLen(s string) int {
	n := fence.ValidLen(s)
	scanFence(s, func(_ int, brk string) { n += len(brk) })
	return n
}

// appendNeutralized appends s to dst with a breaker inserted at every fence
// token and each invalid byte written as U+FFFD (fence.AppendValid).
func appendNeutralized(dst []byte, s string) []byte {
	last := 0
	scanFence(s, func(at int, brk string) {
		dst = fence.AppendValid(dst, s[last:at])
		dst = append(dst, brk...)
		last = at
	})
	return fence.AppendValid(dst, s[last:])
}

// attribute escaping

// attrEscape returns the escaped form of one rune of an attribute value, or
// "" when the rune is written as is.
func attrEscape(r rune) string {
	switch r {
	case '&':
		return "&amp;"
	case '"':
		return "&quot;"
	case '<':
		return "&lt;"
	case '>':
		return "&gt;"
	case '\n', '\r', '\v', '\f', '\u0085', '\u2028', '\u2029':
		return " "
	// NFKC forms of the characters above: escaped so a normalised view of
	// the prompt cannot see a raw quote, angle bracket or ampersand.
	case '\uFF02':
		return "&#xFF02;"
	case '\uFF1C':
		return "&#xFF1C;"
	case '\uFE64':
		return "&#xFE64;"
	case '\uFF1E':
		return "&#xFF1E;"
	case '\uFE65':
		return "&#xFE65;"
	case '\uFF06':
		return "&#xFF06;"
	case '\uFE60':
		return "&#xFE60;"
	}
	if r < 0x20 || r == 0x7F || (r >= 0x80 && r <= 0x9F) {
		return controlRef(r)
	}
	if r >= utf8.RuneSelf && r != utf8.RuneError {
		// Any other compatibility form of the characters above (the
		// generated table knows the newest ones).
		if f, lookAlike := fence.Fold(r); !lookAlike && len(f) == 1 && (f[0] == '"' || f[0] == '<' || f[0] == '>' || f[0] == '&') {
			return hexRef(r)
		}
	}
	return ""
}

const hexDigits = "0123456789ABCDEF"

// controlRef spells a control character as a hex character reference.
func controlRef(r rune) string {
	if r < 0x10 {
		return "&#x" + hexDigits[r:r+1] + ";"
	}
	return "&#x" + hexDigits[r>>4:r>>4+1] + hexDigits[r&15:r&15+1] + ";"
}

// hexRef spells r as a hex character reference.
func hexRef(r rune) string {
	var b [12]byte
	n := len(b)
	b[n-1] = ';'
	n--
	for x := r; ; x >>= 4 {
		n--
		b[n] = hexDigits[x&15]
		if x < 16 {
			break
		}
	}
	n -= 3
	copy(b[n:], "&#x")
	return string(b[n:])
}

// escapedAttrLen is len(appendAttr(nil, v)).
func escapedAttrLen(v string) int {
	if attrIsPlain(v) {
		return len(v)
	}
	n := 0
	last := 0
	count := func(seg string) {
		for i := 0; i < len(seg); {
			c := seg[i]
			if c >= 0x20 && c < utf8.RuneSelf && c != '&' && c != '"' && c != '<' && c != '>' && c != 0x7F {
				n++
				i++
				continue
			}
			r, w := utf8.DecodeRuneInString(seg[i:])
			if w == 1 && r == utf8.RuneError {
				n += len(invalidAttr)
			} else if e := attrEscape(r); e != "" {
				n += len(e)
			} else {
				n += w
			}
			i += w
		}
	}
	scanFence(v, func(at int, brk string) {
		count(v[last:at])
		n += len(brk)
		last = at
	})
	count(v[last:])
	return n
}

// attrLen is escapedAttrLen(v), and whether v is written verbatim.
func attrLen(v string) (int, bool) {
	if attrIsPlain(v) {
		return len(v), true
	}
	return escapedAttrLen(v), false
}

// invalidAttr is what an invalid byte of an attribute value is written
// as: U+FFFD, as in content (fence.AppendValid says why).
const invalidAttr = "\uFFFD"

// attrIsPlain reports whether attribute value v is written verbatim: no
// byte of it is escaped, rewritten or can start a fence token.
func attrIsPlain(v string) bool {
	for i := 0; i < len(v); i++ {
		if flagAttr[v[i]] {
			return false
		}
	}
	return true
}

// appendAttr appends the escaped form of attribute value v to dst: fence
// tokens broken as in content, then & " < > (and their NFKC look-alikes)
// as references, every line break as a space, other control characters as
// hex references.
func appendAttr(dst []byte, v string) []byte {
	last := 0
	write := func(seg string) {
		start := 0
		for i := 0; i < len(seg); {
			c := seg[i]
			if c >= 0x20 && c < utf8.RuneSelf && c != '&' && c != '"' && c != '<' && c != '>' && c != 0x7F {
				i++
				continue
			}
			r, w := utf8.DecodeRuneInString(seg[i:])
			e := attrEscape(r)
			if w == 1 && r == utf8.RuneError {
				e = invalidAttr
			}
			if e != "" {
				dst = append(dst, seg[start:i]...)
				dst = append(dst, e...)
				start = i + w
			}
			i += w
		}
		dst = append(dst, seg[start:]...)
	}
	scanFence(v, func(at int, brk string) {
		write(v[last:at])
		dst = append(dst, brk...)
		last = at
	})
	write(v[last:])
	return dst
}

// neutralize returns content with every fence-like token broken by a visible
// backslash, exactly as it is rendered inside a fence. Content that contains
// no fence-like token is returned unchanged.
func neutralize(content string) string {
	n := neutralizedLen(content)
	if n == len(content) {
		return content
	}
	return string(appendNeutralized(make([]byte, 0, n), content))
}

// escapeAttribute returns v escaped as it is rendered inside a fence
// attribute.
func escapeAttribute(v string) string {
	return string(appendAttr(make([]byte, 0, escapedAttrLen(v)), v))
}
