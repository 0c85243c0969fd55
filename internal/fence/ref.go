package fence

import (
	"html"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// This file decodes what a reader's decoders decode: HTML character
// references (as Go's html.UnescapeString and Python's html.unescape read
// them, also when written in compatibility forms that NFKC folds to ASCII,
// or with invisible runes inside that a Cf-stripping view removes), JSON and
// JavaScript escapes, and percent escapes.

// longestEntityName bounds the named-reference names that can match exactly;
// every HTML5 name is shorter.
const longestEntityName = 40

// decodeRef decodes the HTML character reference whose ampersand ends just
// before s[j]. It returns the decoded text and the bytes consumed from j
// (0 when there is no reference). The text is "" for a reference some
// decoder deletes (Python's html.unescape drops references to
// noncharacters, DEL and most C0 controls). A reference that decodes
// to '&' (named or numeric) and is followed by another reference (double
// encoding, "&amp;lt;", "&#38;#60;") is decoded again, up to depth more
// levels, because a reader may decode twice.
//
// It reads the reference as a reader who folds and strips before decoding
// does (the longest reading); saw says which of those steps the reading
// depended on (0 when the reference is ASCII throughout, or ends at an
// ASCII byte), so that a caller can ask for the readings of the other view
// orders (refReadings) only when they may differ.
func decodeRef(s string, j, depth int) (text string, n int, saw uint8) {
	return decodeRefIn(s, j, depth, seeBoth)
}

// decodeRefIn is decodeRef for a reader who sees through the runes of mode
// inside a reference.
func decodeRefIn(s string, j, depth int, mode uint8) (string, int, uint8) {
	if j >= len(s) {
		return "", 0, 0
	}
	k := j
	for k < len(s) && refByte[s[k]]&refName != 0 {
		k++
	}
	if mode != 0 && k < len(s) && refByte[s[k]]&refFold != 0 && mayContinueRef(s, k) {
		// The reference may go on past a rune that folds to ASCII or that
		// a view removes: read it folded. (A reader who sees through
		// neither ends it at that rune, as the ASCII path below does.)
		return decodeFoldedRef(s, j, depth, mode)
	}
	if k == j {
		return "", 0, 0
	}
	if s[j] == '#' {
		text, n, differ := decodeNumericRef(s[j+1:], 1, mode&readPython != 0)
		text, k, saw := decodedRef(s, j, n, text, depth, mode) // "&#38;lt;" is "&amp;lt;"
		if differ {
			saw |= readPython
		}
		return text, k, saw
	}
	end := k
	if end < len(s) && s[end] == ';' {
		end++
	}
	text, n := decodeNamed(s[j:end])
	if n == 0 {
		return "", 0, 0
	}
	if text != "&" {
		return text, n, 0 // the common case, without a call
	}
	return decodedRef(s, j, n, text, depth, mode)
}

// Reading modes: which runes a reader's views let a decoder see through
// inside a reference. Decoding the raw text sees through none; NFKC first
// folds compatibility forms to ASCII (seeFold); removing format characters
// first skips those (seeCf) and dropping every invisible rune first skips
// the others too (seeOther: controls, marks, noncharacters); both, in
// either order, do both. The two kinds of invisible rune are apart because
// a Cf-stripping reader ends "&#xF" + U+001F at the control ("&#xF" is
// deleted, and "<" + U+001F + "frame" is a token to a reader whose
// whitespace holds U+001F) where one that drops every invisible rune reads
// on ("&#xFf").
const (
	seeFold = 1 << iota
	seeCf
	seeOther
	// readPython, in a mode, reads numeric references as Python's
	// html.unescape does where Go's html.UnescapeString reads them apart
	// (decodersDiffer); in what a reading saw, it says that they do.
	readPython
	seeInvisible = seeCf | seeOther
	seeBoth      = seeFold | seeInvisible
)

// readerModes are the modes of the readers the views make, besides the
// one that sees through everything: NFKC with Cf-stripping, NFKC alone,
// dropping every invisible rune, Cf-stripping alone, and the raw decoder.
var readerModes = [...]uint8{seeFold | seeCf, seeFold, seeInvisible, seeCf, 0}

// orderDependent reports whether a reference decodeRef read with saw,
// behind an ampersand amp bytes wide, may read otherwise in another view
// order. Behind a compatibility ampersand only an invisible rune can make
// the difference: every reader who sees that ampersand has folded.
func orderDependent(saw uint8, amp int) bool {
	return saw&(seeInvisible|readPython) != 0 || amp == 1 && saw != 0
}

// refReading is one reading of a reference: its text and the bytes it
// takes after the ampersand.
type refReading struct {
	text string
	n    int
}

// refReadings returns the distinct readings of the reference after the
// ampersand that ends before s[j], first being decodeRef's (which saw
// through the runes of saw) and the others those of the view orders that
// see through less: a reader who decodes first ends "&#x3C" at a following
// invisible rune or fullwidth letter, one who strips or folds first reads
// that letter as one more digit. Readings that are no reference are left
// out. fold is set when the ampersand itself is a compatibility form, which
// only a folding reader sees as one.
func refReadings(s string, j int, first refReading, saw uint8, fold bool) (rs [2 * (len(readerModes) + 1)]refReading, n int) {
	if first.n > 0 {
		rs[0], n = first, 1
	}
	// The steps that make a difference: those the first reading needed,
	// and folding when the ampersand itself is a compatibility form (the
	// reading starts after it, so saw does not record it).
	used := saw & seeBoth
	if fold {
		used |= seeFold
	}
	add := func(mode uint8) {
		text, k, _ := decodeRefIn(s, j, 1, mode)
		if r := (refReading{text, k}); k > 0 && !slices.Contains(rs[:n], r) {
			rs[n] = r
			n++
		}
	}
	done := uint8(1) << used // modes read, by the steps of used they see through
	for _, mode := range readerModes {
		mode &= used // a step no reading needs changes nothing
		if mode == used || fold && mode&seeFold == 0 || done&(1<<mode) != 0 {
			continue // the first reading, no ampersand, or read already
		}
		done |= 1 << mode
		add(mode)
	}
	if saw&readPython != 0 {
		// Go's decoder and Python's read the number apart: Python's
		// reading too, in each of the modes read.
		add(used | readPython)
		for mode := range uint8(seeBoth + 1) {
			if mode != used && done&(1<<mode) != 0 {
				add(mode | readPython)
			}
		}
	}
	return rs, n
}

// mayContinueRef reports whether the byte at s[k], which ends a run of
// ASCII name characters, may start a rune that continues the reference
// in some view: an invisible one, or one that folds to a name character,
// '#' or ';'. A three-byte rune (a fullwidth '&' after a reference's name,
// once per unit of text like "＆lt＆lt") is decoded in place.
func mayContinueRef(s string, k int) bool {
	c := s[k]
	if c < utf8.RuneSelf {
		return isASCIIInvisible(c)
	}
	var r rune
	if c&0xF0 == 0xE0 && k+2 < len(s) && s[k+1]&0xC0 == 0x80 && s[k+2]&0xC0 == 0x80 {
		r = rune(c&0x0F)<<12 | rune(s[k+1]&0x3F)<<6 | rune(s[k+2]&0x3F)
	}
	if r < 0x800 || 0xD800 <= r && r <= 0xDFFF {
		r, _ = runeAt(s, k) // another form, or an invalid one
	}
	switch classOf(r) {
	case rcOther, rcLT, rcAmp, rcSpace, rcSlash, rcAnyLetter:
		return false
	case rcInvisible:
		return true
	}
	f, visual := foldOf(r)
	return f == "" || !visual && (isAlnum(f[0]) || f[0] == ';' || f[0] == '#')
}

// decodeNamed decodes a named reference as html.UnescapeString does: name
// is the alphanumeric run after the ampersand plus an optional semicolon;
// the whole name is looked up, then (for the references that may go without
// a semicolon) its prefixes of at most longestWithoutSemicolon bytes, the
// longest first. It returns the text and how many bytes of name it used
// (0: none). Nothing is allocated: the texts are entityTexts', looked up
// in the flat table entities.
func decodeNamed(name string) (string, int) {
	if len(name) < shortestEntityName {
		return "", 0 // "&a", "&l" (as a reader who stops at "&l" + U+200B sees it)
	}
	if len(name) > longestEntityName {
		// Only a no-semicolon prefix can match.
		name = name[:longestWithoutSemicolon+1]
	}
	if t, ok := commonRef(name); ok {
		return t, len(name)
	}
	if t, ok := entities.lookup(name); ok {
		return t, len(name)
	}
	for j := min(len(name)-1, longestWithoutSemicolon); j > 1; j-- {
		if t, ok := entities.lookup(name[:j]); ok {
			return t, j
		}
	}
	return "", 0
}

// shortestEntityName bounds the names that can match from below: the
// shortest, "lt" and "gt", have two letters.
const shortestEntityName = 2

// longestWithoutSemicolon is the length of the longest reference name that
// may be written without its semicolon (html's own bound).
const longestWithoutSemicolon = 6

// decodedRef finishes a decoded reference: one that decodes to '&' is looked
// through once more when depth allows.
func decodedRef(s string, j, n int, text string, depth int, mode uint8) (string, int, uint8) {
	if text == "&" && depth > 0 && j+n < len(s) {
		if inner, m, saw := decodeRefIn(s, j+n, depth-1, mode); m > 0 {
			return inner, n + m, saw
		}
	}
	return text, n, 0
}

// commonRef decodes the references that dominate real text without a
// round trip through html.UnescapeString. name is the full alphanumeric run
// plus an optional semicolon. Each of them but "&sol;" decodes with or
// without its semicolon, so the bare name is matched once for both.
func commonRef(name string) (string, bool) {
	base, semi := strings.CutSuffix(name, ";")
	// By length, then by constant comparisons (no string-switch search).
	switch len(base) {
	case 2:
		switch {
		case base == "lt" || base == "LT":
			return "<", true
		case base == "gt" || base == "GT":
			return ">", true
		}
	case 3:
		switch {
		case base == "amp" || base == "AMP":
			return "&", true
		case base == "sol" && semi:
			return "/", true
		}
	case 4:
		switch {
		case base == "quot" || base == "QUOT":
			return "\"", true
		case base == "nbsp":
			return "\u00a0", true
		}
	}
	return "", false
}

// decodeNumericRef decodes the digits of "&#NNN;" / "&#xHH;" starting at
// d[0] (just after the '#'). Digits accumulate as html.UnescapeString
// accumulates them (in a rune that wraps on overflow), the semicolon is
// optional, C1 values take their Windows-1252 meaning, and the references
// Python's html.unescape deletes decode to "". It returns the text and
// the bytes consumed from the '#' (prefix is the bytes before d: 1).
// Decimal digits, a reference per unit of adversarial text, are summed in
// registers here rather than through refNumber.add.
func decodeNumericRef(d string, prefix int, python bool) (string, int, bool) {
	j := 0
	var n refNumber
	if j < len(d) && (d[j] == 'x' || d[j] == 'X') {
		j++
		for j < len(d) && n.add(d[j], true) {
			j++
		}
		if j == 1 {
			return emptyHexRef(d, prefix, python)
		}
	} else {
		x, big := rune(0), false
		for ; j < len(d) && d[j]-'0' < 10; j++ {
			x = 10*x + rune(d[j]-'0') // wraps as refNumber.add wraps
			big = big || uint32(x) > unicode.MaxRune
		}
		if j == 0 {
			return "", 0, false
		}
		n = refNumber{x, big}
	}
	if j < len(d) && d[j] == ';' {
		j++
	}
	text, differ := n.text(python)
	return text, j + prefix, differ
}

// emptyHexRef reads "&#x;" (no digit, d just after the '#'), which Go's
// decoder reads as U+FFFD (invisible to the scanner) and Python's leaves
// as it is: no reference.
func emptyHexRef(d string, prefix int, python bool) (string, int, bool) {
	if len(d) < 2 || d[1] != ';' {
		return "", 0, false // "&#x" and "&#xg": no reference to either
	}
	if python {
		return "", 0, true
	}
	return "", 2 + prefix, true
}

// refNumber is the value of a numeric reference's digits so far, kept as
// html.UnescapeString keeps it: in a rune that wraps on overflow, with big
// set once the value has exceeded every code point (Python: U+FFFD).
type refNumber struct {
	x   rune
	big bool
}

// add takes c as the next digit, hexadecimal when hex, and reports whether
// it was one; a byte that is no digit leaves n as it was.
func (n *refNumber) add(c byte, hex bool) bool {
	var v byte
	switch lower := c | 0x20; { // lower: 'A'-'F' folded onto 'a'-'f'
	case '0' <= c && c <= '9':
		v = c - '0'
	case hex && 'a' <= lower && lower <= 'f':
		v = lower - 'a' + 10
	default:
		return false
	}
	base := rune(10)
	if hex {
		base = 16
	}
	n.x = base*n.x + rune(v)
	n.big = n.big || uint32(n.x) > unicode.MaxRune
	return true
}

// text is the reference's text as numericText gives it, or, when python
// is set and Go's decoder and Python's read the number apart, as Python
// reads it; differ says whether they do: a number past every code point is
// U+FFFD to Python (invisible to the scanner, so "") where Go keeps the
// character it wrapped around to.
func (n refNumber) text(python bool) (string, bool) {
	text := numericText(n.x, n.big)
	if !n.big || text == "" || text == "\uFFFD" {
		return text, false
	}
	if python {
		return "", true
	}
	return text, true
}

// numericText is the text of a numeric reference to x (as Go's decoder
// computes it; big says Python's saw a value past every code point), as the
// scanner needs it: a rune with the same fold stands for x (see runeText),
// so that decoding a reference never allocates.
func numericText(x rune, big bool) string {
	if ' ' <= x && x < 0x7F {
		return asciiFold[x : x+1] // printable ASCII, the commonest: no decoder deletes it
	}
	if !big && pythonDeletes(x) {
		return ""
	}
	if 0x80 <= x && x <= 0x9F {
		return windows1252[x-0x80]
	}
	if x == 0 || (0xD800 <= x && x <= 0xDFFF) || x > unicode.MaxRune || x < 0 {
		x = utf8.RuneError
	}
	return runeText(x)
}

// windows1252 is the text Go's html.UnescapeString gives a numeric
// reference to each C1 value (its Windows-1252 meaning, or the value).
var windows1252 = func() (t [0x20]string) {
	for k := range t {
		t[k] = html.UnescapeString("&#" + strconv.Itoa(0x80+k) + ";")
	}
	return t
}()

// pythonDeletes reports whether Python's html.unescape decodes a numeric
// reference to x as nothing: C0 controls other than tab, line feed, form
// feed and carriage return (and NUL, which becomes U+FFFD), DEL, and the 66
// noncharacters. (C1 values take their Windows-1252 meaning, or stay.)
func pythonDeletes(x rune) bool {
	switch {
	case 0x01 <= x && x <= 0x08, x == 0x0B, 0x0E <= x && x <= 0x1F, x == 0x7F:
		return true
	case 0xFDD0 <= x && x <= 0xFDEF, x&0xFFFE == 0xFFFE && x <= unicode.MaxRune:
		return true
	}
	return false
}

// foldedReader reads the runes after an ampersand as an NFKC-then-decode or
// Cf-strip-then-decode reader would: invisible runes are skipped and runes
// whose compatibility decomposition is ASCII yield those bytes.
type foldedReader struct {
	s    string
	pos  int    // next rune of s to read
	pend string // rest of the fold of the rune before pos
	mode uint8  // what the reader sees through; a rune it does not ends the reference
	saw  uint8  // what it has seen through so far
}

// next returns the next folded byte and the offset in s just past the rune
// it came from; ok is false at the end of s or at a rune that is not
// ASCII under NFKC.
func (f *foldedReader) next() (c byte, end int, ok bool) {
	for f.pend == "" {
		if f.pos >= len(f.s) {
			return 0, f.pos, false
		}
		b := f.s[f.pos]
		if b < utf8.RuneSelf {
			if isASCIIInvisible(b) {
				if !f.see(seeOther) { // a control: not Cf
					return 0, f.pos, false
				}
				f.pos++
				continue
			}
			f.pend = asciiFold[b : b+1]
			f.pos++
			break
		}
		r, w := utf8.DecodeRuneInString(f.s[f.pos:])
		fold, visual := foldOf(r)
		step := uint8(seeFold)
		if fold == "" {
			step = seeOther
			if isFormat(r) {
				step = seeCf
			}
		}
		if visual || fold == "?" || !f.see(step) {
			return 0, f.pos, false
		}
		f.pos += w
		f.pend = fold
	}
	c = f.pend[0]
	if c == '?' {
		return 0, f.pos, false
	}
	f.pend = f.pend[1:]
	return c, f.pos, true
}

// see reports whether the reader sees through a rune that needs the step
// of mode, and notes it.
func (f *foldedReader) see(mode uint8) bool {
	f.saw |= mode
	return f.mode&mode != 0
}

// decodeFoldedRef is decodeRefIn for a reference that holds, or may go on
// past, a non-ASCII or invisible rune.
func decodeFoldedRef(s string, j, depth int, mode uint8) (string, int, uint8) {
	f := foldedReader{s: s, pos: j, mode: mode}
	c, end, ok := f.next()
	if !ok {
		return "", 0, f.saw
	}
	if c == '#' {
		text, n, differ := decodeFoldedNumeric(&f, j)
		text, k, saw := decodedRef(s, j, n, text, depth, mode)
		if differ {
			saw |= readPython
		}
		return text, k, f.saw | saw
	}
	var name [longestEntityName + 1]byte
	var ends [longestEntityName + 1]int
	n := 0
	for ok && isAlnum(c) && n < longestEntityName {
		name[n], ends[n] = c, end
		n++
		c, end, ok = f.next()
	}
	if n == 0 {
		return "", 0, f.saw
	}
	if ok && c == ';' && n < len(name) {
		name[n], ends[n] = c, end
		n++
	}
	text, used := decodeNamed(string(name[:n]))
	if used == 0 {
		return "", 0, f.saw
	}
	text, k, saw := decodedRef(s, j, ends[used-1]-j, text, depth, mode)
	return text, k, f.saw | saw
}

// decodeFoldedNumeric decodes the digits of a numeric reference read
// through f, its '#' already read; start is the offset just after the
// ampersand. It returns the text and the bytes consumed from start.
func decodeFoldedNumeric(f *foldedReader, start int) (string, int, bool) {
	consumed := 0
	c, end, ok := f.next()
	hex := ok && (c == 'x' || c == 'X')
	if hex {
		consumed = end - start
		c, end, ok = f.next()
	}
	var n refNumber
	digits := 0
	for ok && n.add(c, hex) {
		digits++
		consumed = end - start
		c, end, ok = f.next()
	}
	python := f.mode&readPython != 0
	switch {
	case digits == 0 && hex && ok && c == ';':
		// "&#x;", which Go reads as U+FFFD and Python leaves.
		if python {
			return "", 0, true
		}
		return "", end - start, true
	case digits == 0:
		return "", 0, false
	}
	if ok && c == ';' {
		consumed = end - start
	}
	text, differ := n.text(python)
	return text, consumed, differ
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

func isASCIISpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'
}
