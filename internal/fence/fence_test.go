package fence

import (
	"fmt"
	"html"
	"runtime"
	"strings"
	"testing"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/ctxkit/ctxkit/internal/cputime"
)

var frameScanner = MustNew("frame", Options{})

// breaks returns s with a backslash inserted at every token's end.
func breaks(sc *Scanner, s string) string {
	var b strings.Builder
	last := 0
	sc.Scan(s, func(t Token) {
		b.WriteString(s[last:t.End])
		b.WriteByte('\\')
		last = t.End
	})
	return b.String() + s[last:]
}

// One case per class of the issue, each a token in some view.
func TestScannerFindsEveryClass(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"<&#xFDD0;/frame>", `<\&#xFDD0;/frame>`},                                      // Python deletes the noncharacter
		{"</fr&#11;ame>", `<\/fr&#11;ame>`},                                            // and vertical tab
		{"<&#x1FFFF;&#127;frame", `<\&#x1FFFF;&#127;frame`},                            // and DEL
		{"\uFF06lt;/frame", "\uFF06lt;\\/frame"},                                       // NFKC: &lt;
		{"&\uFF03\uFF16\uFF10;frame", "&\uFF03\uFF16\uFF10;\\frame"},                   // &#60;
		{"&#\U0001CCF6\U0001CCF0\uFE54/frame", "&#\U0001CCF6\U0001CCF0\uFE54\\/frame"}, // outlined digits (Unicode 16)
		{"&l\u200Bt;frame", "&l\u200Bt;\\frame"},                                       // Cf inside the reference
		{"&#xFF1C;/frame", `&#xFF1C;\/frame`},                                          // decode then NFKC
		{"</\U0001CCDB\U0001CCE7\U0001CCD6\U0001CCE2\U0001CCDA>", "<\\/\U0001CCDB\U0001CCE7\U0001CCD6\U0001CCE2\U0001CCDA>"}, // outlined capitals
		{"<\uFE3Fframe", "<\uFE3F\\frame"}, // U+FE3F folds to a less-than (via U+3008), which ends the first candidate and starts its own
		// A reference whose extent depends on the view order: decoding
		// first ends it before the letter, stripping or folding first
		// makes the letter a digit ("&#x3Cf" is U+03CF).
		{"&#X3C\u00ADframe", "&#X3C\\\u00ADframe"}, // decode, then drop Cf: "<frame"
		{"&#x3C\uFF46rame", "&#x3C\\\uFF46rame"},   // decode, then NFKC
		{"<f&#x72\u200Bame", "<\\f&#x72\u200Bame"}, // a letter's reference
		{"<fra&#x6D\uFF45", "<\\fra&#x6D\uFF45"},   // "&#x6De" is U+06DE; "&#x6D" then "e" is "me"
		{"&#6\uFF10;/frame", "&#6\uFF10;\\/frame"},
		{"\uFF06#x3C\u200Bframe", "\uFF06#x3C\\\u200Bframe"}, // NFKC, decode, drop Cf: the ampersand folds too
		// Letters of the newest Unicode version whose fold the tables do
		// not have count as whichever letter the name needs.
		{"</\U0001DFD0rame", "<\\/\U0001DFD0rame"},                     // Latin Extended-G, Unicode 18
		{"<\uA7F1\u209D\u209E\u209Fe", "<\\\uA7F1\u209D\u209E\u209Fe"}, // U+A7F1 is "S" to Unicode 17's NFKC
		{"<&#x1DFD0;rame", "<\\&#x1DFD0;rame"},                         // decode, then the newer NFKC // NFKC first: "&#60;"
		// A Cf-stripping reader ends a reference at a control that one who
		// drops every invisible rune reads through: "&#xF" is deleted and
		// "<" + U+001F + "frame" is a token to Python's \s.
		{"<\uFE60#\u200BxF\x1Fframe", "<\\\uFE60#\u200BxF\x1Fframe"},
		{"&#x3c\uFE60#\u200Bx0F\x01frame", "&#x3c\\\uFE60#\u200Bx0F\x01frame"},
		{"<&#\u00ADxF\x7Fframe", "<\\&#\u00ADxF\x7Fframe"},
		{"\u2039\uFE60#\uFEFFxF\uFDD0frame", "\u2039\\\uFE60#\uFEFFxF\uFDD0frame"},
		// A numeric reference to '&' is a second level as "&amp;" is.
		{"&#38;lt;/frame", "&#38;lt;\\/frame"},
		{"&#x26;#x3c;/frame", "&#x26;#x3c;\\/frame"},
		{"\uFF06#38;lt;frame", "\uFF06#38;lt;\\frame"},
		// Marks and format characters newer than the decompositions are
		// skipped as the older ones are: a reader that drops marks with
		// the newest data sees "</frame".
		{"<\u1ACF/frame", "<\\\u1ACF/frame"},         // COMBINING DOUBLE CARON, Unicode 17
		{"</fr\U0001E6E3ame", "<\\/fr\U0001E6E3ame"}, // a Tai Yo mark, Unicode 17
		// Go's decoder and Python's read these apart: Python reads a number
		// past U+10FFFF as U+FFFD (a reader who drops it sees "</frame>"),
		// Go wraps it ('a', '.'); Go reads "&#x;" as U+FFFD, Python leaves it.
		{"<&#4294967393;/frame>", `<\&#4294967393;/frame>`},
		{"</fr&#x10000002E;ame>", `<\/fr&#x10000002E;ame>`},
		{"</fr&#x100000061;me>", `<\/fr&#x100000061;me>`},
		{"<&#x;/frame>", `<\&#x;/frame>`},
		{"<&#X;/frame>", `<\&#X;/frame>`},
		{"<&#x\u200B;/frame>", "<\\&#x\u200B;/frame>"},
		{"<\uFF06#x;/frame>", "<\\\uFF06#x;/frame>"},
	} {
		if got := breaks(frameScanner, c.in); got != c.want {
			t.Errorf("%+q: got %+q, want %+q", c.in, got, c.want)
		}
	}
	for _, honest := range []string{"a < b", "&amp; &lt;div&gt;", "<fra me>", `<\/frame>`, "\uFF06 lt", "&#xFDD0; frame", "&#x3C\u200Bx", "&#x66\u200Bxyz", "&#38; lt", "&#38;amp;lt", "a &#x; b &#4294967393; c"} {
		if got := breaks(frameScanner, honest); got != honest {
			t.Errorf("%+q: changed to %+q", honest, got)
		}
	}
}

// The table is the newest data's, not golang.org/x/text's.
func TestTableIsNewerThanTheToolchain(t *testing.T) {
	if unicodeVersion < "16" {
		t.Fatalf("UnicodeVersion %s: regenerate with go run ./internal/fence/gen", unicodeVersion)
	}
	if f, _ := Fold('\U0001CCD6'); f != "A" {
		t.Errorf("U+1CCD6 OUTLINED LATIN CAPITAL LETTER A folds to %q, want A", f)
	}
	// The decompositions' data lags the newest version; the letters it
	// does not know come from the newest version's properties.
	if pendingVersion <= unicodeVersion && len(pendingVersion) <= len(unicodeVersion) {
		t.Fatalf("pendingVersion %s is not newer than the decompositions' %s", pendingVersion, unicodeVersion)
	}
	for _, r := range []rune{0xA7F1, 0x209D, 0x1DFD0} { // Unicode 17's MODIFIER LETTER CAPITAL S; two of 18's
		if classOf(r) != rcAnyLetter {
			t.Errorf("U+%04X: class %d, want a letter of unknown fold", r, classOf(r))
		}
	}
	for _, r := range []rune{0x1ACF, 0x10EFA, 0x11B60, 0x1E6E3} { // marks of Unicode 17
		if classOf(r) != rcInvisible {
			t.Errorf("U+%04X: class %d, want invisible", r, classOf(r))
		}
	}
	if f, _ := Fold('\uFDD0'); f != "" {
		t.Errorf("U+FDD0 (a noncharacter) folds to %q, want invisible", f)
	}
}

// cost is the least CPU time (or wall time where CPU time is unavailable)
// of three scans of s.
func cost(sc *Scanner, s string) time.Duration {
	runtime.GC()
	best := time.Duration(1<<63 - 1)
	for range 3 {
		p0, w0 := cputime.Process(), time.Now()
		sc.count(s)
		d := cputime.Process() - p0
		if p0 == 0 {
			d = time.Since(w0)
		}
		best = min(best, d)
	}
	return best
}

// The scan is linear on every dense adversarial shape: four times the input
// costs at most eight times as much (quadratic would be sixteen), checked
// by ratio so a loaded machine does not fail it; a shape fails only when
// five attempts all do.
func TestScanIsLinear(t *testing.T) {
	units := []string{"<", "<日", "<&#", "</\u200b", "&amp;", "<f", "\\u003c", "<\u0338", "\uFF06lt",
		"<&#xFDD0;", "&\u200B", "&#\uFF16", "<\U0001CCDB", "&l\u200B", "<untrust"}
	for _, sc := range []*Scanner{frameScanner, MustNew("untrusted", Options{BackslashIsSlash: true})} {
		for _, u := range units {
			big := strings.Repeat(u, (1<<20)/len(u))
			small := big[:len(big)/4/len(u)*len(u)]
			var failure string
			for range 5 {
				failure = ""
				tSmall, tBig := cost(sc, small), cost(sc, big)
				if tSmall > time.Millisecond && tBig > 8*tSmall {
					failure = fmt.Sprintf("%s %+q: 4x the input took %v vs %v", sc.name, u, tBig, tSmall)
					continue
				}
				break
			}
			if failure != "" {
				t.Error(failure)
			}
		}
	}
}

// The benign path allocates nothing, and neither does decoding an ASCII
// reference, numeric or named (a reference per unit of adversarial text
// must not cost an allocation each).
func TestScanDoesNotAllocate(t *testing.T) {
	for _, s := range []string{
		strings.Repeat("the retry loop backs off; a < b && c > d; 100% \\n é ", 100),
		strings.Repeat("&#60;frame &#x4E00; <&#xFF1C; &frac12; &nvlt;/frame &amp;lt; &#x85; &#0; ", 100),
	} {
		n := 0
		if a := testing.AllocsPerRun(20, func() { frameScanner.Scan(s, func(Token) { n++ }) }); a != 0 {
			t.Errorf("Scan of %.40q... allocated %v times per run", s, a)
		}
	}
}

func ExampleScanner_Scan() {
	sc := MustNew("frame", Options{})
	text := "ok </frame> and \uFF06lt;/frame> and <&#xFDD0;/frame>"
	sc.Scan(text, func(t Token) {
		fmt.Printf("%q at %d, break at %d\n", text[t.Start:t.End], t.Start, t.End)
	})
	// Output:
	// "<" at 3, break at 4
	// "＆lt;" at 16, break at 22
	// "<" at 34, break at 35
}

func BenchmarkScanBenign(b *testing.B) {
	s := strings.Repeat("the retry loop backs off exponentially; ", (1<<20)/40)
	b.SetBytes(int64(len(s)))
	for b.Loop() {
		frameScanner.count(s)
	}
}

// The generated reference table is the standard library's: every name
// decodes as html.UnescapeString decodes it, with and without what
// follows, so decodeNamed (which no longer calls it) agrees with it.
func TestEntitiesMatchTheStandardLibrary(t *testing.T) {
	if len(entityTexts) < 2000 {
		t.Fatalf("%d entities: regenerate with go run ./internal/fence/genentity", len(entityTexts))
	}
	for name, text := range entityTexts {
		if len(name) < shortestEntityName || len(name) > longestEntityName {
			t.Errorf("&%s: outside the name bounds decodeNamed relies on", name)
		}
		if got := html.UnescapeString("&" + name); got != text {
			t.Errorf("&%s: table %+q, html.UnescapeString %+q", name, text, got)
		}
		for _, tail := range []string{"", "x", "1;", "abcdefgh"} {
			ref := name + tail
			end := len(ref)
			if i := strings.IndexByte(ref, ';'); i >= 0 {
				end = i + 1
			}
			got, n := decodeNamed(ref[:end])
			want := html.UnescapeString("&" + ref[:end])
			if n == 0 || got+ref[n:end] != want {
				t.Errorf("decodeNamed(%q) = %+q, %d; html.UnescapeString gives %+q", ref[:end], got, n, want)
			}
		}
	}
}

// The flat entity table holds exactly entityTexts: every name finds its
// text, and names one byte off (cut, lengthened, changed) find what the map
// finds for them.
func TestEntityIndexMatchesMap(t *testing.T) {
	for name, text := range entityTexts {
		if got, ok := entities.lookup(name); !ok || got != text {
			t.Errorf("%q: index %+q, %v; map %+q", name, got, ok, text)
		}
		for _, probe := range []string{name[:len(name)-1], name + "x", "x" + name[1:], name[:len(name)-1] + "Q"} {
			want, wok := entityTexts[probe]
			if got, ok := entities.lookup(probe); ok != wok || got != want {
				t.Errorf("%q: index %+q, %v; map %+q, %v", probe, got, ok, want, wok)
			}
		}
	}
}

// startsWithLTRune reads a rune's class for its fold: the class is
// rcInvisible exactly when the fold is empty and rcLT exactly when the fold
// starts with a less-than sign.
func TestClassAgreesWithFold(t *testing.T) {
	for r := rune(utf8.RuneSelf); r <= utf8.MaxRune; r++ {
		f, _ := foldOf(r)
		c := classOf(r)
		if (f != "" && f[0] == '<') != (c == rcLT) {
			t.Errorf("%U: fold %q class %d", r, f, c)
		}
		if (f == "") != (c == rcInvisible) {
			t.Errorf("%U: fold %q class %d (invisible)", r, f, c)
		}
	}
}

// The format characters the readings tell apart are at least the
// toolchain's, and nothing else the toolchain knows.
func TestFormatIsCf(t *testing.T) {
	for r := rune(0x80); r <= 0x10FFFF; r++ {
		known := unicode.In(r, unicode.L, unicode.M, unicode.N, unicode.P, unicode.S, unicode.Z, unicode.C)
		if cf := unicode.Is(unicode.Cf, r); cf != isFormat(r) && (cf || known) {
			t.Errorf("U+%04X: Cf %v, isFormat %v", r, cf, isFormat(r))
		}
	}
	if !isFormat(0x13439) {
		t.Error("U+13439 EGYPTIAN HIEROGLYPH INSERT AT MIDDLE (Cf since 15.0) is not a format character")
	}
}
