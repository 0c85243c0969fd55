// Package textgen generates text of the classes token counters must be
// checked on — ordinary (prose, code, JSON, CJK) and adversarial (white
// space mixes, control characters, combining marks, random Unicode and
// random bytes) — from a seeded random source, so every test corpus is
// reproducible.
package textgen

import (
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Options shape the generated text.
type Options struct {
	// Portable leaves out the characters whose class JavaScript's regular
	// expressions define differently from tiktoken's regex engine: U+0085
	// and U+FEFF (white space or not), U+017F after an apostrophe (a
	// case-folded contraction), and code points unassigned in Go's
	// Unicode tables (15.0), which a newer JavaScript runtime may know
	// as letters or marks (Node 20: Unicode 17). Set it to compare with
	// JavaScript encoders.
	Portable bool
	// ShortRuns keeps white-space runs under 100 characters: JavaScript
	// encoders take time quadratic in a run's length.
	ShortRuns bool
}

// class is one kind of generated text.
type class struct {
	Name string
	gen  func(g *gen, size int) string
}

// Classes lists every class, ordinary ones first; "mixed" interleaves
// short stretches of all the others.
var Classes = append(mixable[:len(mixable):len(mixable)], class{"mixed", (*gen).mixed})

var mixable = []class{
	{"prose", (*gen).prose},
	{"code", (*gen).code},
	{"json", (*gen).json},
	{"cjk", (*gen).cjk},
	{"base64", (*gen).base64},
	{"hex", (*gen).hex},
	{"uuid", (*gen).uuid},
	{"numbers", (*gen).numbers},
	{"letter_ids", (*gen).letterIDs},
	{"scripts", (*gen).scripts},
	{"marks", (*gen).marks},
	{"controls", (*gen).controls},
	{"whitespace", (*gen).whitespace},
	{"emoji", (*gen).emoji},
	{"contractions", (*gen).contractions},
	{"case", (*gen).mixedCase},
	{"long_runs", (*gen).longRuns},
	{"unicode", (*gen).randomUnicode},
	{"bytes", (*gen).randomBytes},
}

// Generate returns a text of roughly size bytes of class c.
func (c class) Generate(r *rand.Rand, size int, opt Options) string {
	g := &gen{r: r, opt: opt}
	s := c.gen(g, max(size, 1))
	if opt.Portable {
		s = portable(s)
	}
	return s
}

type gen struct {
	r   *rand.Rand
	opt Options
}

func (g *gen) pick(xs []string) string { return xs[g.r.IntN(len(xs))] }
func (g *gen) n(k int) int             { return g.r.IntN(k) }

var words = strings.Fields(`the of and to in is that for it as was with be by on not he
this are or his from at which but have an they you were their one all we can her has there
been if more when will would who so no time people about into than only other new some could
these two may first then do any like my now over such our man me even most made after also
did many before must through back years where much your way well down should because each
just those how too little state good very make world still own see men work long get here
between both life being under never day same another know while last might us great old year
off come since against go came right used take three token budget window request provider
message evidence retrieval context model counting encoder language international
organization characteristically responsibilities Washington Monday January I It The In A`)

var punct = []string{".", ",", ";", ":", "!", "?", " -", "—", "…", "(", ")", "\"", "'", "“", "”"}

func (g *gen) prose(size int) string {
	var b strings.Builder
	for b.Len() < size {
		n := 5 + g.n(20)
		for i := range n {
			w := g.pick(words)
			if i == 0 {
				w = strings.ToUpper(w[:1]) + w[1:]
			} else {
				b.WriteByte(' ')
			}
			b.WriteString(w)
			if g.n(8) == 0 {
				b.WriteString(g.pick(punct[1:]))
			}
		}
		b.WriteString(g.pick([]string{".", ".", ".", "?", "!", ":"}))
		switch g.n(6) {
		case 0:
			b.WriteString("\n\n")
		case 1:
			b.WriteString("\n")
		default:
			b.WriteByte(' ')
		}
	}
	return b.String()
}

func (g *gen) ident() string {
	w := g.pick(words)
	switch g.n(4) {
	case 0:
		return w + strings.ToUpper(w[:1]) + g.pick(words)
	case 1:
		return w + "_" + g.pick(words)
	case 2:
		return strings.ToUpper(w[:1]) + w[1:] + fmt.Sprint(g.n(100))
	}
	return w
}

func (g *gen) code(size int) string {
	var b strings.Builder
	depth := 0
	for b.Len() < size {
		indent := strings.Repeat(g.pick([]string{"\t", "    ", "  "}), depth)
		switch g.n(8) {
		case 0:
			fmt.Fprintf(&b, "%sfunc %s(%s %s) (int, error) {\n", indent, g.ident(), g.ident(), g.pick([]string{"string", "[]byte", "*Exact", "map[string]int"}))
			depth = min(depth+1, 6)
		case 1:
			if depth > 0 {
				depth--
			}
			fmt.Fprintf(&b, "%s}\n", strings.Repeat("\t", depth))
		case 2:
			fmt.Fprintf(&b, "%s// %s %s %s.\n", indent, g.ident(), g.pick(words), g.pick(words))
		case 3:
			fmt.Fprintf(&b, "%sif err := %s.%s(ctx, %q); err != nil {\n", indent, g.ident(), g.ident(), g.pick(words))
			depth = min(depth+1, 6)
		case 4:
			fmt.Fprintf(&b, "%sx%d := []int{%d, %d, 0x%x}\n", indent, g.n(9), g.n(1000), g.n(100000), g.r.Uint32())
		case 5:
			fmt.Fprintf(&b, "%sreturn fmt.Errorf(\"%s: %%w\", err)\n\n", indent, g.pick(words))
		case 6:
			fmt.Fprintf(&b, "%s%s += %s[i] * %d / (n+1) // %s\n", indent, g.ident(), g.ident(), g.n(50), g.pick(words))
		default:
			fmt.Fprintf(&b, "%sdef %s(self, %s=None):\n%s    return self.%s or '%s'\n", indent, g.ident(), g.ident(), indent, g.ident(), g.pick(words))
		}
	}
	return b.String()
}

func (g *gen) json(size int) string {
	var b strings.Builder
	pretty := g.n(2) == 0
	b.WriteString("[")
	for b.Len() < size {
		if pretty {
			b.WriteString("\n  ")
		}
		fmt.Fprintf(&b, `{"id":"%s","n":%d,"score":%.4f,"name":"%s","tags":["%s","%s"],"ok":%v,"note":"\u00e9\n%s"}`,
			g.uuidOne(), g.n(100000), g.r.Float64()*100, g.ident(), g.pick(words), g.pick(words), g.n(2) == 0, g.pick(words))
		b.WriteString(",")
	}
	b.WriteString("{}]")
	s := b.String()
	if pretty {
		s = strings.ReplaceAll(s, `,"`, ",\n    \"")
		s = strings.ReplaceAll(s, `":`, `": `)
	}
	return s
}

func (g *gen) runes(size int, ranges [][2]rune, extra []string) string {
	var b strings.Builder
	for b.Len() < size {
		if len(extra) > 0 && g.n(6) == 0 {
			b.WriteString(g.pick(extra))
			continue
		}
		rg := ranges[g.n(len(ranges))]
		b.WriteRune(rg[0] + rune(g.n(int(rg[1]-rg[0]+1))))
	}
	return b.String()
}

func (g *gen) cjk(size int) string {
	return g.runes(size, [][2]rune{{0x4E00, 0x9FFF}, {0x3041, 0x3096}, {0x30A1, 0x30FA}, {0xAC00, 0xD7A3}, {0x4E00, 0x4FFF}},
		[]string{"。", "、", "「", "」", "，", "！", " ", "\n", "123", "ー", "の", "は", "AI"})
}

func (g *gen) bytesN(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(g.r.UintN(256))
	}
	return b
}

func (g *gen) base64(size int) string {
	var b strings.Builder
	for b.Len() < size {
		n := 1 + g.n(400)
		switch g.n(3) {
		case 0:
			b.WriteString(base64.StdEncoding.EncodeToString(g.bytesN(n)))
		case 1:
			b.WriteString(base64.RawURLEncoding.EncodeToString(g.bytesN(n)))
		default:
			b.WriteString("data:image/png;base64," + base64.StdEncoding.EncodeToString(g.bytesN(n)))
		}
		b.WriteString(g.pick([]string{"\n", " ", "\", \"", ""}))
	}
	return b.String()
}

func (g *gen) hex(size int) string {
	var b strings.Builder
	for b.Len() < size {
		h := hex.EncodeToString(g.bytesN(1 + g.n(40)))
		if g.n(3) == 0 {
			h = strings.ToUpper(h)
		}
		b.WriteString(g.pick([]string{"", "0x", "sha256:", "commit "}) + h + g.pick([]string{"\n", " ", "  ", ", "}))
	}
	return b.String()
}

func (g *gen) uuidOne() string {
	h := hex.EncodeToString(g.bytesN(16))
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

func (g *gen) uuid(size int) string {
	var b strings.Builder
	for b.Len() < size {
		b.WriteString(g.uuidOne() + g.pick([]string{"\n", " ", ",", "\", \""}))
	}
	return b.String()
}

func (g *gen) numbers(size int) string {
	var b strings.Builder
	for b.Len() < size {
		switch g.n(6) {
		case 0:
			fmt.Fprintf(&b, ", %d", g.n(1000))
		case 1:
			fmt.Fprintf(&b, " %d", g.n(10))
		case 2:
			fmt.Fprintf(&b, "%d.%d", g.r.Int64N(1e12), g.n(1000))
		case 3:
			fmt.Fprintf(&b, "\n%d\t%d", g.r.Int64(), g.n(7))
		case 4:
			fmt.Fprintf(&b, "%s%d", g.pick([]string{"-", "+", "$", "#", "(", "1e", "٣", "½", "Ⅻ"}), g.n(100000))
		default:
			b.WriteString(strings.Repeat(fmt.Sprint(g.n(10)), 1+g.n(40)))
		}
	}
	return b.String()
}

func (g *gen) letterIDs(size int) string {
	const az = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-"
	var b strings.Builder
	for b.Len() < size {
		n := 1 + g.n(30)
		alpha := 26 + 26*g.n(2) + 12*g.n(2)
		for range n {
			b.WriteByte(az[g.n(alpha)])
		}
		b.WriteString(g.pick([]string{" ", "\n", ", ", "/", "."}))
	}
	return b.String()
}

func (g *gen) scripts(size int) string {
	return g.runes(size, [][2]rune{
		{0x0900, 0x097F}, {0x0E00, 0x0E5B}, {0x1200, 0x137C}, {0x10A0, 0x10FF}, {0x0530, 0x058F},
		{0x05D0, 0x05EA}, {0x0600, 0x06FF}, {0x0400, 0x04FF}, {0x0370, 0x03FF}, {0x0B80, 0x0BFF},
		{0x0F00, 0x0FFF}, {0x1780, 0x17FF}, {0x0D00, 0x0D7F}, {0x1000, 0x109F},
	}, []string{" ", " ", ".", "\n", ", "})
}

func (g *gen) marks(size int) string {
	var b strings.Builder
	for b.Len() < size {
		switch g.n(5) {
		case 0:
			b.WriteString(g.pick([]string{" ", "1", ".", "\n", "'", "A", "中", "\t"}))
		case 1:
			b.WriteString(g.pick(words))
		default:
			b.WriteRune(rune(0x61 + g.n(26)))
		}
		for range g.n(4) {
			b.WriteRune(g.pick2([][2]rune{{0x0300, 0x036F}, {0x0483, 0x0489}, {0x0591, 0x05BD}, {0x093A, 0x094F}, {0x20D0, 0x20F0}, {0xFE20, 0xFE2F}}))
		}
	}
	return b.String()
}

func (g *gen) pick2(ranges [][2]rune) rune {
	rg := ranges[g.n(len(ranges))]
	return rg[0] + rune(g.n(int(rg[1]-rg[0]+1)))
}

func (g *gen) controls(size int) string {
	var b strings.Builder
	for b.Len() < size {
		switch g.n(4) {
		case 0:
			b.WriteByte(byte(g.n(0x20)))
		case 1:
			b.WriteRune(rune(0x80 + g.n(0x20)))
		case 2:
			b.WriteString("\x7f")
		default:
			b.WriteString(g.pick([]string{"\"A", "a", " ", "!", "'s", "1", "\u200b", "\u200d", "\u2060", "\u00ad", "é"}))
		}
	}
	return b.String()
}

var spaces = []string{" ", " ", "\t", "\n", "\r", "\r\n", "\v", "\f", "\u00a0", "\u1680", "\u2000", "\u2009", "\u200a", "\u2028", "\u2029", "\u202f", "\u205f", "\u3000", "\u0085", "\ufeff"}

func (g *gen) whitespace(size int) string {
	var b strings.Builder
	for b.Len() < size {
		n := 1 + g.n(12)
		if g.n(20) == 0 && !g.opt.ShortRuns {
			n = 100 + g.n(2000)
		}
		for range n {
			if g.n(3) == 0 {
				b.WriteString(g.pick(spaces))
			} else {
				b.WriteString(g.pick(spaces[:8]))
			}
		}
		b.WriteString(g.pick([]string{"a", "word", "1", "!", "\"", "中", "", "é", "//", "\x7f"}))
	}
	return b.String()
}

func (g *gen) emoji(size int) string {
	return g.runes(size, [][2]rune{{0x1F600, 0x1F64F}, {0x1F300, 0x1F5FF}, {0x1F680, 0x1F6FF}, {0x1F900, 0x1F9FF}, {0x2600, 0x26FF}},
		[]string{"\u200d", "\ufe0f", "🏽", "🇺🇸", "👩‍💻", " ", "!", "\n"})
}

func (g *gen) contractions(size int) string {
	var b strings.Builder
	for b.Len() < size {
		b.WriteString(g.pick([]string{"", " ", "x", "A", "é", "中", "1", "'", "''"}))
		b.WriteString(g.pick([]string{"'s", "'S", "'t", "'T", "'re", "'rE", "'Re", "'RE", "'ve", "'VE", "'m", "'M", "'ll", "'LL", "'lL", "'d", "'D", "'x", "'", "'ſ", "'ſt"}))
		b.WriteString(g.pick([]string{"", " ", "ound", "S", "1", "'", "\n"}))
	}
	return b.String()
}

func (g *gen) mixedCase(size int) string {
	var b strings.Builder
	for b.Len() < size {
		w := g.pick(words)
		switch g.n(5) {
		case 0:
			w = strings.ToUpper(w)
		case 1:
			w = "HTTP" + strings.ToUpper(w[:1]) + w[1:]
		case 2:
			w = "get" + strings.ToUpper(w[:1]) + w[1:] + "ById"
		case 3:
			w = "ǅ" + w + "Ⅳ" + "ǈ" + "ʰ" + "ª"
		}
		b.WriteString(w + g.pick([]string{" ", "", ".", "_", "\n"}))
	}
	return b.String()
}

func (g *gen) longRuns(size int) string {
	n := max(size, 1)
	switch g.n(6) {
	case 0:
		return strings.Repeat(g.pick([]string{"a", "ab", "xyz"}), n/2+1)
	case 1:
		return strings.Repeat(g.pick([]string{"=", "-", "*", "/", "!", "#"}), n)
	case 2:
		return strings.Repeat(g.pick([]string{" ", "\n", " \n", "\t ", " \t", "\r\n"}), n/2+1) + g.pick([]string{"", "x", " x"})
	case 3:
		return strings.Repeat("9", n)
	case 4:
		return strings.Repeat("中", n/3+1)
	}
	return g.letterIDs(n)
}

// randomUnicode draws characters from every plane: assigned ones (in Go's
// Unicode tables) and, less often, unassigned ones and surrogates'
// neighbours.
func (g *gen) randomUnicode(size int) string {
	var b strings.Builder
	for b.Len() < size {
		var r rune
		switch g.n(4) {
		case 0:
			r = rune(g.n(0x80))
		case 1:
			r = rune(g.n(0x800))
		case 2:
			r = rune(g.n(0x10000))
		default:
			r = rune(g.n(0x110000))
		}
		if !utf8.ValidRune(r) || !assigned(r) && g.n(4) != 0 {
			continue // mostly assigned characters, some unassigned ones
		}
		b.WriteRune(r)
	}
	return b.String()
}

// assigned reports whether Go's Unicode tables give r a category other
// than Cn (unassigned).
func assigned(r rune) bool {
	return unicode.In(r, unicode.L, unicode.M, unicode.N, unicode.P, unicode.S, unicode.Z, unicode.Cc, unicode.Cf, unicode.Co)
}

func (g *gen) randomBytes(size int) string {
	b := g.bytesN(size)
	// Bias towards bytes that make near-valid UTF-8.
	for i := range b {
		if g.n(3) == 0 {
			b[i] = 0x80 | b[i]&0x7f
		}
	}
	return string(b)
}

func (g *gen) mixed(size int) string {
	var b strings.Builder
	for b.Len() < size {
		c := mixable[g.n(len(mixable))]
		b.WriteString(c.gen(g, 1+g.n(200)))
	}
	return b.String()
}

// portable removes what Options.Portable leaves out; ill-formed bytes
// stay as they are.
func portable(s string) string {
	s = strings.NewReplacer("\u0085", " ", "\ufeff", " ").Replace(s)
	s = strings.ReplaceAll(s, "'ſ", "'s")
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if n > 1 && !assigned(r) {
			b.WriteString("?")
		} else {
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}
