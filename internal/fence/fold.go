package fence

import "unicode/utf8"

//go:generate go run ./gen -o tables.go -newer fencetest/newer.go

// This file answers, for one rune, what the scanner sees in it: its fold.
// The data is tables.go, generated from the newest Unicode data by ./gen;
// here it is indexed once, at package initialisation, into a two-level
// table read with two loads per rune. The index is never written after.

// Values of the rune index.
const (
	idxOther     = 0 // the rune reads as nothing a fence token is made of
	idxInvisible = 1 // the rune is skipped
	idxAnyLetter = 2 // a letter of a newer Unicode version whose fold is unknown (pendingLetterRanges)
	idxFirstFold = 3 // foldRunes[v-idxFirstFold] holds the rune's fold
)

// runeIndex maps a rune to its index value: pages[page[r>>8]][r&0xFF],
// and to its class: classes[page[r>>8]<<8 | r&0xFF], an array the
// compiler indexes without a bounds check.
type runeIndex struct {
	page    [(utf8.MaxRune + 1) >> 8]uint8
	pages   [][256]uint16
	classes [256 * 256]uint8
	texts   []string // texts[v-idxFirstFold] is foldRunes[v-idxFirstFold] in UTF-8
}

// Rune classes: what a non-ASCII rune is to the scanner, in one load, so
// that the commonest runes of adversarial text (invisible ones, look-alike
// letters, less-than signs) need no fold lookup. A class from 'a' to 'z' is
// that letter: the rune folds to it and to nothing else.
const (
	rcOther     = iota // nothing a token is made of: ends a candidate, starts no unit
	rcInvisible        // skipped everywhere
	rcSpace            // folds to whitespace
	rcSlash            // folds to '/'
	rcLT               // a look-alike less-than: a unit of its own
	rcAmp              // an ampersand look-alike: may start a reference
	rcSlow             // any other fold: read it with foldAlt
	rcAnyLetter        // may fold to any letter (pendingLetterRanges): whichever the name needs
)

var index = buildIndex()

func buildIndex() *runeIndex {
	x := &runeIndex{pages: make([][256]uint16, 1)} // page 0: all other
	set := func(r rune, v uint16) {
		p := x.page[r>>8]
		if p == 0 {
			x.pages = append(x.pages, [256]uint16{})
			p = uint8(len(x.pages) - 1)
			x.page[r>>8] = p
		}
		x.pages[p][r&0xFF] = v
	}
	for _, t := range []struct {
		ranges string
		v      uint16
	}{{invisibleRanges, idxInvisible}, {pendingLetterRanges, idxAnyLetter}} {
		for i := 0; i < len(t.ranges)/3; i += 2 {
			for r := tableRune(t.ranges, i); r <= tableRune(t.ranges, i+1); r++ {
				set(r, t.v)
			}
		}
	}
	x.texts = make([]string, len(foldRunes)/3)
	for i := range x.texts {
		r := tableRune(foldRunes, i)
		set(r, uint16(i+idxFirstFold))
		x.texts[i] = string(r)
	}
	if len(x.pages) > 255 {
		panic("fence: rune index needs more than 255 pages")
	}
	for hi, p := range x.page {
		if p == 0 {
			continue
		}
		for lo := range 256 {
			x.classes[int(p)<<8|lo] = x.classify(rune(hi<<8 | lo))
		}
	}
	// U+FFFD stands for an invalid byte, which foldAlt reads as invisible.
	x.classes[int(x.page[utf8.RuneError>>8])<<8|utf8.RuneError&0xFF] = rcInvisible
	return x
}

// classify computes the class of non-ASCII rune r from its fold.
func (x *runeIndex) classify(r rune) uint8 {
	switch {
	case x.pages[x.page[r>>8]][r&0xFF] == idxAnyLetter:
		return rcAnyLetter
	case isLessThanRune(r) && !plainBlock(r):
		return rcLT
	case isAmpersandRune(r):
		return rcAmp
	}
	f, _, alt := x.foldAlt(r)
	switch {
	case f == "":
		return rcInvisible
	case alt != 0 || len(f) != 1:
		return rcSlow
	case f[0] == ' ':
		return rcSpace
	case f[0] == '/':
		return rcSlash
	case 'a' <= f[0]|0x20 && f[0]|0x20 <= 'z':
		return f[0] | 0x20
	case f[0] == '?', f[0] == '<', f[0] == '&':
		return rcOther
	}
	// Digits, '#' and ';' continue a reference, '\\' may be a slash: the
	// few runes that fold to one take the slow path.
	return rcSlow
}

// runeText returns r in UTF-8, or a string the scanner reads exactly as it
// reads r (the same fold), without allocating: "" for an invisible rune,
// "?" for one that folds to nothing a token is made of.
func runeText(r rune) string {
	if r < utf8.RuneSelf {
		return asciiFold[r : r+1]
	}
	if r == utf8.RuneError {
		return "\uFFFD"
	}
	if plainBlock(r) {
		return "?"
	}
	switch v := index.pages[index.page[r>>8]][r&0xFF]; v {
	case idxOther:
		return "?"
	case idxInvisible:
		return ""
	case idxAnyLetter:
		return anyLetterText
	default:
		return index.texts[v-idxFirstFold]
	}
}

// anyLetterText is a letter of unknown fold (rcAnyLetter): any such rune
// reads as any other, so runeText returns this one for each.
var anyLetterText = string(tableRune(pendingLetterRanges, 0))

// classOf returns the class of non-ASCII rune r.
func classOf(r rune) uint8 {
	return index.classes[int(index.page[r>>8])<<8|int(r&0xFF)]
}

// runeAt decodes the rune at s[i] (a non-ASCII byte), every form inline
// (emoji and the newest letters are four bytes; adversarial text may hold
// one per unit); an invalid byte is utf8.RuneError of width 1.
func runeAt(s string, i int) (rune, int) {
	c0 := s[i]
	switch {
	case c0 < 0xC2 || c0 > 0xF4:
		return utf8.RuneError, 1 // a continuation byte or a byte no rune starts with
	case c0 < 0xE0 && i+1 < len(s):
		if c1 := s[i+1]; c1&0xC0 == 0x80 {
			return rune(c0&0x1F)<<6 | rune(c1&0x3F), 2
		}
	case c0 >= 0xE0 && c0 < 0xF0 && i+2 < len(s):
		c1, c2 := s[i+1], s[i+2]
		if c1&0xC0 == 0x80 && c2&0xC0 == 0x80 {
			r := rune(c0&0x0F)<<12 | rune(c1&0x3F)<<6 | rune(c2&0x3F)
			if r >= 0x800 && (r < 0xD800 || r > 0xDFFF) {
				return r, 3
			}
		}
	case c0 >= 0xF0 && i+3 < len(s):
		c1, c2, c3 := s[i+1], s[i+2], s[i+3]
		if c1&0xC0 == 0x80 && c2&0xC0 == 0x80 && c3&0xC0 == 0x80 {
			r := rune(c0&0x07)<<18 | rune(c1&0x3F)<<12 | rune(c2&0x3F)<<6 | rune(c3&0x3F)
			if r >= 0x10000 && r <= utf8.MaxRune {
				return r, 4
			}
		}
	}
	return utf8.DecodeRuneInString(s[i:])
}

// asciiFold holds every ASCII byte's own fold (a one-byte string of it).
const asciiFold = "\x00\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0a\x0b\x0c\x0d\x0e\x0f" +
	"\x10\x11\x12\x13\x14\x15\x16\x17\x18\x19\x1a\x1b\x1c\x1d\x1e\x1f" +
	" !\"#$%&'()*+,-./0123456789:;<=>?@ABCDEFGHIJKLMNOPQRSTUVWXYZ[\\]^_`abcdefghijklmnopqrstuvwxyz{|}~\x7f"

// foldOf returns what the scanner sees in the non-ASCII rune r: "" when r is
// invisible, "?" when it is nothing a fence token is made of, else its
// compatibility decomposition in ASCII (a space for any whitespace, the model
// of a visual look-alike, cut after the first rune that is none of these).
// visual reports that a look-alike mapping took part, which no normaliser
// makes: such a fold counts for a fence name, never inside a character
// reference.
func foldOf(r rune) (fold string, visual bool) {
	fold, visual, _ = foldAlt(r)
	return fold, visual
}

// foldAlt is foldOf and, for a rune that reads as an ASCII letter its fold
// is not (U+017F LONG S: "s" to NFKC, "f" to the eye), that letter.
func foldAlt(r rune) (fold string, visual bool, alt byte) {
	return index.foldAlt(r)
}

// foldAlt is foldAlt read from x.
func (x *runeIndex) foldAlt(r rune) (fold string, visual bool, alt byte) {
	if r == utf8.RuneError {
		return "", false, 0 // an invalid byte, which some readers drop
	}
	if plainBlock(r) || r > utf8.MaxRune || r < 0 {
		return "?", false, 0
	}
	v := x.pages[x.page[r>>8]][r&0xFF]
	switch v {
	case idxOther, idxAnyLetter:
		return "?", false, 0 // a letter of unknown fold continues no reference
	case idxInvisible:
		return "", false, 0
	}
	info := foldInfoAt(int(v - idxFirstFold))
	off, n := info&0xFFFFF, info>>20&0xF
	return foldPool[off : off+n], info>>24&1 != 0, byte(info >> 25)
}

// plainBlock reports whether r lies in a large block (CJK ideographs,
// Hangul syllables, emoji) none of whose runes folds to anything a fence
// token is made of: a fast reject. The generator checks this against the
// data (U+4E3F, a slash look-alike, is the one exception).
func plainBlock(r rune) bool {
	return 0x3400 <= r && r <= 0x4DBF || 0x4E00 <= r && r <= 0x9FFF && r != 0x4E3F ||
		0xAC00 <= r && r <= 0xD7A3 || 0x1F300 <= r && r <= 0x1FAFF
}

// Fold returns what the scanner sees in rune r: "" when r is invisible,
// "?" when it is nothing a fence token is made of, else the ASCII it
// reads as (its compatibility decomposition, under the newest Unicode data
// in tables.go, with whitespace as ' ' and look-alikes as their model).
// lookAlike reports that a visual look-alike mapping, which no normaliser
// makes, took part.
func Fold(r rune) (fold string, lookAlike bool) {
	if r < utf8.RuneSelf {
		if r < 0x20 && !isASCIISpace(byte(r)) || r == 0x7F {
			return "", false
		}
		if r < 0 {
			return "?", false
		}
		if isASCIISpace(byte(r)) {
			return " ", false
		}
		return asciiFold[r : r+1], false
	}
	return foldOf(r)
}

// Invisible reports whether the scanner skips rune r wherever it stands in
// a token: format characters, combining marks, variation selectors, tag
// characters, default-ignorable code points, noncharacters, controls other
// than whitespace, and U+FFFD (which stands for an invalid byte).
func Invisible(r rune) bool {
	f, _ := Fold(r)
	return f == ""
}
