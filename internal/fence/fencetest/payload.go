package fencetest

import (
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"testing"
)

// A Class is a family of fence-like payloads: Gen writes one payload that
// forms a fence token of name in at least one view (an opening or a closing
// one, at random).
type Class struct {
	Name string
	Gen  func(rng *rand.Rand, name string) string
}

// Classes are the payload families the fence must hold against, each
// generated whole (random spellings, positions and values), not as a list.
var Classes = []Class{
	{"vanishing-reference", genVanishing},
	{"compatibility-reference", genCompatRef},
	{"newer-compatibility-letter", genNewerLetters},
	{"look-alike-and-invisible", genLookAlike},
	{"mixed", genMixed},
	{"order-dependent-reference", genOrderDependent},
	{"soup", genSoup},
	{"control-after-reference", genControlAfterRef},
	{"decoders-differ", genDecodersDiffer},
	{"utf8-fusion", genFusion},
}

// fusible are multi-byte spellings of the token's parts that NFKC folds to
// ASCII: less-than look-alikes and a fullwidth slash.
var fusible = []string{"\uFF1C", "\uFE64", "\uFF0F"}

// split writes the UTF-8 bytes of r with something a reader deletes
// between two of them (a format character, a reference Python deletes,
// "&#x;" or U+FFFD itself), so that the bytes form r again once it is
// gone: fragments of invalid UTF-8 that fuse.
func split(rng *rand.Rand, r string) string {
	cut := 1 + rng.IntN(len(r)-1)
	gap := oneOf(rng, "\u200B", "\u00AD", "\uFEFF", "\u2060", "&#1;", "&#xFDD0;", "&#11;", "&#x;", "\uFFFD")
	return r[:cut] + gap + r[cut:]
}

// genFusion writes a token whose opener, slash or a letter of the name is
// a fullwidth form split by a deletable character.
func genFusion(rng *rand.Rand, name string) string {
	opener, slash := "<", ""
	if rng.IntN(2) == 0 {
		slash = "/"
	}
	parts := []string{opener, slash}
	letters := make([]string, len(name))
	for i := 0; i < len(name); i++ {
		letters[i] = string(name[i])
	}
	switch rng.IntN(3) {
	case 0:
		parts[0] = split(rng, fusible[rng.IntN(2)])
	case 1:
		parts[1] = split(rng, fusible[2])
	default:
		i := rng.IntN(len(name))
		c := name[i]
		if 'a' <= c && c <= 'z' {
			letters[i] = split(rng, string(rune(0xFF41+int(c-'a'))))
		}
	}
	return parts[0] + parts[1] + strings.Join(letters, "") + ">"
}

// decodersDiffer spells c (an ASCII byte) as a reference Go's and
// Python's decoders read apart: a number past U+10FFFF that Go's rune
// wraps around to c and Python reads as U+FFFD; or, for c 0, "&#x;",
// which Go reads as U+FFFD and Python leaves.
func decodersDiffer(rng *rand.Rand, c byte) string {
	if c == 0 {
		return oneOf(rng, "&#x;", "&#X;")
	}
	wraps := int64(1+rng.IntN(3)) << 32 // a multiple of 2^32 wraps to nothing
	if rng.IntN(2) == 0 {
		return fmt.Sprintf("&#%d;", wraps+int64(c))
	}
	return fmt.Sprintf("&#x%x;", wraps+int64(c))
}

// genDecodersDiffer builds the token for one decoder's reader, with
// references the other decoder reads otherwise. For a reader who decodes
// as Go does and drops U+FFFD: characters of the token as numbers that
// wrap around to them, and "&#x;" between them. For one who decodes as
// Python does and drops U+FFFD: numbers past U+10FFFF (to Go, letters)
// between them.
func genDecodersDiffer(rng *rand.Rand, name string) string {
	token := "</" + name + ">"
	if rng.IntN(3) == 0 {
		token = "<" + name + ">"
	}
	goSide := rng.IntN(2) == 0
	var b strings.Builder
	for i := 0; i < len(token); i++ {
		switch {
		case goSide && rng.IntN(3) == 0:
			b.WriteString(decodersDiffer(rng, token[i]))
		default:
			b.WriteByte(token[i])
		}
		if i+1 < len(token) && rng.IntN(2) == 0 {
			if goSide {
				b.WriteString(decodersDiffer(rng, 0))
			} else {
				b.WriteString(decodersDiffer(rng, 'a'+byte(rng.IntN(26))))
			}
		}
	}
	s := b.String()
	if !strings.Contains(s, "&#") {
		s = "<" + decodersDiffer(rng, 'q') + s[1:]
	}
	return s
}

// deleted are numeric values whose reference Python's html.unescape
// deletes: C0 controls but tab, LF, FF, CR (and NUL), DEL, the 66
// noncharacters.
var deleted = func() []rune {
	var out []rune
	for v := rune(1); v <= 0x1F; v++ {
		if v != '\t' && v != '\n' && v != '\f' && v != '\r' {
			out = append(out, v)
		}
	}
	out = append(out, 0x7F)
	for v := rune(0xFDD0); v <= 0xFDEF; v++ {
		out = append(out, v)
	}
	for p := rune(0); p <= 0x10; p++ {
		out = append(out, p<<16|0xFFFE, p<<16|0xFFFF)
	}
	return out
}()

// numericRef spells v as a numeric reference with random base, case and
// leading zeros, always with its semicolon.
func numericRef(rng *rand.Rand, v rune) string {
	zeros := strings.Repeat("0", rng.IntN(3))
	switch rng.IntN(3) {
	case 0:
		return fmt.Sprintf("&#%s%d;", zeros, v)
	case 1:
		return fmt.Sprintf("&#x%s%x;", zeros, v)
	}
	return fmt.Sprintf("&#X%s%X;", zeros, v)
}

func vanishing(rng *rand.Rand) string {
	return numericRef(rng, deleted[rng.IntN(len(deleted))])
}

// genVanishing hides deleted references between the less-than, the slash
// and the letters of the name.
func genVanishing(rng *rand.Rand, name string) string {
	var b strings.Builder
	b.WriteString("<")
	gap := func() {
		for range rng.IntN(3) {
			b.WriteString(vanishing(rng))
		}
	}
	gap()
	if rng.IntN(2) == 0 {
		b.WriteString("/")
		gap()
	}
	for i := 0; i < len(name); i++ {
		b.WriteByte(name[i])
		if i+1 < len(name) && rng.IntN(2) == 0 {
			b.WriteString(vanishing(rng))
		}
	}
	b.WriteString(">")
	s := b.String()
	if !strings.Contains(s, "&#") { // at least one
		s = "<" + vanishing(rng) + s[1:]
	}
	return s
}

// Compatibility forms that NFKC folds to the ASCII character.
var compat = map[byte][]string{
	'&': {"\uFF06", "\uFE60"},
	'#': {"\uFF03", "\uFE5F"},
	';': {"\uFF1B", "\uFE54", "\u037E"},
	'<': {"\uFF1C", "\uFE64"},
	'/': {"\uFF0F"},
	'x': {"\uFF58", "\U0001D431", "\u24E7"},
	'X': {"\uFF38", "\U0001D417"},
	'l': {"\uFF4C", "\U0001D425", "\u24DB"},
	't': {"\uFF54", "\U0001D42D", "\u1D57"},
	'L': {"\uFF2C", "\U0001D40B", "\u1D38"},
	'T': {"\uFF34", "\U0001D413", "\u1D40"},
}

// compatDigit is a compatibility form of an ASCII digit: fullwidth,
// mathematical, superscript, circled, or (Unicode 16) outlined.
func compatDigit(rng *rand.Rand, d byte) string {
	k := rune(d - '0')
	forms := []rune{0xFF10 + k, 0x1D7CE + k, 0x1D7EC + k, 0x1CCF0 + k}
	if k > 0 {
		forms = append(forms, 0x2460+k-1)
	}
	return string(forms[rng.IntN(len(forms))])
}

// compatSpell writes s with each character, at random, in a compatibility
// form NFKC folds back to it.
func compatSpell(rng *rand.Rand, s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch forms := compat[c]; {
		case len(forms) > 0 && rng.IntN(3) > 0:
			b.WriteString(forms[rng.IntN(len(forms))])
		case '0' <= c && c <= '9' && rng.IntN(3) > 0:
			b.WriteString(compatDigit(rng, c))
		case 'a' <= c|0x20 && c|0x20 <= 'f' && i > 2 && rng.IntN(3) == 0:
			b.WriteRune(rune(c|0x20) - 'a' + 0xFF41) // a fullwidth hex digit
		default:
			b.WriteByte(c)
		}
		if rng.IntN(6) == 0 {
			b.WriteString(invisibles[rng.IntN(len(invisibles))])
		}
	}
	return b.String()
}

// lessThanRefs are references to '<'.
var lessThanRefs = []string{"&lt;", "&LT;", "&#60;", "&#060;", "&#x3C;", "&#x3c;", "&#X3C;", "&#x003c;"}

// genCompatRef writes the less-than as a reference in compatibility forms
// (NFKC then decode gives '<'), or as a reference to a compatibility form
// of '<' (decode then NFKC does).
func genCompatRef(rng *rand.Rand, name string) string {
	var lt string
	switch rng.IntN(4) {
	case 0:
		lt = numericRef(rng, []rune{0xFF1C, 0xFE64}[rng.IntN(2)])
	default:
		for lt == "" || !strings.ContainsFunc(lt, func(r rune) bool { return r >= 0x80 }) {
			lt = compatSpell(rng, lessThanRefs[rng.IntN(len(lessThanRefs))])
		}
	}
	slash := ""
	if rng.IntN(2) == 0 {
		slash = []string{"/", "\uFF0F", "&#47;", "&sol;", "&#x2F;"}[rng.IntN(5)]
	}
	return lt + slash + spellName(rng, name, rng.IntN(2) == 0) + ">"
}

// genOrderDependent writes a numeric reference without its semicolon
// whose extent depends on the order of the views: an invisible rune or a
// compatibility form (the bridge) follows its digits, and then a hex
// letter of the name. Decoding first ends the reference at the bridge, so
// the letter after it is the next letter of the token (in a view that then
// drops the invisible rune or folds the form); dropping or folding first
// makes the letter one more digit of the reference, which then decodes to
// something else. The reference stands for the less-than when the name
// starts with a hex letter, else for the letter before a hex letter of the
// name (at random among the places where either works).
func genOrderDependent(rng *rand.Rand, name string) string {
	var at []int // -1: the less-than; k: name[k]
	if isHexLetter(name[0]) {
		at = append(at, -1)
	}
	for k := 0; k+1 < len(name); k++ {
		if isHexLetter(name[k+1]) {
			at = append(at, k)
		}
	}
	if len(at) == 0 {
		return genLookAlike(rng, name) // no letter a reference could take in
	}
	k := at[rng.IntN(len(at))]
	ref := func(v rune) string {
		amp := []string{"&", "&", "\uFF06", "\uFE60"}[rng.IntN(4)] // NFKC makes the last two '&'
		if rng.IntN(2) == 0 {
			return fmt.Sprintf("%s#x%s%x", amp, strings.Repeat("0", rng.IntN(2)), v)
		}
		return fmt.Sprintf("%s#X%X", amp, v)
	}
	var b strings.Builder
	if k < 0 {
		b.WriteString(ref('<'))
	} else {
		b.WriteString([]string{"<", "</", "\uFF1C", "&lt;"}[rng.IntN(4)])
		b.WriteString(name[:k])
		b.WriteString(ref(rune(name[k])))
	}
	next := name[k+1]
	if rng.IntN(2) == 0 {
		b.WriteString(invisibles[rng.IntN(5)]) // Cf runes, which no-cf removes
		b.WriteByte(next - byte(rng.IntN(2))*0x20)
	} else {
		b.WriteRune(rune(next) - 'a' + 0xFF41) // a fullwidth letter, which NFKC folds
	}
	b.WriteString(name[k+2:])
	return b.String() + ">"
}

func isHexLetter(c byte) bool { return 'a' <= c && c <= 'f' }

// oneOf returns one of xs at random.
func oneOf(rng *rand.Rand, xs ...string) string { return xs[rng.IntN(len(xs))] }

// genControlAfterRef writes a token whose gap is a hex reference, without
// its semicolon, to a value Python deletes, with a format character or a
// compatibility ampersand in it, and then a control Python's whitespace
// holds (U+001C–U+001F) before a name that starts with a hex letter. A
// reader who folds and removes Cf, then decodes with Python, ends the
// reference at the control and deletes it: "<" + U+001F + "frame". A
// reader who drops every invisible rune reads the name's first letter as
// one more digit instead, so a scanner that reads Cf and the other
// invisible runes alike sees only that reading.
func genControlAfterRef(rng *rand.Rand, name string) string {
	if !isHexLetter(name[0]) {
		return genOrderDependent(rng, name)
	}
	var b strings.Builder
	b.WriteString(oneOf(rng, "<", "</", "\uFF1C", "&lt;", "\u2039"))
	amp := oneOf(rng, "&", "\uFF06", "\uFE60")
	b.WriteString(amp)
	b.WriteString("#")
	if amp == "&" || rng.IntN(2) == 0 {
		b.WriteString(invisibles[rng.IntN(5)]) // so that only a Cf-stripping reader sees one reference
	}
	b.WriteString(oneOf(rng, "x", "X"))
	b.WriteString(strings.Repeat("0", rng.IntN(3)))
	v := deleted[rng.IntN(len(deleted))]
	if rng.IntN(2) == 0 {
		fmt.Fprintf(&b, "%x", v)
	} else {
		fmt.Fprintf(&b, "%X", v)
	}
	b.WriteRune(rune(0x1C + rng.IntN(4)))
	if rng.IntN(2) == 0 {
		b.WriteByte(name[0] - 0x20)
	} else {
		b.WriteByte(name[0])
	}
	b.WriteString(name[1:])
	return b.String() + ">"
}

// genSoup spells every part of a token in any form the other classes use,
// at random and independently: a less-than in any form, references
// without their semicolon (so that what follows may extend them in some
// view), gaps of whitespace, slashes, invisible runes and deleted
// references in their own forms, and letters as references, compatibility
// or look-alike forms, with invisible or fullwidth runes between.
func genSoup(rng *rand.Rand, name string) string {
	semi := func(ref string) string {
		if strings.HasSuffix(ref, ";") && rng.IntN(2) == 0 {
			return ref[:len(ref)-1]
		}
		return ref
	}
	var b strings.Builder
	b.WriteString(semi(oneOf(rng, "<", "\uFF1C", "\uFE64", "&lt;", "&LT;", "&#60;", "&#x3c;", "&#X3C;", "&#0060;",
		compatSpell(rng, lessThanRefs[rng.IntN(len(lessThanRefs))]), numericRef(rng, 0xFF1C), "&amp;lt;")))
	for range rng.IntN(3) {
		b.WriteString(oneOf(rng, " ", "\t", "/", "\uFF0F", "&#47;", "&sol;", "&#x2F", "\u3000", "&nbsp;", "&Tab;",
			invisibles[rng.IntN(len(invisibles))], vanishing(rng), semi(vanishing(rng))))
	}
	for i := 0; i < len(name); i++ {
		if rng.IntN(3) == 0 {
			b.WriteString(semi(numericRef(rng, rune(name[i])-rune(rng.IntN(2))*0x20)))
		} else {
			b.WriteString(letterForm(rng, name[i]))
		}
		switch rng.IntN(4) {
		case 0:
			b.WriteString(invisibles[rng.IntN(5)])
		case 1:
			b.WriteString(semi(vanishing(rng)))
		}
	}
	return b.String() + oneOf(rng, ">", "", " ")
}

// newerLetters maps an ASCII letter to the runes of newerDecompositions
// (Unicode versions golang.org/x/text does not know) that decompose to it.
var newerLetters = func() map[byte][]rune {
	m := map[byte][]rune{}
	for r, d := range newerDecompositions {
		if len(d) == 1 && ('A' <= d[0] && d[0] <= 'Z' || 'a' <= d[0] && d[0] <= 'z') {
			m[d[0]|0x20] = append(m[d[0]|0x20], r)
		}
	}
	for _, rs := range m {
		sort.Slice(rs, func(i, j int) bool { return rs[i] < rs[j] })
	}
	return m
}()

// genNewerLetters spells the name with at least one letter in a form only
// the newest NFKC folds to ASCII (the outlined capitals of Unicode 16).
func genNewerLetters(rng *rand.Rand, name string) string {
	var b strings.Builder
	b.WriteString([]string{"<", "</", "\uFF1C/", "&lt;/", "< /"}[rng.IntN(5)])
	k := rng.IntN(len(name))
	for i := 0; i < len(name); i++ {
		c := name[i]
		if rs := newerLetters[c]; len(rs) > 0 && (i == k || rng.IntN(2) == 0) {
			b.WriteRune(rs[rng.IntN(len(rs))])
			continue
		}
		b.WriteString(letterForm(rng, c))
	}
	return b.String() + ">"
}

// invisibles are format characters (Cf), which the Cf-stripping view
// removes; the last two are combining marks, which no view here removes but
// which render as nothing on their own.
var invisibles = []string{"\u200B", "\u00AD", "\u2060", "\uFEFF", "\u200D", "\u202E", "\U000E0041", "\u180E", "\u2061", "\u200E", "\uFE0F", "\u034F"}

// letterForm is c in some form a reader sees as c.
func letterForm(rng *rand.Rand, c byte) string {
	k := rune(c - 'a')
	switch rng.IntN(7) {
	case 0:
		return string(rune(c) - 'a' + 'A')
	case 1:
		return string(0xFF41 + k)
	case 2:
		return string(0x1D41A + k) // mathematical bold small
	case 3:
		return string(0x1D400 + k) // mathematical bold capital
	case 4:
		return fmt.Sprintf("&#%d;", c)
	case 5:
		return string(0x24D0 + k) // circled small
	}
	return string(c)
}

// spellName writes name with letters in random forms, and invisible runes
// between them when invisible is set.
func spellName(rng *rand.Rand, name string, invisible bool) string {
	var b strings.Builder
	for i := 0; i < len(name); i++ {
		b.WriteString(letterForm(rng, name[i]))
		if invisible && i+1 < len(name) && rng.IntN(3) == 0 {
			b.WriteString(invisibles[rng.IntN(len(invisibles))])
		}
	}
	return b.String()
}

// genLookAlike is the classes the scanner already held: look-alike and
// encoded less-thans, whitespace and slashes, invisible runes, letter
// forms.
func genLookAlike(rng *rand.Rand, name string) string {
	lts := []string{"<", "\uFF1C", "\uFE64", "&lt;", "&#60;", "&#x3C;", "&amp;lt;", "&lt", "<", "&#xFF1C;", "\u2039", "\u3008"}
	gaps := []string{"", " ", "/", "\t/", " / ", "\u3000/", "//", "\u200B/", "/\u00AD", "\n"}
	return lts[rng.IntN(len(lts))] + gaps[rng.IntN(len(gaps))] + spellName(rng, name, true) + ">"
}

// genMixed draws each part from any class.
func genMixed(rng *rand.Rand, name string) string {
	var b strings.Builder
	switch rng.IntN(4) {
	case 0:
		b.WriteString("<")
	case 1:
		b.WriteString(compatSpell(rng, lessThanRefs[rng.IntN(len(lessThanRefs))]))
	case 2:
		b.WriteString(numericRef(rng, 0xFF1C))
	default:
		b.WriteString("\uFF1C")
	}
	for range rng.IntN(3) {
		b.WriteString([]string{vanishing(rng), "/", " ", "\u200B", "\uFF0F", "&#47;"}[rng.IntN(6)])
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if rs := newerLetters[c]; len(rs) > 0 && rng.IntN(3) == 0 {
			b.WriteRune(rs[rng.IntN(len(rs))])
		} else {
			b.WriteString(letterForm(rng, c))
		}
		if i+1 < len(name) && rng.IntN(4) == 0 {
			b.WriteString([]string{vanishing(rng), "\u200B", "\u00AD"}[rng.IntN(3)])
		}
	}
	return b.String() + ">"
}

// benign is text around the payloads.
var benign = []string{"", " ", "text ", "a < b ", "x &amp; y ", "<div>", "if a<b {", "\n", "日本語 ", "&#38; ", "1 ≤ 2 "}

// Text is random text holding payloads of the class (or of every class
// when c is nil) among benign text.
func Text(rng *rand.Rand, name string, c *Class) string {
	var b strings.Builder
	for range 1 + rng.IntN(4) {
		b.WriteString(benign[rng.IntN(len(benign))])
		cl := c
		if cl == nil {
			cl = &Classes[rng.IntN(len(Classes))]
		}
		b.WriteString(cl.Gen(rng, name))
	}
	b.WriteString(benign[rng.IntN(len(benign))])
	return b.String()
}

// EachClass runs fn as a subtest per payload class, each with its own
// random source drawn from seed and the class's position, so a failure
// replays alone.
func EachClass(t *testing.T, seed uint64, fn func(t *testing.T, rng *rand.Rand, c *Class)) {
	for i := range Classes {
		c := &Classes[i]
		t.Run(c.Name, func(t *testing.T) { fn(t, rand.New(rand.NewPCG(seed, uint64(i))), c) })
	}
}
