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
	idxFirstFold = 2 // foldRunes[v-idxFirstFold] holds the rune's fold
)

// runeIndex maps a rune to its index value: pages[page[r>>8]][r&0xFF].
type runeIndex struct {
	page  [(utf8.MaxRune + 1) >> 8]uint8
	pages [][256]uint16
}

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
	for _, rg := range invisibleRanges {
		for r := rg[0]; r <= rg[1]; r++ {
			set(r, idxInvisible)
		}
	}
	for i, r := range foldRunes {
		set(r, uint16(i+idxFirstFold))
	}
	if len(x.pages) > 255 {
		panic("fence: rune index needs more than 255 pages")
	}
	return x
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
	if r == utf8.RuneError {
		return "", false, 0 // an invalid byte, which some readers drop
	}
	if plainBlock(r) || r > utf8.MaxRune || r < 0 {
		return "?", false, 0
	}
	v := index.pages[index.page[r>>8]][r&0xFF]
	switch v {
	case idxOther:
		return "?", false, 0
	case idxInvisible:
		return "", false, 0
	}
	info := foldInfo[v-idxFirstFold]
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
