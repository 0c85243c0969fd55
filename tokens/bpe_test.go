package tokens

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// naiveMerge is byte-pair encoding written as plainly as possible: a list
// of parts, and in each round the leftmost adjacent pair of lowest rank
// is merged, until no adjacent pair is a token. It returns the parts.
func naiveMerge(v *vocab, p string) []string {
	parts := make([]string, len(p))
	for i := 0; i < len(p); i++ {
		parts[i] = p[i : i+1]
	}
	for {
		best, at := uint32(noRank), -1
		for i := 0; i+1 < len(parts); i++ {
			if r := v.rank(parts[i] + parts[i+1]); r < best {
				best, at = r, i
			}
		}
		if at < 0 {
			return parts
		}
		parts[at] += parts[at+1]
		parts = append(parts[:at+1], parts[at+2:]...)
	}
}

// partsOf cuts p at the start offsets the merges return.
func partsOf(p string, starts []int32) []string {
	var out []string
	for k, s := range starts {
		end := len(p)
		if k+1 < len(starts) {
			end = int(starts[k+1])
		}
		out = append(out, p[s:end])
	}
	return out
}

// checkMerges compares both merge loops with naiveMerge on every piece of
// text, in both encodings.
func checkMerges(t *testing.T, text string) {
	t.Helper()
	if !utf8.ValidString(text) {
		text = string(replaceInvalid(text))
	}
	for _, enc := range []*exact{o200kBase(), cl100kBase()} {
		v, err := enc.vocab.get()
		if err != nil {
			t.Fatal(err)
		}
		sc := scanner{s: text, bmp: bmpTable()}
		for i := 0; i < len(text); {
			j := enc.piece(&sc, i)
			if j <= i || j > len(text) {
				t.Fatalf("%s: piece at %d ends at %d", enc.Name(), i, j)
			}
			if enc.o200k {
				if k := sc.pieceO200kAny(i); k != j {
					t.Fatalf("%s: piece at %d ends at %d, the general scanner's at %d", enc.Name(), i, j, k)
				}
			}
			p := text[i:j]
			want := strings.Join(naiveMerge(v, p), "|")
			n, starts := v.pieceParts(p, []int32{})
			if got := strings.Join(partsOf(p, starts), "|"); got != want || n != len(starts) {
				t.Fatalf("%s: piece %q merges to %q (%d), naive %q", enc.Name(), p, got, n, want)
			}
			if counted, _ := v.pieceParts(p, nil); counted != n {
				t.Fatalf("%s: piece %q counts %d tokens, merges to %d", enc.Name(), p, counted, n)
			}
			// The heap loop is used for long pieces only; check it on
			// every piece too.
			_, starts = v.mergeLong(p, []int32{})
			if got := strings.Join(partsOf(p, starts), "|"); got != want {
				t.Fatalf("%s: heap merges %q to %q, naive %q", enc.Name(), p, got, want)
			}
			i = j
		}
	}
}

func TestMergesMatchNaiveBPE(t *testing.T) {
	for class, text := range corpus(t) {
		t.Run(class, func(t *testing.T) { checkMerges(t, text[:min(len(text), 3000)]) })
	}
	checkMerges(t, strings.Repeat("ab", 400)+strings.Repeat("=", 300)+strings.Repeat("中", 100))
}

// FuzzMergesMatchNaiveBPE: on any input, the pre-tokeniser makes progress
// and stays in bounds (and o200k_base's ASCII fast path splits as its
// general scanner does), and both merge loops and the counting path equal
// the plain reference merge on every piece.
func FuzzMergesMatchNaiveBPE(f *testing.F) {
	for _, s := range []string{"hello world", " \n \n", "\x7f\"A", "don't 'ſ", "Ab中AAA1", "\xe2\x82A\xff",
		strings.Repeat("ab", 100), "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAA", "日本語のテキスト、한국어"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		if len(text) > 1024 || !utf8.ValidString(text) && len(replaceInvalid(text)) > 1024 {
			// The plain merge is cubic: keep each run short, also after
			// ill-formed bytes become the 3-byte U+FFFD (a kilobyte of
			// them, one 3 KB piece, ran past the fuzzer's hang timeout).
			return
		}
		checkMerges(t, text)
	})
}

// pack8 packs the first eight bytes little-endian, fewer for a shorter
// string: the rank table's packed heads compare tokens by it.
func TestPack8(t *testing.T) {
	b := []byte("\x01\x82\x03\xf4\x05\x06\x07\x08\x09\x0a\x0b\x0c")
	for n := 0; n <= len(b); n++ {
		var want uint64
		for i := range min(n, 8) {
			want |= uint64(b[i]) << (8 * i)
		}
		if got := pack8(string(b[:n])); got != want {
			t.Errorf("pack8 of %d bytes = %#x, want %#x", n, got, want)
		}
	}
}
