package prompt

import (
	"io"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// tagName is the name of an untrusted block's tags. Content is escaped when
// an opener is followed by a case-insensitive prefix match of this name.
const tagName = "untrusted"

// escapeTo writes content to w with every opener that starts an untrusted
// tag replaced by an HTML character reference: the ASCII "<" becomes "&lt;"
// and a look-alike such as U+FF1C becomes "&#xFF1C;". Nothing else changes,
// so the text survives and a reader can still see what was written.
//
// An opener starts a tag when, after any run of whitespace, slashes and
// invisible characters, the runes that follow spell "untrusted" as a prefix,
// letter by letter, where a rune matches a letter if its compatibility
// decomposition (NFKD) does after case folding or after mapping a known
// look-alike (Cyrillic, Greek, Armenian, small capitals ...) to it.
// Invisible characters between the letters are ignored.
//
// The cost is linear in len(content): the look-ahead from one opener stops at
// the first rune that can continue no tag, and no opener can continue a tag,
// so each rune is read at most twice.
func escapeTo(w io.StringWriter, content string) error {
	start := 0
	for i := 0; i < len(content); {
		c := content[i]
		if c < utf8.RuneSelf {
			if c == '<' && tagAt(content, i, 1) {
				if err := writeAll(w, content[start:i], "&lt;"); err != nil {
					return err
				}
				start = i + 1
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(content[i:])
		if isOpener(r) && tagAt(content, i, size) {
			var buf [16]byte
			ref := append(buf[:0], "&#x"...)
			ref = strconv.AppendUint(ref, uint64(r), 16)
			ref = append(ref, ';')
			upperHex(ref[3 : len(ref)-1])
			if err := writeAll(w, content[start:i], string(ref)); err != nil {
				return err
			}
			start = i + size
		}
		i += size
	}
	_, err := w.WriteString(content[start:])
	return err
}

// escape returns content escaped as escapeTo writes it.
func escape(content string) string {
	var b strings.Builder
	b.Grow(len(content))
	_ = escapeTo(&b, content) // a strings.Builder never fails
	return b.String()
}

func writeAll(w io.StringWriter, a, b string) error {
	if _, err := w.WriteString(a); err != nil {
		return err
	}
	_, err := w.WriteString(b)
	return err
}

func upperHex(b []byte) {
	for i, c := range b {
		if 'a' <= c && c <= 'f' {
			b[i] = c - 'a' + 'A'
		}
	}
}

// isOpener reports whether r is "<" or a character a reader may take for
// it. The list holds every rune whose NFKD decomposition starts with "<"
// (a test checks this against the Unicode tables) and visual look-alikes
// that no normalisation maps to "<".
func isOpener(r rune) bool {
	switch r {
	case '<',
		'\uFF1C', // FULLWIDTH LESS-THAN SIGN
		'\uFE64', // SMALL LESS-THAN SIGN
		'\u226E', // NOT LESS-THAN (NFD: "<" + U+0338)
		'\u2039', // SINGLE LEFT-POINTING ANGLE QUOTATION MARK
		'\u3008', // LEFT ANGLE BRACKET
		'\u2329', // LEFT-POINTING ANGLE BRACKET
		'\u27E8', // MATHEMATICAL LEFT ANGLE BRACKET
		'\u276C', // MEDIUM LEFT-POINTING ANGLE BRACKET ORNAMENT
		'\u276E', // HEAVY LEFT-POINTING ANGLE QUOTATION MARK ORNAMENT
		'\u2770', // HEAVY LEFT-POINTING ANGLE BRACKET ORNAMENT
		'\u02C2', // MODIFIER LETTER LEFT ARROWHEAD
		'\u1438', // CANADIAN SYLLABICS PA
		'\u29FC': // LEFT-POINTING CURVED ANGLE BRACKET
		return true
	}
	return false
}

// isSlash reports whether r is "/" or a character a reader may take for a
// slash (or for the backslash of a JSON-escaped "<\/").
func isSlash(r rune) bool {
	switch r {
	case '/', '\\',
		'\uFF0F', // FULLWIDTH SOLIDUS
		'\uFF3C', // FULLWIDTH REVERSE SOLIDUS
		'\u2215', // DIVISION SLASH
		'\u2216', // SET MINUS
		'\u2044', // FRACTION SLASH
		'\u29F8', // BIG SOLIDUS
		'\u29F9', // BIG REVERSE SOLIDUS
		'\u2571', // BOX DRAWINGS LIGHT DIAGONAL UPPER RIGHT TO LOWER LEFT
		'\u2572', // BOX DRAWINGS LIGHT DIAGONAL UPPER LEFT TO LOWER RIGHT
		'\uFE68': // SMALL REVERSE SOLIDUS
		return true
	}
	return false
}

// isIgnorable reports whether r is invisible or attaches to its neighbour:
// format characters (zero-width space and joiners, word joiner, soft hyphen,
// BOM, bidi controls, Unicode tag characters), combining marks (variation
// selectors, combining overlays), control characters other than whitespace,
// the Hangul fillers and the braille blank. The escaper skips them wherever
// they stand inside a would-be tag. utf8.RuneError stands for an invalid
// byte, which some readers drop; it is ignored too.
func isIgnorable(r rune) bool {
	switch r {
	case utf8.RuneError, '\u115F', '\u1160', '\u3164', '\uFFA0', '\u2800':
		return true
	}
	if r < utf8.RuneSelf {
		return r < 0x20 && !unicode.IsSpace(r) || r == 0x7F
	}
	return unicode.In(r, unicode.Cf, unicode.Mn, unicode.Me, unicode.Cc) && !unicode.IsSpace(r)
}

// tagAt reports whether the opener of size bytes at content[i] starts an
// untrusted tag.
func tagAt(content string, i, size int) bool {
	ok, _ := opensTag(content, i, size)
	return ok
}

// opensTag reports whether the opener of size bytes at content[i] starts an
// untrusted tag, and the index just past the last byte it read.
func opensTag(content string, i, size int) (ok bool, end int) {
	var m matcher
	if size > 1 {
		// The opener's own decomposition after its first rune (U+226E is
		// "<" followed by a combining overlay).
		d := norm.NFKD.PropertiesString(content[i:]).Decomposition()
		if len(d) > 0 {
			_, n := utf8.DecodeRune(d)
			if done, ok := m.feedAll(d[n:]); done {
				return ok, i + size
			}
		}
	}
	for j := i + size; j < len(content); {
		c := content[j]
		if c < utf8.RuneSelf {
			if done, ok := m.feed(rune(c)); done {
				return ok, j + 1
			}
			j++
			continue
		}
		r, n := utf8.DecodeRuneInString(content[j:])
		if r != utf8.RuneError {
			if d := norm.NFKD.PropertiesString(content[j:]).Decomposition(); len(d) > 0 {
				if done, ok := m.feedAll(d); done {
					return ok, j + n
				}
				j += n
				continue
			}
		}
		if done, ok := m.feed(r); done {
			return ok, j + n
		}
		j += n
	}
	return false, len(content) // the content ends before the name does
}

// matcher follows the runes after an opener: first a run of whitespace,
// slashes and ignorable runes, then the letters of tagName, with ignorable
// runes allowed between them.
type matcher struct {
	matched int // letters of tagName matched so far
}

// feed takes the next rune; done reports that the tag is decided, ok that
// it is a tag.
func (m *matcher) feed(r rune) (done, ok bool) {
	if isIgnorable(r) {
		return false, false
	}
	if m.matched == 0 && (unicode.IsSpace(r) || isSlash(r)) {
		return false, false
	}
	if !foldsTo(r, tagName[m.matched]) {
		return true, false
	}
	m.matched++
	return m.matched == len(tagName), true
}

// feedAll feeds the runes of the UTF-8 text d.
func (m *matcher) feedAll(d []byte) (done, ok bool) {
	for len(d) > 0 {
		r, n := utf8.DecodeRune(d)
		if done, ok := m.feed(r); done {
			return true, ok
		}
		d = d[n:]
	}
	return false, false
}

// foldsTo reports whether the (already decomposed) rune r reads as the
// lower-case ASCII letter c: the letter in either case, a rune of its case
// fold orbit (U+017F LATIN SMALL LETTER LONG S folds to "s", U+212A KELVIN
// SIGN to "k"), or a look-alike from another script.
func foldsTo(r rune, c byte) bool {
	if r < utf8.RuneSelf {
		return r|0x20 == rune(c) // c is a letter, so only its two cases match
	}
	for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
		if f < utf8.RuneSelf && f|0x20 == rune(c) {
			return true
		}
	}
	return lookAlike(r) == c
}

// lookAlike maps a rune of another script that is commonly confused with a
// letter of tagName (in either case) to that lower-case letter, or returns 0.
// The list follows the spirit of Unicode's confusables data for the seven
// letters u, n, t, r, s, e and d; runes that NFKD already maps to ASCII
// (fullwidth, mathematical, circled, Roman numeral letters) need no entry.
func lookAlike(r rune) byte {
	switch r {
	case 'υ', 'ս', 'Ս', 'ᴜ', 'ʋ', 'ꓴ', 'ᑌ', '∪', '⋃':
		return 'u'
	case 'ո', 'ռ', 'η', 'п', 'Ν', 'ꓠ', 'ɴ':
		return 'n'
	case 'τ', 'Τ', 'т', 'Т', 'ᴛ', 'ꓔ', 'Ꭲ', 'ƭ':
		return 't'
	case 'г', 'ᴦ', 'ʀ', 'ꓣ', 'Ꭱ', 'ɾ', 'ꭇ':
		return 'r'
	case 'ѕ', 'Ѕ', 'ꜱ', 'ꓢ', 'Ꮪ', 'ʂ':
		return 's'
	case 'е', 'Е', 'Ε', 'ᴇ', 'ҽ', 'ꓰ', 'Ꭼ', '℮', 'ɛ', 'є':
		return 'e'
	case 'ԁ', 'ᴅ', 'ꓓ', 'Ꭰ', 'ɗ', 'ɖ':
		return 'd'
	}
	return 0
}
