package tokens

import (
	"context"
	"encoding/json"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ctxkit/ctxkit/internal/cputime"
	"github.com/ctxkit/ctxkit/tokens/internal/textgen"
)

// speedCorpus is the throughput corpus: 256 KB each of prose, code, JSON,
// CJK and base64 from textgen, and "mixed", their concatenation.
func speedCorpus() (names, texts []string) {
	r := rand.New(rand.NewPCG(7, 7))
	var all strings.Builder
	for _, name := range []string{"prose", "code", "json", "cjk", "base64"} {
		for _, c := range textgen.Classes {
			if c.Name == name {
				s := c.Generate(r, 256<<10, textgen.Options{})
				names, texts = append(names, name), append(texts, s)
				all.WriteString(s)
			}
		}
	}
	return append(names, "mixed"), append(texts, all.String())
}

// TestSpeedAgainstJSTiktoken measures CPU throughput of both exact
// encoders and of warm js-tiktoken on the same texts in one run, and
// requires at least 20 MB/s of CPU and more than js-tiktoken's speed on
// every class. Timing is only meaningful by hand on a quiet machine, so
// the test runs when CTXKIT_SPEED=1 (BENCHMARKS.md has the command).
func TestSpeedAgainstJSTiktoken(t *testing.T) {
	if os.Getenv("CTXKIT_SPEED") == "" {
		t.Skip("timing test; run with CTXKIT_SPEED=1 (see BENCHMARKS.md)")
	}
	names, texts := speedCorpus()
	npm := jsTiktoken(t)
	in := filepath.Join(t.TempDir(), "in")
	if err := writeItems(in, texts); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, "node", "testdata/reference/encode.cjs", npm, "time", in, "24").Output()
	if err != nil {
		t.Fatalf("node encode.cjs time: %v", err)
	}
	var js [][2]float64 // CPU ns per pass, o200k then cl100k
	if err := json.Unmarshal(out, &js); err != nil || len(js) != len(texts) {
		t.Fatalf("node timing output %q: %v", out, err)
	}
	encs := []*Exact{O200kBase(), Cl100kBase()}
	for _, e := range encs {
		e.count("warm up: load the ranks")
	}
	t.Log("| class | bytes | encoding | ctxkit CPU MB/s | js-tiktoken CPU MB/s | ratio |")
	t.Log("|---|---:|---|---:|---:|---:|")
	for i, s := range texts {
		for k, e := range encs {
			passes, start := 0, cputime.Process()
			for cputime.Process()-start < time.Second {
				e.count(s)
				passes++
			}
			ours := float64(len(s)) * float64(passes) / (cputime.Process() - start).Seconds() / 1e6
			theirs := float64(len(s)) / js[i][k] * 1e3
			t.Logf("| %s | %d | %s | %.1f | %.1f | %.2f× |", names[i], len(s), e.Name(), ours, theirs, ours/theirs)
			if ours < 20 {
				t.Errorf("%s %s: %.1f MB/s of CPU, want ≥ 20", names[i], e.Name(), ours)
			}
			if ours <= theirs {
				t.Errorf("%s %s: %.1f MB/s, js-tiktoken %.1f MB/s", names[i], e.Name(), ours, theirs)
			}
		}
	}
}
