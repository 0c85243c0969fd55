package tokens

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/ctxkit/ctxkit/tokens/internal/textgen"
)

// The property Safe promises: never under max(o200k_base, cl100k_base),
// on generated strings of every class — short ones (1 to 40 bytes, where
// a per-character charge is most easily beaten) and long ones — and on
// the strings the outside probe found Safe short on. The log is the
// adversarial table in BENCHMARKS.md (lowest and total ratio per class).
func TestSafeIsABound(t *testing.T) {
	o, c := o200kBase(), cl100kBase()
	check := func(class, s string) float64 {
		exact := max(o.count(s), c.count(s))
		got := Safe{}.Count(s)
		if got < exact {
			t.Errorf("%s %q: Safe %d < exact %d", class, quoteHead(s), got, exact)
		}
		if exact == 0 {
			return 1
		}
		return float64(got) / float64(exact)
	}
	for _, s := range []string{"\v\v\v\v", "XZJN", ", 164, 165", " 1 2 3 4", "\x7f\"A", "\u0085\u0085",
		"é\u0301\u0302", "\u0080\u0081\u009f", "𝔘𝔫𝔦", "ab\xff\xfe"} {
		check("probe", s)
	}
	r := rand.New(rand.NewPCG(3, 5))
	t.Log("| class | strings | bytes | lowest Safe ÷ exact | Safe ÷ exact over all |")
	t.Log("|---|---:|---:|---:|---:|")
	for _, cl := range textgen.Classes {
		lowest, safe, exact, n, bytes := 1e9, 0, 0, 0, 0
		for i := range 300 {
			size := 1 + r.IntN(40)
			if i%10 == 0 {
				size = 200 + r.IntN(3000)
			}
			s := cl.Generate(r, size, textgen.Options{})
			lowest = min(lowest, check(cl.Name, s))
			safe += Safe{}.Count(s)
			exact += max(o.count(s), c.count(s))
			n++
			bytes += len(s)
		}
		t.Logf("| %s | %d | %d | %.2f | %.2f |", cl.Name, n, bytes, lowest, float64(safe)/float64(exact))
	}
	// Every single byte and every pair of bytes from a mixed set.
	set := []string{"\v", "\x00", "\x7f", "\xff", "\xc3", "a", "Z", "1", " ", "\n", "'", "é", "中", "\u0085", "😀"}
	for _, a := range set {
		for _, b := range set {
			check("pair", a+b)
			check("repeat", strings.Repeat(a+b, 7))
		}
	}
	for b := range 256 {
		check("byte", string([]byte{byte(b)}))
	}
}
