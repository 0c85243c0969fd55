package tokens

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/ctxkit/ctxkit/internal/cputime"
)

// pieces returns the pre-tokeniser's split of text.
func pieces(e *exact, text string) []string {
	sc := scanner{s: text, bmp: bmpTable()}
	var out []string
	for i := 0; i < len(text); {
		j := e.piece(&sc, i)
		out = append(out, text[i:j])
		i = j
	}
	return out
}

// The pieces where tiktoken's regex semantics differ from JavaScript's,
// and where the wrapped library used to differ from tiktoken. Each
// expectation is derived from the pattern (see pretokenize.go).
func TestPreTokeniserFollowsTiktoken(t *testing.T) {
	o, c := o200kBase(), cl100kBase()
	for _, tc := range []struct {
		enc  *exact
		text string
		want []string
	}{
		// U+0085 is White_Space: \s+(?!\S) leaves the last one, which
		// then prefixes the letter. (JavaScript: not \s, one run of
		// punctuation.)
		{o, "a\u0085\u0085b", []string{"a", "\u0085", "\u0085b"}},
		{c, "a\u0085\u0085b", []string{"a", "\u0085", "\u0085b"}},
		// U+FEFF is not White_Space: it stands alone as punctuation.
		// (JavaScript: "\ufeff " is one white-space piece.)
		{o, "\ufeff  x", []string{"\ufeff", " ", " x"}},
		{c, "\ufeff  x", []string{"\ufeff", " ", " x"}},
		// 'ſ folds to 's: a contraction.
		{o, "x'ſ", []string{"x'ſ"}},
		{c, "x'ſ", []string{"x", "'ſ"}},
		// White space holding several line breaks is one piece up to
		// the last break (tiktoken-go split it).
		{o, " \n \n", []string{" \n \n"}},
		{c, " \n \n", []string{" \n \n"}},
		{o, " \n\t\n x", []string{" \n\t\n", " x"}},
		// DEL is punctuation with what follows it.
		{o, "\x7f\"A", []string{"\x7f\"", "A"}},
		{c, "\x7f\"A", []string{"\x7f\"", "A"}},
		// o200k_base's case split and the slash after punctuation.
		{o, "HTTPServer", []string{"HTTPServer"}},
		{o, "getElementById", []string{"get", "Element", "By", "Id"}},
		{o, "Ab中AAA1", []string{"Ab中", "AAA", "1"}},
		{o, "**//\n/x", []string{"**//\n/", "x"}},
		{c, "**//\n/x", []string{"**//\n", "/x"}},
		{o, "1234567", []string{"123", "456", "7"}},
	} {
		if got := pieces(tc.enc, tc.text); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s %q: pieces %q, want %q", tc.enc.Name(), tc.text, got, tc.want)
		}
	}
}

// Defects of the wrapped library, with js-tiktoken's counts.
func TestExactCountsPastDefects(t *testing.T) {
	o, c := o200kBase(), cl100kBase()
	for _, tc := range []struct {
		text         string
		o200k, cl100 int
	}{
		{" \n \n", 1, 1},
		{"\x7f\"A", 3, 3},
		{strings.Repeat(" \t", 1000), 999, 999}, // the whole run, not cut at 256 bytes
	} {
		if got := o.Count(tc.text); got != tc.o200k {
			t.Errorf("o200k_base %q: %d, want %d", quoteHead(tc.text), got, tc.o200k)
		}
		if got := c.Count(tc.text); got != tc.cl100 {
			t.Errorf("cl100k_base %q: %d, want %d", quoteHead(tc.text), got, tc.cl100)
		}
	}
}

// Ill-formed UTF-8 counts as its replacement with U+FFFD per maximal
// subpart, the text a Python or JavaScript caller would have encoded.
func TestExactIllFormedUTF8IsReplaced(t *testing.T) {
	for _, e := range []*exact{o200kBase(), cl100kBase()} {
		for bad, good := range map[string]string{
			"a\xffb":           "a\uFFFDb",
			"\xe2\x82A":        "\uFFFDA",             // truncated 3-byte sequence: one U+FFFD
			"\xf0\x9f\x98":     "\uFFFD",              // truncated emoji
			"\xed\xa0\x80x":    "\uFFFD\uFFFD\uFFFDx", // surrogate: each byte
			"\xc0\xafz":        "\uFFFD\uFFFDz",       // overlong
			"ok \xe0\x80 done": "ok \uFFFD\uFFFD done",
		} {
			if got, want := e.encode(bad), e.encode(good); !reflect.DeepEqual(got, want) {
				t.Errorf("%s %q: %v, want %v (as %q)", e.Name(), bad, got, want, good)
			}
		}
	}
}

// Hostile input stays linear: 100 KB of each stays within seconds of CPU
// even under the race detector, where a quadratic scan or merge would
// take minutes.
func TestExactHostileInputIsLinear(t *testing.T) {
	for _, text := range []string{
		strings.Repeat(" \n", 50_000), strings.Repeat(" ", 100_000) + "x",
		strings.Repeat("a", 100_000), strings.Repeat("中", 30_000), strings.Repeat("=", 100_000),
		strings.Repeat("ǅA", 30_000), strings.Repeat("\u0301", 40_000),
	} {
		for _, e := range []*exact{o200kBase(), cl100kBase()} {
			e.count("x")
			start := cputime.Process()
			n := e.count(text)
			if d := cputime.Process() - start; d > slowdown*5*time.Second {
				t.Errorf("%s %s: %v of CPU for %d bytes", e.Name(), quoteHead(text[:20]), d, len(text))
			}
			if n <= 0 || n > len(text) {
				t.Errorf("%s %s: %d tokens", e.Name(), quoteHead(text[:20]), n)
			}
		}
	}
}

// The cache is bounded, and a text counted again and again stays while a
// stream of one-off texts passes through (first-in-first-out eviction
// lost it after the bound's worth of new text).
func TestExactCacheKeepsRepeatedTexts(t *testing.T) {
	e := cl100kBase()
	e.cache.limit = 64 << 10
	hot := strings.Repeat("the message re-sent with every turn. ", 30)
	want := e.Count(hot)
	for i := range 1000 {
		e.Count(fmt.Sprintf("%d %s", i, strings.Repeat("one-off tool output ", 60)))
		if i%20 == 0 {
			if _, ok := e.cache.get(hot); !ok {
				t.Fatalf("repeated text evicted after %d one-off texts", i)
			}
		}
		if e.cache.size > e.cache.limit {
			t.Fatalf("cache holds %d bytes, limit %d", e.cache.size, e.cache.limit)
		}
	}
	if got := e.Count(hot); got != want {
		t.Fatalf("cached count %d, first %d", got, want)
	}
	if len(e.cache.index) < 10 {
		t.Fatalf("cache holds %d texts", len(e.cache.index))
	}
	if _, ok := e.cache.get("short"); ok || func() bool { e.Count("short"); _, ok := e.cache.get("short"); return ok }() {
		t.Fatal("short text cached")
	}
}

// The rank tables parse, in well under the 100 ms budget of CPU.
func TestRankTablesParse(t *testing.T) {
	for name, data := range map[string][]byte{"o200k_base": o200kRanks, "cl100k_base": cl100kRanks} {
		start := cputime.Process()
		v, err := parseRanks(data)
		d := cputime.Process() - start
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		t.Logf("%s: %d tokens parsed in %v of CPU", name, v.tokens(), d)
		if d > slowdown*500*time.Millisecond { // 100 ms on an idle machine; slack for a loaded one
			t.Errorf("%s: parsing took %v of CPU", name, d)
		}
		for r := range uint32(v.tokens()) {
			if got := v.rank(v.token(r)); got != r {
				t.Fatalf("%s: token %d (%q) looks up as %d", name, r, v.token(r), got)
			}
		}
	}
	if _, err := parseRanks([]byte("not gzip")); err == nil {
		t.Error("a damaged table parsed")
	}
}

// Counting valid UTF-8 allocates nothing: a message's count is on the
// path of every Session append, where an allocation per piece once cost a
// quarter of the time. (A piece over 128 bytes allocates its merge heap;
// merging it costs far more.)
func TestExactCountDoesNotAllocate(t *testing.T) {
	texts := map[string]string{
		"prose": "The budget is split between providers by their declared share, and what is left goes back to the pool.",
		"json":  `{"id":12345,"name":"ledger","ok":true},{"id":7,"name":"Ünïcode ✓","tags":["a","b"]}`,
		"short": strings.Repeat("x", 100) + " " + strings.Repeat("ab", 60),
	}
	for _, e := range []*exact{o200kBase(), cl100kBase()} {
		for name, s := range texts {
			if n := testing.AllocsPerRun(50, func() { e.count(s) }); n != 0 {
				t.Errorf("%s %s: %.1f allocations per count, want 0", e.Name(), name, n)
			}
		}
	}
}

// The ASCII fast path of the o200k_base scanner splits exactly as the
// general scanner does, on text that is mostly ASCII with the non-ASCII
// characters that could change its decisions (letters of each case
// class, a combining mark, white space, punctuation, long s).
func TestO200kASCIIPathMatchesGeneralScanner(t *testing.T) {
	alphabet := []string{"a", "z", "A", "Z", "0", "9", " ", "  ", "\t", "\n", "\r", "'", "'s", "'LL", "\"", "{", "/", ".", "_", "\x7f",
		"é", "É", "中", "ǅ", "ʰ", "\u0301", "\u00a0", "\u2028", "“", "ſ", "٣"}
	r := rand.New(rand.NewPCG(4, 20))
	for range 20000 {
		var sb strings.Builder
		for n := 1 + r.IntN(12); n > 0; n-- {
			sb.WriteString(alphabet[r.IntN(len(alphabet))])
		}
		s := sb.String()
		sc := scanner{s: s, bmp: bmpTable()}
		for i := 0; i < len(s); {
			want := sc.pieceO200kAny(i)
			if got := sc.pieceO200k(i); got != want {
				t.Fatalf("%q at %d: piece ends at %d, general scanner %d", s, i, got, want)
			}
			i = want
		}
	}
}
