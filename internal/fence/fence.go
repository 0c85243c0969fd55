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
//     table, and a letter newer than the table's decompositions counts as
//     whichever letter the name needs);
//   - with format characters (Cf) removed, and more generally with every
//     invisible rune removed: format characters, combining marks, variation
//     selectors, tag characters, default-ignorable code points,
//     noncharacters, controls other than whitespace, invalid bytes (which
//     the renderers write as U+FFFD, so that no fragments are left to fuse
//     into a character when a reader deletes what stands between them:
//     AppendValid);
//   - HTML-decoded, as Go's html.UnescapeString decodes (named references
//     with or without ';', decimal, hex, overflowing numbers, one level of
//     "&amp;" or "&#38;") and as Python's html.unescape decodes, which
//     deletes the references to noncharacters, DEL and most C0 controls;
//   - NFKC or invisible-stripping then HTML-decoding: a reference written
//     with fullwidth or small '&', '#', ';', letters or digits, or with
//     invisible runes inside it;
//   - HTML-decoding then NFKC: a reference to a look-alike.
//
// A reference whose extent depends on the order of those views (a
// semicolon-less number followed by an invisible rune or a compatibility
// form, then a hex letter) is read in each order's way.
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
	"slices"
	"unicode/utf8"
)

// unitKind is how the less-than unit of a token is written.
type unitKind uint8

// The kinds of less-than unit.
const (
	// unitRaw is the ASCII '<'.
	unitRaw unitKind = iota
	// unitLookAlike is one non-ASCII rune that is, or reads as, '<'.
	unitLookAlike
	// unitReference is an HTML character reference that decodes to '<' (or to
	// a look-alike), possibly written in compatibility forms.
	unitReference
	// unitEscape is a JSON or JavaScript escape of '<'.
	unitEscape
	// unitPercent is a percent escape of '<'.
	unitPercent
)

// Token is one fence token: text[Start:End] is its less-than unit. The
// breaker Breaker returns, inserted at End, breaks the token in every view.
type Token struct {
	Start, End int
	kind       unitKind
}

// Breaker is the text to insert at t.End to break t: a backslash, which no
// view removes, decodes or folds into whitespace or a slash; after a JSON
// or JavaScript escape of '<' the breaker must itself survive JSON
// decoding, so it is two backslashes.
func (t Token) Breaker() string {
	if t.kind == unitEscape {
		return `\\`
	}
	return `\`
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
	// follow2[c]: ASCII byte c may follow a raw '<' and the name's first
	// letter in a token (the second letter, an invisible control, or the
	// start of a reference); all false for a one-letter name, whose token
	// the first letter completes.
	follow2 [utf8.RuneSelf]bool
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

// newScanner returns the scanner for the fence name, which must be 1 to 32 ASCII
// letters.
func newScanner(name string, opts Options) (*Scanner, error) {
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
		switch cls := sc.class[c]; {
		case len(lower) < 2:
		case cls == clsIgnore, cls == clsLetter && b|0x20 == lower[1], b == '&':
			sc.follow2[c] = true
		}
	}
	return sc, nil
}

// MustNew is New for a fence name fixed in the program; it panics on a
// name New refuses.
func MustNew(name string, opts Options) *Scanner {
	sc, err := newScanner(name, opts)
	if err != nil {
		panic(err)
	}
	return sc
}

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
		var width int
		var kind unitKind
		switch {
		case i == nextAt:
			width, kind = next.width, next.kind
		case c == '<':
			if i+1 >= len(s) {
				return // nothing follows: no token
			}
			if d := s[i+1]; d < utf8.RuneSelf {
				if !sc.follow[d] {
					i++ // "<<", "<div", "< b": cannot start a token
					continue
				}
				if d|0x20 == sc.name[0] && len(sc.name) > 1 && i+2 < len(s) && s[i+2] < utf8.RuneSelf && !sc.follow2[s[i+2]] {
					i += 2 // "<f<", "<fx": neither the letter nor the '<' went on
					continue
				}
			} else {
				// Most non-ASCII runes (CJK, emoji) are nothing a token is
				// made of, and an invisible one (or an invalid byte, read
				// without a decode) changes nothing when the byte after it
				// cannot go on: fast rejects. lead decodes the others again.
				r, w := utf8.RuneError, 1
				if d >= 0xC2 && d <= 0xF4 {
					r, w = runeAt(s, i+1)
				}
				j, cls := i+1+w, classOf(r)
				switch {
				case cls == rcOther:
					i = j // "<日", "<😀": neither rune starts a token
					continue
				case cls == rcInvisible && j < len(s) && s[j] < utf8.RuneSelf && !sc.follow[s[j]]:
					i = j // "<\xff<", "<\u0338<": as "<<"
					continue
				}
			}
			width, kind = 1, unitRaw
		case c >= utf8.RuneSelf:
			r, w := runeAt(s, i)
			switch classOf(r) {
			case rcLT:
				width, kind = w, unitLookAlike
			case rcAmp:
				text, n, saw := decodeRef(s, i+w, 1)
				if orderDependent(saw, w) {
					i, nextAt, next = sc.scanReadings(s, i, w, refReading{text, n}, saw, emit)
					continue
				}
				if n == 0 || !startsWithLT(text) {
					i += w // no reference, or not to a less-than
					continue
				}
				width, kind = w+n, unitReference
			default:
				i += w // no less-than unit starts with it
				continue
			}
		case c == '&':
			if !mayBeRef(s, i+1) {
				i++ // "& ", "&&", "&#<": no reference
				continue
			}
			text, n, saw := decodeRef(s, i+1, 1)
			if orderDependent(saw, 1) {
				i, nextAt, next = sc.scanReadings(s, i, 1, refReading{text, n}, saw, emit)
				continue
			}
			if n == 0 || !startsWithLT(text) {
				i++ // no reference, or not to a less-than
				continue
			}
			width, kind = 1+n, unitReference
		case c == '\\', c == '%':
			if width, kind = sc.lessThanAt(s, i); width <= 0 {
				i -= width // not a less-than unit: step over it
				continue
			}
		default:
			if i+1 < len(s) && isTrigger(s[i+1]) {
				i++ // a short gap: no call to the skipper
				continue
			}
			j := sk.skip(s, i)
			if j == i {
				j++ // the skipper stops early at a '$'
			}
			i = j
			continue
		}
		at := i + width
		var ok bool
		var stop int
		var u unit
		switch kind {
		case unitEscape:
			ok, stop, u = sc.lookAhead(s, at, ctxJSON, 0)
		case unitPercent:
			ok, stop, u = sc.lookAhead(s, at, ctxPercent, 0)
		default:
			// Most adversarial units end in a dead end right after the
			// less-than: lead decides it without the look-ahead.
			ok, stop, u = sc.lead(s, at)
		}
		if ok {
			emit(Token{Start: i, End: at, kind: kind})
		}
		i = max(at, stop)
		if u.width > 0 && i == stop {
			nextAt, next = stop, u
		}
	}
}

// lookAhead reports whether, from s[at] (just after a less-than unit and
// the first matched letters of the name), s goes on with skippable runes
// and then the rest of the name. stop is where the scan
// may resume: the end of the name, the start of the unit that decided
// against it when that unit may start a less-than unit itself, else the end
// of that unit; next is that unit when it is a less-than unit the
// look-ahead decoded. HTML references are decoded; JSON/JS or percent
// escapes too when ctx says the less-than was one. matched is how many
// letters of the name lead has already read (0 or 1).
//
// ASCII bytes and the non-ASCII runes whose class says all (invisible,
// whitespace, slash, one letter, a less-than or nothing) are read inline;
// references, escapes and other folds go through lookAheadUnit.
func (sc *Scanner) lookAhead(s string, pos, ctx, matched int) (ok bool, stop int, next unit) {
	for pos < len(s) {
		c := s[pos]
		var r rune // the non-ASCII rune at pos, of width w (0 for a byte)
		var w int
		if c < utf8.RuneSelf {
			if c == '&' {
				if !mayBeRef(s, pos+1) {
					return false, pos + 1, unit{} // no reference: it ends the candidate
				}
				goto general
			}
			if c == '\\' && ctx == ctxJSON || c == '%' && ctx == ctxPercent {
				goto general
			}
			switch sc.class[c] {
			case clsIgnore:
				pos++
				continue
			case clsSpace, clsSlash:
				if matched == 0 {
					pos++
					continue
				}
			case clsLetter:
				if c|0x20 == sc.name[matched] {
					if matched == 0 && sc.hasName(s, pos) {
						// The whole name in ASCII, the commonest token.
						return true, pos + len(sc.name), unit{}
					}
					pos++
					if matched++; matched == len(sc.name) {
						return true, pos, unit{}
					}
					continue
				}
			}
			if isTrigger(c) {
				return false, pos, unit{} // '<', '\\' or '%' may start a unit
			}
			return false, pos + 1, unit{}
		}
		r, w = runeAt(s, pos)
		switch cls := classOf(r); cls {
		case rcInvisible:
			pos += w
			continue
		case rcSpace, rcSlash:
			if matched == 0 {
				pos += w
				continue
			}
			return false, pos + w, unit{}
		case rcLT:
			// It ends the candidate and starts the next: hand it over.
			return false, pos, unit{width: w, kind: unitLookAlike}
		case rcOther:
			return false, pos + w, unit{}
		case rcAnyLetter:
			pos += w
			if matched++; matched == len(sc.name) {
				return true, pos, unit{}
			}
			continue
		case rcAmp, rcSlow:
		default: // a letter
			if cls != sc.name[matched] {
				return false, pos + w, unit{}
			}
			pos += w
			if matched++; matched == len(sc.name) {
				return true, pos, unit{}
			}
			continue
		}
	general:
		m := matcher{sc: sc, matched: matched}
		start := pos
		res, end, canLT, hand, kind := sc.lookAheadUnit(s, pos, ctx, r, w, &m)
		matched, pos = m.matched, end
		switch res {
		case done:
			return true, pos, unit{}
		case dead:
			return deadEnd(start, pos, canLT, hand, kind)
		}
	}
	return false, len(s), unit{}
}

// deadEnd is what the look-ahead returns when the unit at s[start:end]
// ends the candidate: where the scan resumes, and the unit handed over.
func deadEnd(start, end int, canLT, hand bool, kind unitKind) (ok bool, stop int, next unit) {
	switch {
	case hand:
		// The unit that ended the candidate starts the next one: hand it
		// over, decoded, so it is not decoded twice.
		return false, start, unit{width: end - start, kind: kind}
	case canLT:
		return false, start, unit{}
	}
	return false, end, unit{}
}

// lookAheadUnit feeds m the unit at s[pos] that needs decoding or a fold
// lookup: a reference, an escape (in its ctx), or a non-ASCII rune (r, of
// width w, already decoded). It returns the matcher's result, the end of
// the unit, whether a less-than unit may start at pos (canLT), and whether
// s[pos:end] is one of kind (hand).
func (sc *Scanner) lookAheadUnit(s string, pos, ctx int, r rune, w int, m *matcher) (res, end int, canLT, hand bool, kind unitKind) {
	canLT = true
	switch c := s[pos]; {
	case c >= utf8.RuneSelf:
		if classOf(r) == rcAmp {
			text, n, saw := decodeRef(s, pos+w, 1)
			if orderDependent(saw, w) {
				return sc.feedReadings(s, pos, w, ctx, refReading{text, n}, saw, m)
			}
			if n > 0 {
				canLT = startsWithLT(text)
				return m.feedText(text), pos + w + n, canLT, canLT, unitReference
			}
		}
		// An ampersand whose reference did not decode is no less-than
		// unit: lessThanAt would decode it the same way.
		return m.feedRune(r), pos + w, false, false, 0
	case c == '&':
		text, n, saw := decodeRef(s, pos+1, 1)
		if orderDependent(saw, 1) {
			return sc.feedReadings(s, pos, 1, ctx, refReading{text, n}, saw, m)
		}
		if n > 0 {
			canLT = startsWithLT(text)
			return m.feedText(text), pos + 1 + n, canLT, canLT, unitReference
		}
		return m.feed('&'), pos + 1, false, false, 0 // no reference: no less-than unit either
	case c == '\\':
		// canLT stays true: a unit may start inside an escape that decodes
		// to something else, so the scan resumes at pos.
		if r, w := decodeBackslash(s, pos); w > 0 {
			return m.feedRuneText(r), pos + w, true, foldsToLT(r), unitEscape
		}
		return m.feed(c), pos + 1, true, false, 0
	default: // '%'
		if r, w := decodePercent(s, pos); w > 0 {
			return m.feedRuneText(r), pos + w, true, foldsToLT(r), unitPercent
		}
		return m.feed(c), pos + 1, true, false, 0
	}
}

// scanReadings is Scan for a reference at s[i] (its ampersand amp bytes
// wide) whose readings may differ with the order of the views
// (refReadings): each reading that is a less-than unit is looked ahead
// from its own end, and a token is emitted for each that forms one (the
// breaker after a shorter reading breaks the longer ones too, and
// contrariwise, but a reading's own token must be broken where it ends).
// It returns where the scan resumes, and the unit the look-ahead handed
// over there, as Scan's own look-ahead does, when one reading is a
// less-than; else just after the ampersand (no less-than unit starts
// inside a reference) and no unit.
func (sc *Scanner) scanReadings(s string, i, amp int, first refReading, saw uint8, emit func(Token)) (int, int, unit) {
	rs, n := refReadings(s, i+amp, first, saw, amp > 1)
	slices.SortFunc(rs[:n], func(a, b refReading) int { return a.n - b.n })
	last, lts, resume, nextAt, next := -1, 0, i+amp, -1, unit{}
	for _, r := range rs[:n] {
		at := i + amp + r.n
		if at == last || !startsWithLT(r.text) {
			continue
		}
		ok, stop, u := sc.lookAhead(s, at, ctxPlain, 0)
		if ok {
			emit(Token{Start: i, End: at, kind: unitReference})
		}
		last, lts = at, lts+1
		resume, nextAt, next = max(at, stop), stop, u
	}
	if lts != 1 {
		return i + amp, -1, unit{}
	}
	if next.width == 0 || resume != nextAt {
		nextAt = -1
	}
	return resume, nextAt, next
}

// feedReadings is lookAheadUnit for a reference at s[pos] (its ampersand
// amp bytes wide) whose readings may differ with the order of the views
// (refReadings). The candidate goes on when exactly one reading continues
// it and none is a less-than. When one continues it and another is a
// less-than (which starts a candidate of its own), the first is followed
// to its end here and the second handed over. It is dead when none
// continues it. When a reading completes the name, or two continue it
// differently (following both would take more than one pass), the
// candidate is taken as a token: its breaker is harmless, and the result
// ends at pos so that the scan resumes at the reference.
func (sc *Scanner) feedReadings(s string, pos, amp, ctx int, first refReading, saw uint8, m *matcher) (res, end int, canLT, hand bool, kind unitKind) {
	rs, n := refReadings(s, pos+amp, first, saw, amp > 1)
	var next matcher
	nextEnd, alive, lt, ltEnd := 0, 0, 0, 0
	for _, r := range rs[:n] {
		if startsWithLT(r.text) {
			if lt == 0 || ltEnd != pos+amp+r.n {
				lt++
			}
			ltEnd = pos + amp + r.n
			continue
		}
		c := *m
		switch c.feedText(r.text) {
		case done:
			return done, pos, true, false, 0
		case more:
			if alive == 0 || c.matched != next.matched || pos+amp+r.n != nextEnd {
				alive++
			}
			next, nextEnd = c, pos+amp+r.n
		}
	}
	switch {
	case alive > 1:
		return done, pos, true, false, 0
	case alive == 1 && lt == 0:
		*m = next
		return more, nextEnd, false, false, 0
	case alive == 1:
		// The name's letters bound how far such branches nest: a reading
		// goes on past another's extent only through letters of the name.
		if ok, _, _ := sc.lookAhead(s, nextEnd, ctx, next.matched); ok {
			return done, pos, true, false, 0
		}
	}
	if lt == 1 {
		// One less-than reading: hand it over, decoded, as lookAheadUnit
		// does a plain one.
		return dead, ltEnd, true, true, unitReference
	}
	return dead, pos + amp + first.n, lt > 0, false, 0
}

// lead is lookAhead for a less-than unit of the plain context, and
// returns what it returns. It first reads, inline, what lookAhead would
// read before the name's first letter: the blanks (whitespace, slashes,
// invisible runes, invalid bytes without a decode, deleted references) and
// the dead ends (a byte or rune that cannot go on, a look-alike or
// reference less-than handed on, an ampersand that starts no reference or
// decodes to a byte that ends the candidate). Most adversarial units end
// there, and the round trip through lookAhead and lookAheadUnit cost more
// than their decoding. It hands the rest to lookAhead, which finds from
// there what it would have found from the start.
func (sc *Scanner) lead(s string, pos int) (ok bool, stop int, next unit) {
	for pos < len(s) {
		c := s[pos]
		if c >= utf8.RuneSelf {
			if c < 0xC2 || c > 0xF4 {
				pos++ // an invalid byte: U+FFFD, invisible
				continue
			}
			r, w := runeAt(s, pos)
			switch cls := classOf(r); {
			case cls == rcInvisible, cls == rcSpace, cls == rcSlash:
				pos += w
				continue
			case cls == rcLT:
				return false, pos, unit{width: w, kind: unitLookAlike}
			case cls == rcAmp:
				n, u, first, saw := sc.leadRef(s, pos, w)
				if saw != 0 {
					return sc.leadReadings(s, pos, w, first, saw)
				}
				if n < 0 {
					pos -= n
					continue
				}
				if n > 0 || u.width > 0 {
					return false, pos + n, u
				}
			case cls == rcOther, cls >= 'a' && cls != sc.name[0]:
				return false, pos + w, unit{}
			case cls >= 'a' && len(sc.name) == 1:
				return true, pos + w, unit{}
			case cls >= 'a':
				return sc.lookAhead(s, pos+w, ctxPlain, 1)
			}
			return sc.lookAhead(s, pos, ctxPlain, 0)
		}
		switch sc.class[c] {
		case clsIgnore, clsSpace, clsSlash:
			pos++
			continue
		case clsLetter:
			if c|0x20 != sc.name[0] {
				break
			}
			if sc.hasName(s, pos) {
				return true, pos + len(sc.name), unit{} // the commonest token
			}
			return sc.lookAhead(s, pos+1, ctxPlain, 1)
		}
		if c == '&' {
			if !mayBeRef(s, pos+1) {
				return false, pos + 1, unit{} // "&" that starts no reference
			}
			n, u, first, saw := sc.leadRef(s, pos, 1)
			if saw != 0 {
				return sc.leadReadings(s, pos, 1, first, saw)
			}
			if n < 0 {
				pos -= n
				continue
			}
			if n > 0 || u.width > 0 {
				return false, pos + n, u
			}
			return sc.lookAhead(s, pos, ctxPlain, 0)
		}
		if isTrigger(c) {
			return false, pos, unit{} // '<', '\\' or '%' may start a unit
		}
		return false, pos + 1, unit{}
	}
	return false, len(s), unit{}
}

// leadRef decides, for lead, the reference whose ampersand (of width w)
// is at s[pos], in place: a chain of references then costs no look-ahead
// per reference. A deleted reference is a blank: n is minus its width. A
// reference to a less-than is a dead end at pos handing on that unit, u;
// no reference, or one to a single byte that ends the candidate, is a dead
// end n bytes on. Anything else (n 0, no u) is left to lookAhead. A
// reference whose readings may differ with the order of the views is
// returned decoded, with what its reading saw through (saw), for
// leadReadings.
func (sc *Scanner) leadRef(s string, pos, w int) (n int, u unit, first refReading, saw uint8) {
	text, m, saw := decodeRef(s, pos+w, 1)
	switch {
	case orderDependent(saw, w):
		return 0, unit{}, refReading{text, m}, saw
	case m == 0 && w == 1:
		n = 1 // '&' reads as itself, which ends the candidate
	case m == 0:
		// a look-alike ampersand: lookAhead folds it
	case text == "":
		n = -(w + m)
	case startsWithLT(text):
		u = unit{width: w + m, kind: unitReference}
	case len(text) == 1 && text[0] < utf8.RuneSelf && sc.class[text[0]] == clsOther:
		n = w + m
	}
	return n, u, refReading{}, 0
}

// leadReadings is lead's end at a reference whose readings may differ
// with the order of the views: feedReadings decides it, as lookAhead's
// look-ahead unit would, without decoding the reference again.
func (sc *Scanner) leadReadings(s string, pos, w int, first refReading, saw uint8) (ok bool, stop int, next unit) {
	m := matcher{sc: sc}
	res, end, canLT, hand, kind := sc.feedReadings(s, pos, w, ctxPlain, first, saw, &m)
	switch res {
	case done:
		return true, end, unit{}
	case more:
		return sc.lookAhead(s, end, ctxPlain, m.matched)
	}
	return deadEnd(pos, end, canLT, hand, kind)
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
	kind  unitKind
}

// count returns the number of fence tokens in s.
func (sc *Scanner) count(s string) int {
	n := 0
	sc.Scan(s, func(Token) { n++ })
	return n
}

// lessThanAt returns the width and kind of the less-than unit starting at
// s[i], an ASCII '\\' or '%' (Scan decides the other triggers itself);
// when none starts there it returns -1.
func (sc *Scanner) lessThanAt(s string, i int) (int, unitKind) {
	switch s[i] {
	case '\\':
		if r, w := decodeBackslash(s, i); w > 0 && foldsToLT(r) {
			return w, unitEscape
		}
	case '%':
		if r, w := decodePercent(s, i); w > 0 && foldsToLT(r) {
			return w, unitPercent
		}
	}
	return -1, 0
}

// mayStartRef reports whether c, just after an ampersand, may begin a
// character reference: '#', a letter or digit, or a byte that may belong to
// a rune that folds to one or that a view removes.
func mayStartRef(c byte) bool {
	return c == '#' || isAlnum(c) || c >= utf8.RuneSelf || isASCIIInvisible(c)
}

// mayBeRef reports whether a character reference may start at s[j], just
// after an ampersand: a fast reject, inline, for the ampersands most text
// holds ("& ", "&&") and for "&#" followed by what cannot begin a number.
func mayBeRef(s string, j int) bool {
	return j < len(s) && refByte[s[j]]&refStart != 0 && (s[j] != '#' || j+1 < len(s) && refByte[s[j+1]]&refDigit != 0)
}

// refByte classifies bytes for mayBeRef: refStart, the byte may begin a
// reference after '&' (mayStartRef); refDigit, it may begin the number after
// "&#" (a digit, 'x', a byte of a rune that folds to one, or one a view
// removes); and for decodeRef, one load per byte: refName, it belongs to
// the ASCII run of a reference (a letter, digit or '#'); refFold, it may
// start a rune the run goes on past (non-ASCII or invisible).
var refByte = func() (t [256]uint8) {
	for c := range 256 {
		b := byte(c)
		if mayStartRef(b) {
			t[c] |= refStart
		}
		if '0' <= b && b <= '9' || b|0x20 == 'x' || b >= utf8.RuneSelf || isASCIIInvisible(b) {
			t[c] |= refDigit
		}
		if isAlnum(b) || b == '#' {
			t[c] |= refName
		}
		if b >= utf8.RuneSelf || isASCIIInvisible(b) {
			t[c] |= refFold
		}
	}
	return t
}()

// Bits of refByte.
const (
	refStart = 1 << iota
	refDigit
	refName
	refFold
)

// isASCIIInvisible reports whether ASCII byte c is a control other than
// whitespace, which the views that drop invisible characters remove.
func isASCIIInvisible(c byte) bool {
	return c < 0x20 && !isASCIISpace(c) || c == 0x7F
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
	if text != "" && text[0] < utf8.RuneSelf {
		return text[0] == '<' // the commonest case, inline
	}
	return startsWithLTRune(text)
}

// startsWithLTRune is startsWithLT for text that starts with a non-ASCII
// rune (or is empty). A rune's class says what its fold would: rcInvisible
// exactly when the fold is empty, rcLT exactly when it starts with '<' (a
// test checks every rune), so a decoded reference to a rune like U+00BD,
// whose fold is long, costs one class load instead of a fold lookup.
// The runes are decoded by runeAt, whose two- and three-byte forms are
// inline (a range loop calls the runtime for every non-ASCII rune).
func startsWithLTRune(text string) bool {
	for k := 0; k < len(text); {
		if text[k] < utf8.RuneSelf {
			return text[k] == '<'
		}
		r, w := runeAt(text, k)
		if cls := classOf(r); cls != rcInvisible {
			return cls == rcLT
		}
		k += w
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
	if classOf(r) == rcAnyLetter {
		return m.feed(m.sc.name[m.matched]) // whichever letter the name needs
	}
	f, _, alt := foldAlt(r)
	res := m.feedFold(f)
	if res == dead && alt != 0 && len(f) <= 1 {
		return m.feed(alt)
	}
	return res
}
