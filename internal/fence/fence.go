// Package fence finds fence tokens in untrusted text: every place where the
// text could make a reader see the opening or closing tag of the fence that
// quotes it. Package compose uses it for "<frame" and package prompt for
// "<untrusted"; both share this one scanner and its one look-alike table
// (tables.go, generated from the newest Unicode data by ./gen).
//
// A fence token is a less-than sign, then any run of whitespace and
// slashes, then the fence name in any case (a prefix: "<frameset" is one for
// "frame"). The scanner recognises that shape under every view a reader
// might apply to the text, and under any two of them in either order:
//
//   - raw;
//   - NFKC (the newest Unicode version's: compatibility letters, digits and
//     punctuation the Go toolchain's tables do not know yet are in the
//     table);
//   - with format characters (Cf) removed, and more generally with every
//     invisible rune removed: format characters, combining marks, variation
//     selectors, tag characters, default-ignorable code points,
//     noncharacters, controls other than whitespace, invalid bytes;
//   - HTML-decoded, as Go's html.UnescapeString decodes (named references
//     with or without ';', decimal, hex, overflowing numbers, one level of
//     "&amp;") and as Python's html.unescape decodes, which deletes the
//     references to noncharacters, DEL and most C0 controls;
//   - NFKC or invisible-stripping then HTML-decoding: a reference written
//     with fullwidth or small '&', '#', ';', letters or digits, or with
//     invisible runes inside it;
//   - HTML-decoding then NFKC: a reference to a look-alike.
//
// The less-than sign may also be a visual look-alike (angle quotation marks
// and brackets, canadian syllabics and friends), the slashes and letters
// too (Cyrillic, Greek, small capitals), and after a JSON/JavaScript
// (\u003c, \x3c, \u{3c}) or percent (%3C) escape of it the escapes that
// follow are decoded as well.
//
// The scan is linear in the length of the text: each less-than unit looks
// ahead only until the first unit that cannot continue a fence token, the
// scan resumes where the look-ahead stopped, and a less-than unit never
// continues a token.
package fence

import (
	"fmt"
	"unicode/utf8"
)

// Kind is how the less-than unit of a token is written.
type Kind uint8

// The kinds of less-than unit.
const (
	// Raw is the ASCII '<'.
	Raw Kind = iota
	// LookAlike is one non-ASCII rune that is, or reads as, '<'.
	LookAlike
	// Reference is an HTML character reference that decodes to '<' (or to
	// a look-alike), possibly written in compatibility forms.
	Reference
	// Escape is a JSON or JavaScript escape of '<'.
	Escape
	// Percent is a percent escape of '<'.
	Percent
)

// Token is one fence token: text[Start:End] is its less-than unit. A
// breaker inserted at End (a backslash, which no view removes, decodes or
// folds into whitespace or a slash) breaks the token in every view; after
// an Escape unit the breaker must itself survive JSON decoding (two
// backslashes).
type Token struct {
	Start, End int
	Kind       Kind
}

// Options adjust a Scanner. The zero value is the default.
type Options struct {
	// BackslashIsSlash makes an ASCII backslash count as a slash between the
	// less-than and the name, as a JSON-decoding reader of "<\/name" sees
	// it. A caller whose breaker is a backslash must leave it false.
	BackslashIsSlash bool
}

// Scanner finds the fence tokens of one fence name. It is immutable and safe
// for concurrent use.
type Scanner struct {
	name string
	// follow[c]: ASCII byte c may follow a raw '<' in a token (whitespace,
	// slash, the name's first letter, an invisible control, or the start
	// of a reference or escape); non-ASCII bytes are decided rune by rune.
	follow [utf8.RuneSelf]bool
	// class of each ASCII byte in the look-ahead.
	class [utf8.RuneSelf]uint8
}

// ASCII classes in the look-ahead.
const (
	clsOther  = iota // ends any candidate
	clsIgnore        // invisible: skipped everywhere
	clsSpace         // whitespace: skipped between '<' and the name
	clsSlash         // '/': skipped between '<' and the name
	clsLT            // '<'
	clsLetter        // an ASCII letter
)

// New returns the scanner for the fence name, which must be 1 to 32 ASCII
// letters.
func New(name string, opts Options) (*Scanner, error) {
	if len(name) == 0 || len(name) > 32 {
		return nil, fmt.Errorf("fence: name %q: want 1 to 32 ASCII letters", name)
	}
	lower := make([]byte, len(name))
	for i := 0; i < len(name); i++ {
		c := name[i] | 0x20
		if c < 'a' || c > 'z' {
			return nil, fmt.Errorf("fence: name %q: want 1 to 32 ASCII letters", name)
		}
		lower[i] = c
	}
	sc := &Scanner{name: string(lower)}
	for c := 0; c < utf8.RuneSelf; c++ {
		b := byte(c)
		switch {
		case b == '<':
			sc.class[c] = clsLT
		case b == '/', b == '\\' && opts.BackslashIsSlash:
			sc.class[c] = clsSlash
		case isASCIISpace(b):
			sc.class[c] = clsSpace
		case b < 0x20 || b == 0x7F:
			sc.class[c] = clsIgnore
		case 'a' <= b|0x20 && b|0x20 <= 'z':
			sc.class[c] = clsLetter
		}
		switch cls := sc.class[c]; {
		case cls == clsSpace, cls == clsSlash, cls == clsIgnore, b|0x20 == lower[0], b == '&':
			sc.follow[c] = true
		}
	}
	return sc, nil
}

// MustNew is New for a fence name fixed in the program; it panics on a
// name New refuses.
func MustNew(name string, opts Options) *Scanner {
	sc, err := New(name, opts)
	if err != nil {
		panic(err)
	}
	return sc
}

// Name returns the fence name, in lower case.
func (sc *Scanner) Name() string { return sc.name }

// Trigger contexts: which encodings the look-ahead decodes. HTML references
// are always decoded (decoding is one of the views the fence must survive);
// JSON/JS and percent escapes only after a less-than of that encoding, so
// text like <\/frame> keeps its bytes.
const (
	ctxPlain = iota
	ctxJSON
	ctxPercent
)

// Scan calls emit for every fence token of s, in increasing order. It does
// not allocate unless s holds a character reference written with non-ASCII
// or invisible runes.
func (sc *Scanner) Scan(s string, emit func(Token)) {
	i := 0
	var sk skipper
	nextAt, next := -1, unit{} // a less-than unit the look-ahead decoded
	for i < len(s) {
		c := s[i]
		if !isTrigger(c) {
			if i = sk.skip(s, i); i >= len(s) {
				return
			}
			c = s[i]
		}
		var width int
		var kind Kind
		switch {
		case i == nextAt:
			width, kind = next.width, next.kind
		case c == '<' && i+1 < len(s) && s[i+1] < utf8.RuneSelf:
			if !sc.follow[s[i+1]] {
				i++ // "<<", "<div", "< b": cannot start a token
				continue
			}
			width, kind = 1, Raw
		case c == '<' && i+1 < len(s):
			if r, w := utf8.DecodeRuneInString(s[i+1:]); plainBlock(r) {
				i += 1 + w // "<日", "<😀": neither rune starts a token
				continue
			}
			width, kind = 1, Raw
		case c >= utf8.RuneSelf:
			r, w := utf8.DecodeRuneInString(s[i:])
			switch {
			case plainBlock(r) || !isLessThanRune(r) && !isAmpersandRune(r):
				i += w
				continue
			case isLessThanRune(r):
				width, kind = w, LookAlike
			default:
				if width, kind = sc.lessThanAt(s, i); width <= 0 {
					i -= width
					continue
				}
			}
		case c == '&' && i+1 < len(s) && !mayStartRef(s[i+1]):
			i++ // "& ", "&&", "&-": no reference
			continue
		default:
			if width, kind = sc.lessThanAt(s, i); width <= 0 {
				i -= width // not a less-than unit: step over it
				continue
			}
		}
		at := i + width
		ctx := ctxPlain
		switch kind {
		case Escape:
			ctx = ctxJSON
		case Percent:
			ctx = ctxPercent
		}
		ok, stop, u := sc.lookAheadASCII(s, at, ctx)
		if ok {
			emit(Token{Start: i, End: at, Kind: kind})
		}
		i = max(at, stop)
		if u.width > 0 && i == stop {
			nextAt, next = stop, u
		}
	}
}

// lookAheadASCII is lookAhead with its commonest case, plain ASCII bytes
// after a plain less-than, in a loop of its own; it hands over to
// lookAhead at the first byte that needs decoding or folding.
func (sc *Scanner) lookAheadASCII(s string, pos, ctx int) (bool, int, unit) {
	if ctx != ctxPlain {
		return sc.lookAhead(s, pos, ctx, 0)
	}
	matched := 0
	for ; pos < len(s); pos++ {
		c := s[pos]
		if c >= utf8.RuneSelf || c == '&' {
			return sc.lookAhead(s, pos, ctx, matched)
		}
		switch sc.class[c] {
		case clsIgnore:
			continue
		case clsSpace, clsSlash:
			if matched == 0 {
				continue
			}
		case clsLetter:
			if c|0x20 == sc.name[matched] {
				if matched == 0 && sc.hasName(s, pos) {
					// The whole name in ASCII, the commonest token.
					return true, pos + len(sc.name), unit{}
				}
				if matched++; matched == len(sc.name) {
					return true, pos + 1, unit{}
				}
				continue
			}
		}
		if isTrigger(c) {
			return false, pos, unit{} // '<', '\\' or '%' may start a unit
		}
		return false, pos + 1, unit{}
	}
	return false, len(s), unit{}
}

// hasName reports whether s[pos:] starts with the name in ASCII letters of
// any case, eight bytes at a time: OR-ing 0x20 into a byte gives a lower-case
// letter only for that letter in either case, and leaves non-ASCII bytes
// above 0x7F.
func (sc *Scanner) hasName(s string, pos int) bool {
	name := sc.name
	if len(s)-pos < len(name) {
		return false
	}
	k := 0
	for ; k+8 <= len(name); k += 8 {
		if load64(s, pos+k)|0x2020202020202020 != load64(name, k) {
			return false
		}
	}
	for ; k < len(name); k++ {
		if s[pos+k]|0x20 != name[k] {
			return false
		}
	}
	return true
}

// unit is a less-than unit the look-ahead decoded where it stopped: its
// width (0 for none) and kind, as lessThanAt would find them.
type unit struct {
	width int
	kind  Kind
}

// Count returns the number of fence tokens in s.
func (sc *Scanner) Count(s string) int {
	n := 0
	sc.Scan(s, func(Token) { n++ })
	return n
}

// lessThanAt returns the width and kind of the less-than unit starting at
// s[i]; when none starts there (or one that does cannot start a token, a
// fast reject) it returns minus the width of the byte or rune at s[i].
func (sc *Scanner) lessThanAt(s string, i int) (int, Kind) {
	c := s[i]
	if c >= utf8.RuneSelf {
		r, w := utf8.DecodeRuneInString(s[i:])
		switch {
		case plainBlock(r):
		case isLessThanRune(r):
			return w, LookAlike
		case isAmpersandRune(r):
			if text, n := decodeRef(s, i+w, 1); n > 0 && startsWithLT(text) {
				return w + n, Reference
			}
		}
		return -w, 0
	}
	switch c {
	case '<':
		if i+1 < len(s) && s[i+1] >= utf8.RuneSelf {
			if r, _ := utf8.DecodeRuneInString(s[i+1:]); plainBlock(r) {
				return -1, 0 // "<日", "<😀"
			}
		}
		return 1, Raw
	case '&':
		if i+1 < len(s) && s[i+1] != ' ' && s[i+1] != '&' {
			if text, n := decodeRef(s, i+1, 1); n > 0 && startsWithLT(text) {
				return n + 1, Reference
			}
		}
	case '\\':
		if r, w := decodeBackslash(s, i); w > 0 && foldsToLT(r) {
			return w, Escape
		}
	case '%':
		if r, w := decodePercent(s, i); w > 0 && foldsToLT(r) {
			return w, Percent
		}
	}
	return -1, 0
}

// mayStartRef reports whether c, just after an ampersand, may begin a
// character reference: '#', a letter or digit, or a byte that may belong to
// a rune that folds to one or that a view removes.
func mayStartRef(c byte) bool {
	return c == '#' || isAlnum(c) || c >= utf8.RuneSelf || c < 0x20 && !isASCIISpace(c) || c == 0x7F
}

// foldsToLT reports whether r is, or folds to, a less-than sign.
func foldsToLT(r rune) bool {
	if r < utf8.RuneSelf {
		return r == '<'
	}
	f, _ := foldOf(r)
	return f != "" && f[0] == '<'
}

// startsWithLT reports whether the first visible rune of decoded text folds
// to a less-than sign.
func startsWithLT(text string) bool {
	for _, r := range text {
		if r < utf8.RuneSelf {
			return r == '<'
		}
		f, _ := foldOf(r)
		if f == "" {
			continue
		}
		return f[0] == '<'
	}
	return false
}

// matcher follows a candidate after its less-than unit: whitespace,
// slashes and invisible runes, then the letters of the name with invisible
// runes between them.
type matcher struct {
	sc      *Scanner
	matched int
}

// Results of feeding the matcher.
const (
	more = iota // the candidate goes on
	dead        // it is not a token
	done        // the name is complete
)

// feed advances the matcher by one folded ASCII byte ('?' for a rune that
// is nothing a token is made of).
func (m *matcher) feed(c byte) int {
	if c >= utf8.RuneSelf {
		return dead
	}
	switch m.sc.class[c] {
	case clsIgnore:
		return more
	case clsSpace, clsSlash:
		if m.matched > 0 {
			return dead
		}
		return more
	case clsLetter:
		if c|0x20 != m.sc.name[m.matched] {
			return dead
		}
		m.matched++
		if m.matched == len(m.sc.name) {
			return done
		}
		return more
	}
	return dead
}

// feedFold feeds a fold string.
func (m *matcher) feedFold(f string) int {
	for k := 0; k < len(f); k++ {
		if res := m.feed(f[k]); res != more {
			return res
		}
	}
	return more
}

// feedText feeds decoded text, each rune folded.
func (m *matcher) feedText(text string) int {
	for k := 0; k < len(text); {
		c := text[k]
		if c < utf8.RuneSelf {
			k++
			if res := m.feed(c); res != more {
				return res
			}
			continue
		}
		r, w := utf8.DecodeRuneInString(text[k:])
		k += w
		if res := m.feedRune(r); res != more {
			return res
		}
	}
	return more
}

// lookAhead reports whether, from s[at] (just after a less-than unit), s
// goes on with skippable runes and then the name. stop is where the scan
// may resume: the end of the name, the start of the unit that decided
// against it when that unit may start a less-than unit itself, else the end
// of that unit. HTML references are decoded; JSON/JS or percent escapes too
// when ctx says the less-than was one. matched is how many letters of the
// name the bytes before at already matched.
func (sc *Scanner) lookAhead(s string, at, ctx, matched int) (ok bool, stop int, next unit) {
	m := matcher{sc: sc, matched: matched}
	for pos := at; pos < len(s); {
		start := pos
		c := s[pos]
		if c < utf8.RuneSelf && c != '&' && !(c == '\\' && ctx == ctxJSON) && !(c == '%' && ctx == ctxPercent) {
			// The common case, inline: one ASCII byte.
			pos++
			switch sc.class[c] {
			case clsIgnore:
				continue
			case clsSpace, clsSlash:
				if m.matched == 0 {
					continue
				}
			case clsLetter:
				if c|0x20 == sc.name[m.matched] {
					if m.matched++; m.matched == len(sc.name) {
						return true, pos, unit{}
					}
					continue
				}
			}
			if isTrigger(c) {
				return false, start, unit{} // '<', '\\' or '%' may start a unit
			}
			return false, pos, unit{}
		}
		res, canLT := more, true
		hand, kind := false, Kind(0) // s[start:pos] is a less-than unit of that kind
		switch {
		case c >= utf8.RuneSelf:
			r, w := utf8.DecodeRuneInString(s[pos:])
			if isAmpersandRune(r) {
				if text, n := decodeRef(s, pos+w, 1); n > 0 {
					pos += w + n
					res, canLT = m.feedText(text), startsWithLT(text)
					hand, kind = canLT, Reference
					break
				}
			}
			pos += w
			if res = m.feedRune(r); res == dead {
				// An ampersand whose reference did not decode is no
				// less-than unit: lessThanAt would decode it the same way.
				canLT = isLessThanRune(r) && !plainBlock(r)
				hand, kind = canLT, LookAlike
			}
		case c == '&':
			if text, n := decodeRef(s, pos+1, 1); n > 0 {
				pos += 1 + n
				res, canLT = m.feedText(text), startsWithLT(text)
				hand, kind = canLT, Reference
				break
			}
			pos++
			res, canLT = m.feed('&'), false // no reference: no less-than unit either
		case c == '\\':
			// canLT stays true: a unit may start inside an escape that
			// decodes to something else, so the scan resumes at start.
			if r, w := decodeBackslash(s, pos); w > 0 {
				pos += w
				res = m.feedRuneText(r)
				hand, kind = foldsToLT(r), Escape
				break
			}
			pos++
			res = m.feed(c)
		default: // '%'
			if r, w := decodePercent(s, pos); w > 0 {
				pos += w
				res = m.feedRuneText(r)
				hand, kind = foldsToLT(r), Percent
				break
			}
			pos++
			res = m.feed(c)
		}
		switch res {
		case done:
			return true, pos, unit{}
		case dead:
			if hand {
				// The unit that ended the candidate starts the next one:
				// hand it over, decoded, so it is not decoded twice.
				return false, start, unit{width: pos - start, kind: kind}
			}
			if canLT {
				return false, start, unit{}
			}
			return false, pos, unit{}
		}
	}
	return false, len(s), unit{}
}

// feedRuneText feeds one decoded rune.
func (m *matcher) feedRuneText(r rune) int {
	if r < utf8.RuneSelf {
		return m.feed(byte(r))
	}
	return m.feedRune(r)
}

// feedRune feeds the fold of one non-ASCII rune, or its look-alike letter
// when the fold does not continue the candidate.
func (m *matcher) feedRune(r rune) int {
	f, _, alt := foldAlt(r)
	res := m.feedFold(f)
	if res == dead && alt != 0 && len(f) <= 1 {
		return m.feed(alt)
	}
	return res
}
