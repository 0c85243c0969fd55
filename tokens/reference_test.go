package tokens

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/ctxkit/ctxkit/internal/npmcache"
	"github.com/ctxkit/ctxkit/tokens/internal/textgen"
)

// jsTiktokenVersion is the npm package the exact encoders are compared
// with: an implementation independent of ours, with its own copy of the
// ranks.
const jsTiktokenVersion = "1.0.21"

// jsTiktoken returns the npm prefix holding js-tiktoken, installed on
// first use into the cache outside the repository (internal/npmcache).
// Without node or npm the test is skipped, except under CI (CI set),
// where it fails.
func jsTiktoken(t testing.TB) string {
	t.Helper()
	if _, err := exec.LookPath("node"); err != nil {
		npmcache.Unavailable(t, fmt.Errorf("node is required to compare with js-tiktoken: %w", err))
	}
	return npmcache.Install(t, "js-tiktoken@"+jsTiktokenVersion)
}

// writeItems writes texts in encode.cjs's input format.
func writeItems(path string, texts []string) error {
	var b bytes.Buffer
	for _, s := range texts {
		b.Write(binary.LittleEndian.AppendUint32(nil, uint32(len(s))))
		b.WriteString(s)
	}
	return os.WriteFile(path, b.Bytes(), 0o644)
}

// referenceIDs encodes texts with js-tiktoken: ids[i][0] are o200k_base's
// ids for texts[i], ids[i][1] cl100k_base's.
func referenceIDs(t testing.TB, texts []string) [][2][]uint32 {
	t.Helper()
	npm := jsTiktoken(t)
	tmp := t.TempDir()
	in, out := filepath.Join(tmp, "in"), filepath.Join(tmp, "out")
	if err := writeItems(in, texts); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", "--max-old-space-size=4096", "testdata/reference/encode.cjs", npm, "encode", in, out)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("node encode.cjs: %v\n%s", err, b)
	}
	raw, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	ids := make([][2][]uint32, len(texts))
	for i := range ids {
		for k := range 2 {
			if len(raw) < 4 {
				t.Fatalf("reference output ends early at item %d", i)
			}
			n := int(binary.LittleEndian.Uint32(raw))
			raw = raw[4:]
			if len(raw) < 4*n {
				t.Fatalf("reference output ends early at item %d", i)
			}
			v := make([]uint32, n)
			for j := range v {
				v[j] = binary.LittleEndian.Uint32(raw[4*j:])
			}
			raw = raw[4*n:]
			ids[i][k] = v
		}
	}
	return ids
}

// referenceCorpus is the comparison corpus: every generated class at
// sizes from a few bytes to tens of kilobytes, about megabytes in all,
// plus every single byte and the texts of known past defects.
func referenceCorpus(megabytes float64, seed uint64) (texts, labels []string) {
	add := func(label, s string) { texts, labels = append(texts, s), append(labels, label) }
	for b := range 256 {
		add("byte", string([]byte{byte(b)}))
	}
	for _, s := range []string{
		" \n \n", "\x7f\"A", "a\x7fb", "\n  ", " \n\t\n x", "\r\n\r\n", "'s", "x'S", "'LLama",
		string(bytes.Repeat([]byte(" \t"), 1000)), string(bytes.Repeat([]byte(" \n"), 1000)),
		string(bytes.Repeat([]byte("a"), 2000)), "\xe2\x82A\xf0\x9fA\xff\xc3",
	} {
		add("defect", s)
	}
	r := rand.New(rand.NewPCG(20, 26+seed))
	budget := int(megabytes * (1 << 20))
	sizes := []int{1, 3, 8, 30, 100, 500, 2000, 8000, 30000}
	for total := 0; total < budget; {
		for _, c := range textgen.Classes {
			size := sizes[r.IntN(len(sizes))]
			if c.Name == "long_runs" {
				// js-tiktoken merges a piece in quadratic time: keep its
				// single pieces short enough to finish.
				size = min(size, 1500)
			}
			s := c.Generate(r, size, textgen.Options{Portable: true, ShortRuns: true})
			add(c.Name, s)
			total += len(s)
		}
	}
	return texts, labels
}

// The exact encoders equal js-tiktoken, token id for token id, on the
// reference corpus (about 1.5 MB; CTXKIT_REFERENCE_MB and
// CTXKIT_REFERENCE_SEED set the size and draw for the long runs recorded
// in BENCHMARKS.md).
func TestExactMatchesJSTiktoken(t *testing.T) {
	mb := 1.5
	if s := os.Getenv("CTXKIT_REFERENCE_MB"); s != "" {
		v, err := strconv.ParseFloat(s, 64)
		if err != nil {
			t.Fatalf("CTXKIT_REFERENCE_MB=%q: %v", s, err)
		}
		mb = v
	}
	var seed uint64
	if s := os.Getenv("CTXKIT_REFERENCE_SEED"); s != "" {
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("CTXKIT_REFERENCE_SEED=%q: %v", s, err)
		}
		seed = v
	}
	texts, labels := referenceCorpus(mb, seed)
	want := referenceIDs(t, texts)
	encs := []*exact{o200kBase(), cl100kBase()}
	bytesPerClass := map[string]int{}
	mismatches := 0
	for i, s := range texts {
		bytesPerClass[labels[i]] += len(s)
		for k, e := range encs {
			got := e.encode(s)
			if d := firstDifference(got, want[i][k]); d >= 0 {
				mismatches++
				if mismatches <= 10 {
					t.Errorf("%s, %s item %d (%d bytes): token %d differs: ours %v, js-tiktoken %v; text %s",
						e.Name(), labels[i], i, len(s), d, window(got, d), window(want[i][k], d), quoteHead(s))
				}
			}
			if n := e.count(s); n != len(want[i][k]) {
				t.Errorf("%s, %s item %d: count %d, js-tiktoken %d", e.Name(), labels[i], i, n, len(want[i][k]))
			}
		}
	}
	total := 0
	for _, n := range bytesPerClass {
		total += n
	}
	t.Logf("%d texts, %d bytes, %d classes, %d mismatches", len(texts), total, len(bytesPerClass), mismatches)
}

func firstDifference(a, b []uint32) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	if len(a) != len(b) {
		return min(len(a), len(b))
	}
	return -1
}

func window(ids []uint32, at int) []uint32 {
	return ids[max(0, at-2):min(len(ids), at+3)]
}

func quoteHead(s string) string {
	if len(s) > 120 {
		return fmt.Sprintf("%q… (%d bytes)", s[:120], len(s))
	}
	return fmt.Sprintf("%q", s)
}
