package compose

import (
	"html"
	"math/bits"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// This file is the fence neutraliser: it finds every place where frame
// content (or an attribute value) could make a reader see a <frame> or
// </frame> token and inserts a visible breaker there. Nothing is deleted.
//
// A "fence token" is a less-than sign, then any run of whitespace and
// slashes, then the letters "frame" in any case (a prefix: "<frameset" is
// one). The scanner recognises that shape under every view a reader might
// apply to the prompt:
//
//   - the less-than sign may be the ASCII one, a Unicode look-alike (fullwidth,
//     small form, angle quotation marks, angle brackets, canadian syllabics
//     and friends), an HTML character reference that decodes to one (named,
//     decimal, hex, without semicolon, through one level of &amp;), a JSON or
//     JavaScript escape (\u003c, \x3c, \u{3c}) or a percent escape (%3C);
//   - between it and the name, whitespace may be any Unicode White_Space,
//     slashes may be look-alikes or encoded, and invisible characters
//     (format characters, combining marks, variation selectors, tag
//     characters, default-ignorable code points, invalid bytes) are skipped;
//   - the letters may be NFKC variants (fullwidth, mathematical), case
//     variants, common confusables (Cyrillic, Greek, small capitals) or
//     encoded, with invisible characters between them.
//
// When the shape is found, the breaker goes immediately after the
// less-than unit: a backslash, or two backslashes after a JSON escape so the
// JSON-decoded text still shows one. A backslash is stable under NFKC, is not
// a format character, is not part of any HTML reference, and is neither
// whitespace nor a slash, so the token stays broken in every view.
//
// The scan is linear: each less-than unit looks ahead only until the first
// unit that cannot continue a fence token, and a less-than unit never
// continues one, so the look-ahead regions of successive triggers do not
// overlap.

const (
	breakPlain = `\`  // after a raw, look-alike, entity or percent trigger
	breakJSON  = `\\` // after a JSON/JS escape trigger: decodes to one backslash
)

// unit classes used by the fence matcher.
const (
	clsOther  = iota // ends any candidate
	clsIgnore        // invisible: skipped everywhere
	clsSpace         // whitespace: skipped between '<' and the name
	clsSlash         // '/' or a look-alike: skipped between '<' and the name
	clsLT            // '<' or a look-alike
	clsLetter        // an ASCII letter (folded to lower case)
)

// Trigger contexts: which encodings the look-ahead decodes. HTML references
// are always decoded (entity decoding is one of the views the fence must
// survive); JSON/JS and percent escapes only after a trigger of that
// encoding, so text like <\/frame> (no fence token in any view we guarantee)
// keeps the seed's exact bytes.
const (
	ctxPlain = iota
	ctxJSON
	ctxPercent
)

// scanFence reports, in increasing order, each byte offset of s at which a
// breaker must be inserted, with the breaker to insert there.
func scanFence(s string, emit func(at int, brk string)) {
	i := 0
	var sk skipper
	for i < len(s) {
		i = sk.skip(s, i)
		if i >= len(s) {
			return
		}
		c := s[i]
		width, ctx := 0, ctxPlain
		if c < utf8.RuneSelf {
			switch c {
			case '<':
				if i+1 < len(s) && byteFlags[s[i+1]]&flagMayFollow == 0 {
					i++ // "<<", "<div", "< b": cannot start a fence token
					continue
				}
				if i+1 < len(s) && s[i+1] >= utf8.RuneSelf {
					if r, _ := utf8.DecodeRuneInString(s[i+1:]); plainLetterBlock(r) {
						i++ // "<日", "<😀": cannot start a fence token
						continue
					}
				}
				width = 1
			case '&':
				if i+1 < len(s) && (s[i+1] == '#' || isAlnum(s[i+1])) {
					if text, n := decodeRef(s, i+1, 1); n > 0 && textStartsWithLT(text) {
						width = n + 1
					}
				}
			case '\\':
				if r, w := decodeBackslash(s, i); w > 0 && foldsToLT(r) {
					width, ctx = w, ctxJSON
				}
			case '%':
				if r, w := decodePercent(s, i); w > 0 && foldsToLT(r) {
					width, ctx = w, ctxPercent
				}
			}
			if width == 0 {
				i++
				continue
			}
		} else {
			r, w := utf8.DecodeRuneInString(s[i:])
			if !isLTLookalike(r) {
				i += w
				continue
			}
			width = w
		}
		at := i + width
		if matchesFenceName(s, at, ctx) {
			if ctx == ctxJSON {
				emit(at, breakJSON)
			} else {
				emit(at, breakPlain)
			}
		}
		i = at
	}
}

// Word-at-a-time constants for skipPlain.
const (
	lsb = 0x0101010101010101
	msb = 0x8080808080808080
)

// skipPlain returns the offset of the first byte at or after i that may
// start a less-than unit ('<', '&', '\\', '%' or a non-ASCII byte), or
// len(s); it may also stop early at a '$', which the caller skips. It
// tests eight bytes at a time: a byte equal to c is a zero byte of
// x^(c*lsb), and (v-lsb) & ^v & msb flags the lowest zero byte of v exactly
// (higher flags may be spurious, the lowest never is).
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
		if byteFlags[s[i]]&flagTrigger != 0 {
			return i
		}
	}
	return i
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
	// exact while the caller's offset has not passed it.
	// The zero value (every next 0) is "not searched yet": 0 is below
	// the end of any probe.
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

// Byte flags for the scanner's fast paths.
const (
	flagTrigger   = 1 << iota // may start a less-than unit
	flagMayFollow             // may be the first byte after a less-than in a fence token
	flagAttr                  // may be rewritten or start a rewrite in an attribute value
)

// byteFlags classifies every byte for the fast paths. It is computed once
// and never written.
var byteFlags = func() (t [256]uint8) {
	for _, c := range []byte("<&\\%") {
		t[c] |= flagTrigger
	}
	for c := 0x80; c < 0x100; c++ {
		t[c] |= flagTrigger | flagMayFollow
	}
	for c := 0; c < 0x20; c++ {
		t[c] |= flagMayFollow // whitespace and (invisible) controls
	}
	for _, c := range []byte(" /fF&\\%\x7f") {
		t[c] |= flagMayFollow
	}
	for c := 0; c < 0x100; c++ {
		if c < 0x20 || c >= 0x7F || t[c]&flagTrigger != 0 || c == '"' || c == '>' {
			t[c] |= flagAttr
		}
	}
	return t
}()

// fenceMatcher recognises whitespace/slashes then "frame", fed folded runes.
type fenceMatcher struct{ matched int }

// feed advances the matcher by one folded rune: it returns 1 once "frame"
// is complete, -1 when the candidate is dead, 0 to continue.
func (m *fenceMatcher) feed(f rune) int {
	const name = "frame"
	switch cls, letter := classify(f); cls {
	case clsIgnore:
		return 0
	case clsSpace, clsSlash:
		if m.matched > 0 {
			return -1
		}
		return 0
	case clsLetter:
		if letter != name[m.matched] {
			return -1
		}
		m.matched++
		if m.matched == len(name) {
			return 1
		}
		return 0
	}
	return -1
}

// feedRune folds r (a confusable to its ASCII model, anything else through
// its compatibility decomposition) and feeds the result.
func (m *fenceMatcher) feedRune(r rune) int {
	if r < utf8.RuneSelf {
		return m.feed(r)
	}
	if c := confusable(r); c != 0 {
		return m.feed(rune(c))
	}
	if plainLetterBlock(r) {
		return -1
	}
	d := decomposition(r)
	if len(d) == 0 {
		return m.feed(r)
	}
	for len(d) > 0 {
		f, w := utf8.DecodeRune(d)
		d = d[w:]
		if c := confusable(f); c != 0 {
			f = rune(c)
		}
		if res := m.feed(f); res != 0 {
			return res
		}
	}
	return 0
}

// decomposition returns the full compatibility decomposition of r (the
// runes NFKC builds it from), or nil when r has none. It does not allocate.
func decomposition(r rune) []byte {
	var b [utf8.UTFMax]byte
	return norm.NFKC.Properties(b[:utf8.EncodeRune(b[:], r)]).Decomposition()
}

// plainLetterBlock reports whether r lies in a large block (CJK ideographs,
// Hangul syllables, emoji) none of whose runes is invisible, a space, a
// slash, a less-than or a letter look-alike: a fast reject.
func plainLetterBlock(r rune) bool {
	return 0x3400 <= r && r <= 0x4DBF || 0x4E00 <= r && r <= 0x9FFF ||
		0xAC00 <= r && r <= 0xD7A3 || 0x1F300 <= r && r <= 0x1FAFF
}

// foldsToLT reports whether r is, or folds to, a less-than sign.
func foldsToLT(r rune) bool {
	if r < utf8.RuneSelf || isLTLookalike(r) {
		return r == '<' || isLTLookalike(r)
	}
	if plainLetterBlock(r) {
		return false
	}
	d := decomposition(r)
	f, _ := utf8.DecodeRune(d)
	return len(d) > 0 && isLTLookalike(f)
}

// textStartsWithLT reports whether the first visible rune of a decoded
// reference folds to a less-than sign.
func textStartsWithLT(text string) bool {
	for _, r := range text {
		if r >= utf8.RuneSelf && isInvisible(r) {
			continue
		}
		return foldsToLT(r)
	}
	return false
}

// matchesFenceName reports whether, starting at byte offset at (just after a
// less-than unit), s continues with skippable whitespace, slashes and
// invisible characters and then the letters "frame". HTML references are
// decoded; JSON/JS or percent escapes too when ctx says the trigger was one.
func matchesFenceName(s string, at, ctx int) bool {
	var m fenceMatcher
	for pos := at; pos < len(s); {
		c := s[pos]
		if c < utf8.RuneSelf {
			switch {
			case c == '&' && pos+1 < len(s) && (s[pos+1] == '#' || isAlnum(s[pos+1])):
				if text, n := decodeRef(s, pos+1, 1); n > 0 {
					pos += n + 1
					for _, r := range text {
						if res := m.feedRune(r); res != 0 {
							return res > 0
						}
					}
					continue
				}
			case c == '\\' && ctx == ctxJSON:
				if r, w := decodeBackslash(s, pos); w > 0 {
					pos += w
					if res := m.feedRune(r); res != 0 {
						return res > 0
					}
					continue
				}
			case c == '%' && ctx == ctxPercent:
				if r, w := decodePercent(s, pos); w > 0 {
					pos += w
					if res := m.feedRune(r); res != 0 {
						return res > 0
					}
					continue
				}
			}
			pos++
			if res := m.feed(rune(c)); res != 0 {
				return res > 0
			}
			continue
		}
		r, w := utf8.DecodeRuneInString(s[pos:])
		pos += w
		if w == 1 {
			continue // an invalid byte is invisible
		}
		if res := m.feedRune(r); res != 0 {
			return res > 0
		}
	}
	return false
}

// longestEntityName bounds the named-reference names that can match exactly;
// every HTML5 name is shorter.
const longestEntityName = 40

// decodeRef decodes the HTML character reference whose '&' immediately
// precedes s[j], exactly as html.UnescapeString would in context. It returns
// the decoded text and the bytes consumed after the '&' (0 when there is no
// reference). A reference that decodes to '&' and is followed by another
// reference name (double encoding, "&amp;lt;") is decoded again, up to depth
// more levels, because a reader may decode twice.
func decodeRef(s string, j, depth int) (string, int) {
	if j >= len(s) {
		return "", 0
	}
	if s[j] == '#' {
		return decodeNumericRef(s, j+1)
	}
	k := j
	for k < len(s) && isAlnum(s[k]) {
		k++
	}
	if k == j {
		return "", 0
	}
	end := k
	if end < len(s) && s[end] == ';' {
		end++
	}
	name := s[j:end]
	if len(name) > longestEntityName {
		// Only a no-semicolon prefix (at most six letters) can match.
		name = name[:7]
	}
	if t, ok := commonRef(name); ok {
		return decodedRef(s, j, len(name), t, depth)
	}
	ref := "&" + name
	out := html.UnescapeString(ref)
	if out == ref {
		return "", 0
	}
	text, n := out, len(name)
	if _, sz := utf8.DecodeRuneInString(out); sz < len(out) {
		// A no-semicolon prefix match leaves the rest of the name verbatim.
		if rest := out[sz:]; strings.HasSuffix(ref, rest) {
			text, n = out[:sz], len(name)-len(rest)
		}
	}
	return decodedRef(s, j, n, text, depth)
}

// decodedRef finishes decodeRef: a reference that decodes to '&' is looked
// through once more when depth allows.
func decodedRef(s string, j, n int, text string, depth int) (string, int) {
	if text == "&" && depth > 0 && j+n < len(s) && (s[j+n] == '#' || isAlnum(s[j+n])) {
		if inner, m := decodeRef(s, j+n, depth-1); m > 0 {
			return inner, n + m
		}
	}
	return text, n
}

// commonRef decodes the references that dominate real text without a
// round trip through html.UnescapeString. name is the full alphanumeric run
// plus an optional semicolon.
func commonRef(name string) (string, bool) {
	switch name {
	case "lt;", "lt", "LT;", "LT":
		return "<", true
	case "gt;", "gt", "GT;", "GT":
		return ">", true
	case "amp;", "amp", "AMP;", "AMP":
		return "&", true
	case "quot;", "quot", "QUOT;", "QUOT":
		return "\"", true
	case "sol;":
		return "/", true
	case "nbsp;", "nbsp":
		return "\u00a0", true
	}
	return "", false
}

// decodeNumericRef decodes the digits of "&#NNN;" / "&#xHH;" starting at
// s[j] (just after the '#') exactly like html.UnescapeString: digits
// accumulate in a rune that wraps on overflow, the semicolon is optional,
// and C1 or invalid values are replaced. It returns the text and the bytes
// consumed after the '&'.
func decodeNumericRef(s string, j int) (string, int) {
	begin := j - 1 // the '#'
	hex := false
	if j < len(s) && (s[j] == 'x' || s[j] == 'X') {
		hex = true
		j++
	}
	start := j
	var x rune
scan:
	for ; j < len(s); j++ {
		c := s[j]
		switch {
		case '0' <= c && c <= '9':
			if hex {
				x = 16*x + rune(c) - '0'
			} else {
				x = 10*x + rune(c) - '0'
			}
		case hex && 'a' <= c && c <= 'f':
			x = 16*x + rune(c) - 'a' + 10
		case hex && 'A' <= c && c <= 'F':
			x = 16*x + rune(c) - 'A' + 10
		default:
			break scan
		}
	}
	if j == start {
		return "", 0
	}
	if j < len(s) && s[j] == ';' {
		j++
	}
	if 0x80 <= x && x <= 0x9F {
		// Windows-1252 remapping, delegated to the standard library.
		return html.UnescapeString("&#" + strconv.Itoa(int(x)) + ";"), j - begin
	}
	if x == 0 || (0xD800 <= x && x <= 0xDFFF) || x > unicode.MaxRune || x < 0 {
		x = utf8.RuneError
	}
	return string(x), j - begin
}

// decodeBackslash decodes a JSON or JavaScript escape at s[i] == '\\':
// \uXXXX, \u{X...}, \xXX, \/ and the whitespace escapes \t \n \r \f \v.
func decodeBackslash(s string, i int) (rune, int) {
	if i+1 >= len(s) {
		return 0, 0
	}
	switch s[i+1] {
	case '/':
		return '/', 2
	case 't':
		return '\t', 2
	case 'n':
		return '\n', 2
	case 'r':
		return '\r', 2
	case 'f':
		return '\f', 2
	case 'v':
		return '\v', 2
	case 'x':
		if r, ok := parseHex(s, i+2, 2); ok {
			return r, 4
		}
	case 'u':
		if i+2 < len(s) && s[i+2] == '{' {
			j := i + 3
			var x rune
			for j < len(s) && j-i-3 < 6 && hexVal(s[j]) >= 0 {
				x = x*16 + rune(hexVal(s[j]))
				j++
			}
			if j > i+3 && j < len(s) && s[j] == '}' {
				return x, j + 1 - i
			}
			return 0, 0
		}
		if r, ok := parseHex(s, i+2, 4); ok {
			return r, 6
		}
	}
	return 0, 0
}

// decodePercent decodes a percent escape at s[i] == '%', including a
// percent-encoded multi-byte UTF-8 sequence.
func decodePercent(s string, i int) (rune, int) {
	b0, ok := parseHex(s, i+1, 2)
	if !ok {
		return 0, 0
	}
	if b0 < utf8.RuneSelf {
		return b0, 3
	}
	var buf [utf8.UTFMax]byte
	n := 0
	for j := i; n < utf8.UTFMax && j+2 < len(s) && s[j] == '%'; j += 3 {
		b, ok := parseHex(s, j+1, 2)
		if !ok || (n > 0 && b&0xC0 != 0x80) {
			break
		}
		buf[n] = byte(b)
		n++
		if utf8.FullRune(buf[:n]) {
			break
		}
	}
	r, w := utf8.DecodeRune(buf[:n])
	if r == utf8.RuneError {
		return utf8.RuneError, 3
	}
	return r, 3 * w
}

func parseHex(s string, at, n int) (rune, bool) {
	if at+n > len(s) {
		return 0, false
	}
	var x rune
	for k := 0; k < n; k++ {
		v := hexVal(s[at+k])
		if v < 0 {
			return 0, false
		}
		x = x*16 + rune(v)
	}
	return x, true
}

func hexVal(c byte) int {
	switch {
	case '0' <= c && c <= '9':
		return int(c - '0')
	case 'a' <= c && c <= 'f':
		return int(c-'a') + 10
	case 'A' <= c && c <= 'F':
		return int(c-'A') + 10
	}
	return -1
}

func isAlnum(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}

// classify gives the matcher class of one folded rune; for letters it also
// returns the lower-case ASCII letter.
func classify(r rune) (int, byte) {
	switch {
	case r == '<':
		return clsLT, 0
	case r == '/':
		return clsSlash, 0
	case 'a' <= r && r <= 'z':
		return clsLetter, byte(r)
	case 'A' <= r && r <= 'Z':
		return clsLetter, byte(r) + ('a' - 'A')
	case unicode.IsSpace(r) || r == '\u2800':
		return clsSpace, 0
	case r < utf8.RuneSelf:
		if r < 0x20 || r == 0x7F {
			return clsIgnore, 0
		}
		return clsOther, 0
	case isInvisible(r):
		return clsIgnore, 0
	case isLTLookalike(r):
		return clsLT, 0
	}
	if c := confusable(r); c != 0 {
		return classify(rune(c))
	}
	// Case variants outside ASCII that fold to an ASCII letter.
	for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
		if f < utf8.RuneSelf {
			return classify(f)
		}
	}
	return clsOther, 0
}

// isInvisible reports whether r renders as nothing (or as a mark on its
// neighbour) and is therefore skipped by the matcher.
func isInvisible(r rune) bool {
	return r == utf8.RuneError ||
		unicode.Is(unicode.Cf, r) ||
		unicode.Is(unicode.Mn, r) ||
		unicode.Is(unicode.Me, r) ||
		unicode.Is(unicode.Cc, r) && !unicode.IsSpace(r) ||
		unicode.Is(unicode.Variation_Selector, r) ||
		unicode.Is(unicode.Other_Default_Ignorable_Code_Point, r) ||
		(r >= 0xE0000 && r <= 0xE0FFF)
}

// isLTLookalike reports whether r is a less-than sign or reads as one.
func isLTLookalike(r rune) bool {
	switch r {
	case '<',
		'\uFF1C',     // FULLWIDTH LESS-THAN SIGN (NFKC: <)
		'\uFE64',     // SMALL LESS-THAN SIGN (NFKC: <)
		'\u2039',     // SINGLE LEFT-POINTING ANGLE QUOTATION MARK
		'\u276E',     // HEAVY LEFT-POINTING ANGLE QUOTATION MARK ORNAMENT
		'\u02C2',     // MODIFIER LETTER LEFT ARROWHEAD
		'\u1438',     // CANADIAN SYLLABICS PA
		'\u16B2',     // RUNIC LETTER KAUNA
		'\u3008',     // LEFT ANGLE BRACKET
		'\u2329',     // LEFT-POINTING ANGLE BRACKET
		'\u27E8',     // MATHEMATICAL LEFT ANGLE BRACKET
		'\u276C',     // MEDIUM LEFT-POINTING ANGLE BRACKET ORNAMENT
		'\u29FC',     // LEFT-POINTING CURVED ANGLE BRACKET
		'\u226E',     // NOT LESS-THAN (decomposes to < + overlay)
		'\u22D6',     // LESS-THAN WITH DOT
		'\U0001D236': // GREEK INSTRUMENTAL NOTATION SYMBOL-40
		return true
	}
	return false
}

// confusable maps a visual look-alike of '/' or of a letter of "frame" to its
// ASCII model, or returns 0.
func confusable(r rune) byte {
	switch r {
	case '\u2044', '\u2215', '\u2571', '\u29F8', '\u1735', '\u2F03', '\u3033',
		'\u30CE', '\u4E3F', '\u27CB', '\u2CC6', '\u0338', '\u0337':
		return '/'
	case '\u017F', '\u0192', '\u1E9D', '\u03DD', '\uA799', '\uAB35', '\uA730', '\u03DC', '\uA798':
		return 'f'
	case '\u0433', '\u1D26', '\u2C85', '\uAB47', '\uAB48', '\u0280', '\u01A6', '\u13A1', '\u13D2', '\uA4E3', '\u0413':
		return 'r'
	case '\u0430', '\u0251', '\u03B1', '\u237A', '\u1D00', '\u0391', '\u0410', '\u13AA', '\uA4EE':
		return 'a'
	case '\u043C', '\u1D0D', '\u039C', '\u041C', '\u03FA', '\u13B7', '\uA4DF', '\u03BC':
		return 'm'
	case '\u0435', '\u04BD', '\u212E', '\uAB32', '\u1D07', '\u0395', '\u0415', '\u13AC', '\uA4F0', '\u22FF', '\u03B5':
		return 'e'
	}
	return 0
}

// neutralizedLen is len(neutralize(s)), computed without building it.
func neutralizedLen(s string) int {
	n := len(s)
	scanFence(s, func(_ int, brk string) { n += len(brk) })
	return n
}

// appendNeutralized appends s to dst with a breaker inserted at every fence
// token, and reports whether any breaker was inserted.
func appendNeutralized(dst []byte, s string) []byte {
	last := 0
	scanFence(s, func(at int, brk string) {
		dst = append(dst, s[last:at]...)
		dst = append(dst, brk...)
		last = at
	})
	return append(dst, s[last:]...)
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
				n++ // invalid byte, kept
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

// attrIsPlain reports whether attribute value v is written verbatim: no
// byte of it is escaped, rewritten or can start a fence token.
func attrIsPlain(v string) bool {
	for i := 0; i < len(v); i++ {
		if byteFlags[v[i]]&flagAttr != 0 {
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
			if !(w == 1 && r == utf8.RuneError) {
				if e := attrEscape(r); e != "" {
					dst = append(dst, seg[start:i]...)
					dst = append(dst, e...)
					start = i + w
				}
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

// Neutralize returns content with every fence-like token broken by a visible
// backslash, exactly as it is rendered inside a fence. Content that contains
// no fence-like token is returned unchanged.
func Neutralize(content string) string {
	n := neutralizedLen(content)
	if n == len(content) {
		return content
	}
	return string(appendNeutralized(make([]byte, 0, n), content))
}

// EscapeAttribute returns v escaped as it is rendered inside a fence
// attribute.
func EscapeAttribute(v string) string {
	return string(appendAttr(make([]byte, 0, escapedAttrLen(v)), v))
}
