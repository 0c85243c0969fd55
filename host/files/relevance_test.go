package files

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"go/build"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode"

	"github.com/ctxkit/ctxkit/frame"
	"github.com/ctxkit/ctxkit/host/files/internal/legacy"
)

// relevanceSet is a judged question set over a pinned corpus (see
// testdata/relevance/README.md).
type relevanceSet struct {
	GoVersion string            `json:"go_version"`
	Roots     []string          `json:"roots"`
	Budget    int               `json:"budget"`
	Files     map[string]string `json:"files"` // judged file -> sha256 digest
	Questions []struct {
		Question string       `json:"question"`
		Spans    []judgedSpan `json:"spans"`
		// Heldout marks a question written and judged before the ranking
		// changes it is reported against, and never tuned on.
		Heldout bool `json:"heldout,omitempty"`
		// Round is the round of work that added a held-out question;
		// the fourth and fifth rounds' are reported as their own splits.
		Round int `json:"round,omitempty"`
	} `json:"questions"`
}

type judgedSpan struct {
	File       string `json:"file"` // relative to the corpus (GOROOT), slash-separated
	Start, End int
}

// served is one frame a system included within the budget, in rank order.
type served struct {
	file       string
	start, end int
}

// score is a system's recall (share of questions with an included frame
// overlapping a judged span) and mean reciprocal rank of the first such
// frame, over the whole set and per split.
type score struct {
	recall, mrr float64
	misses      []string
	splits      map[string]*splitScore
}

// splitScore is recall and MRR over one part of the set: "tune" and
// "check" alternate through the first-round questions (ranking changes
// were judged on "tune" alone), "heldout" are the second round's
// held-out questions, "heldout4" the fourth round's and "heldout5" the
// fifth round's.
type splitScore struct {
	n, hits int
	rr      float64
}

func splitOf(i int, heldout bool, round int) string {
	switch {
	case heldout && round == 4:
		return "heldout4"
	case heldout && round == 5:
		return "heldout5"
	case heldout:
		return "heldout"
	case i%2 == 0:
		return "tune"
	}
	return "check"
}

// String formats a split's figures.
func (s *splitScore) String() string {
	if s == nil || s.n == 0 {
		return "none"
	}
	return fmt.Sprintf("%.1f%% (%d/%d) MRR %.3f", 100*float64(s.hits)/float64(s.n), s.hits, s.n, s.rr/float64(s.n))
}

func loadRelevanceSet(t testing.TB) (*relevanceSet, string) {
	t.Helper()
	data, err := os.ReadFile("testdata/relevance/goroot.json")
	if err != nil {
		t.Fatal(err)
	}
	var set relevanceSet
	if err := json.Unmarshal(data, &set); err != nil {
		t.Fatalf("relevance set: %v", err)
	}
	goroot := build.Default.GOROOT
	ver, err := os.ReadFile(filepath.Join(goroot, "VERSION"))
	if err != nil {
		t.Skipf("no Go distribution to score on at %s: %v", goroot, err)
	}
	if got := strings.Fields(string(ver))[0]; got != set.GoVersion {
		// Refuse to score on a different corpus: the judged spans are
		// line ranges of one version's files.
		t.Skipf("the relevance set is judged on %s; this GOROOT is %s", set.GoVersion, got)
	}
	for rel, want := range set.Files {
		b, err := os.ReadFile(filepath.Join(goroot, filepath.FromSlash(rel)))
		if err != nil {
			t.Fatalf("judged file %s: %v", rel, err)
		}
		sum := sha256.Sum256(b)
		if got := "sha256:" + hex.EncodeToString(sum[:]); got != want {
			t.Fatalf("judged file %s has digest %s, the set pins %s: not the corpus it was judged on", rel, got, want)
		}
	}
	return &set, goroot
}

// evaluate scores a system: rank returns what it includes for a question.
func evaluate(set *relevanceSet, rank func(q string) []served) score {
	sc := score{splits: map[string]*splitScore{}}
	for i, q := range set.Questions {
		name := splitOf(i, q.Heldout, q.Round)
		sp := sc.splits[name]
		if sp == nil {
			sp = &splitScore{}
			sc.splits[name] = sp
		}
		sp.n++
		got := rank(q.Question)
		hit := 0
		for i, s := range got {
			if slices.ContainsFunc(q.Spans, func(j judgedSpan) bool { return j.File == s.file && s.start <= j.End && j.Start <= s.end }) {
				hit = i + 1
				break
			}
		}
		if hit > 0 {
			sc.recall++
			sc.mrr += 1 / float64(hit)
			sp.hits++
			sp.rr += 1 / float64(hit)
			continue
		}
		var top []string
		for _, s := range got[:min(3, len(got))] {
			top = append(top, fmt.Sprintf("%s:%d-%d", s.file, s.start, s.end))
		}
		sc.misses = append(sc.misses, fmt.Sprintf("%q: got %v", q.Question, top))
	}
	n := float64(len(set.Questions))
	sc.recall /= n
	sc.mrr /= n
	return sc
}

// corpusOptions restricts the corpus to the judged files' directories
// (their own files, not subdirectories) unless full is set.
func corpusOptions(set *relevanceSet, root string, full bool) *IndexOptions {
	if full {
		return &IndexOptions{}
	}
	var inc []string
	seen := map[string]bool{}
	for rel := range set.Files {
		dir, ok := strings.CutPrefix(path.Dir(rel), root)
		if !ok || seen[dir] {
			continue
		}
		seen[dir] = true
		inc = append(inc, strings.TrimPrefix(dir+"/*", "/"))
	}
	slices.Sort(inc)
	return &IndexOptions{Include: inc}
}

// corpusProvider indexes the set's roots under goroot and returns one
// provider over them, as the relevance figures are measured.
func corpusProvider(t testing.TB, set *relevanceSet, goroot string, full bool) *Provider {
	var ixs []*Index
	for _, r := range set.Roots {
		o := corpusOptions(set, r, full)
		if dir := os.Getenv("CTXKIT_RELEVANCE_STORE"); dir != "" {
			// Keep the index between runs while iterating on the ranking.
			o.Store = filepath.Join(dir, fmt.Sprintf("%s-%v.idx", r, full))
		}
		ix, err := Build(context.Background(), filepath.Join(goroot, r), o)
		if err != nil {
			t.Fatal(err)
		}
		ixs = append(ixs, ix)
	}
	return New(ixs...)
}

func newSystem(t testing.TB, set *relevanceSet, goroot string, full bool) func(string) []served {
	p := corpusProvider(t, set, goroot, full)
	return func(q string) []served {
		res, err := p.Query(context.Background(), &frame.Query{Goal: q, MaxFrames: 16, MaxTokens: uint32(set.Budget)})
		if err != nil {
			t.Fatal(err)
		}
		var out []served
		for _, f := range res.Frames {
			name, a, b, _ := parseFrameID(f.ID)
			out = append(out, served{name, a, b})
		}
		return out
	}
}

// pack is the first-fit packing the provider does, for the baselines.
func pack(hits []served, cost func(served) int, budget int) []served {
	var out []served
	used := 0
	for _, h := range hits {
		if len(out) == 16 {
			break
		}
		if c := cost(h); used+c <= budget {
			used += c
			out = append(out, h)
		}
	}
	return out
}

func legacySystem(t testing.TB, set *relevanceSet, goroot string, full bool) func(string) []served {
	type scored struct {
		served
		bytes int
		rank  int
	}
	var ixs []*legacy.Index
	for _, r := range set.Roots {
		o := corpusOptions(set, r, full)
		dir := filepath.Join(goroot, r)
		if !full {
			dir = subsetTree(t, dir, o.Include)
		}
		ix, err := legacy.Build(context.Background(), dir, nil)
		if err != nil {
			t.Fatal(err)
		}
		ixs = append(ixs, ix)
	}
	return func(q string) []served {
		var all []scored
		for i, ix := range ixs {
			for k, h := range ix.Search(q) {
				all = append(all, scored{served{set.Roots[i] + "/" + h.Path, h.StartLine, h.EndLine}, h.Bytes, k})
			}
		}
		// Each legacy index normalises by its own top hit; interleave by rank.
		slices.SortStableFunc(all, func(a, b scored) int { return cmp.Compare(a.rank, b.rank) })
		var hs []served
		size := map[served]int{}
		for _, s := range all {
			hs = append(hs, s.served)
			size[s.served] = s.bytes
		}
		return pack(hs, func(s served) int { return (size[s] + 3) / 4 }, set.Budget)
	}
}

// subsetTree links the files the include globs select into a temporary
// tree, for an index without include support.
func subsetTree(t testing.TB, root string, include []string) string {
	dst := t.TempDir()
	_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		rel, _ := filepath.Rel(root, p)
		if !matchAny(include, filepath.ToSlash(rel)) {
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return nil
		}
		out := filepath.Join(dst, rel)
		_ = os.MkdirAll(filepath.Dir(out), 0o755)
		return os.WriteFile(out, data, 0o644)
	})
	return dst
}

// grepSystem is the plain baseline: 40-line chunks of every file without
// a NUL byte, ranked by how often the question's words (longer than two
// letters, matched as whole words, case folded, like grep -wic) occur in
// them.
func grepSystem(t testing.TB, set *relevanceSet, goroot string, full bool) func(string) []served {
	type count struct{ chunk, n int32 }
	var chunks []served
	var sizes []int
	words := map[string][]count{}
	for _, r := range set.Roots {
		o := corpusOptions(set, r, full)
		root := filepath.Join(goroot, r)
		_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return nil
			}
			rel, _ := filepath.Rel(root, p)
			rel = filepath.ToSlash(rel)
			if len(o.Include) > 0 && !matchAny(o.Include, rel) {
				return nil
			}
			data, err := os.ReadFile(p)
			if err != nil || bytes.IndexByte(data, 0) >= 0 {
				return nil
			}
			lines := bytes.SplitAfter(data, []byte("\n"))
			for i := 0; i < len(lines); i += 40 {
				j := min(i+40, len(lines))
				text := bytes.ToLower(bytes.Join(lines[i:j], nil))
				id := int32(len(chunks))
				chunks = append(chunks, served{r + "/" + rel, i + 1, j})
				sizes = append(sizes, len(text))
				tf := map[string]int32{}
				for _, w := range bytes.FieldsFunc(text, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
					tf[string(w)]++
				}
				for w, n := range tf {
					words[w] = append(words[w], count{id, n})
				}
			}
			return nil
		})
	}
	return func(q string) []served {
		score := map[int32]int32{}
		for _, w := range strings.FieldsFunc(strings.ToLower(q), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
			if len(w) <= 2 {
				continue
			}
			for _, c := range words[w] {
				score[c.chunk] += c.n
			}
		}
		ids := make([]int32, 0, len(score))
		for id := range score {
			ids = append(ids, id)
		}
		slices.SortFunc(ids, func(a, b int32) int {
			if c := cmp.Compare(score[b], score[a]); c != 0 {
				return c
			}
			return cmp.Compare(a, b)
		})
		var hs []served
		size := map[served]int{}
		for _, id := range ids {
			hs = append(hs, chunks[id])
			size[chunks[id]] = sizes[id]
		}
		return pack(hs, func(s served) int { return (size[s] + 3) / 4 }, set.Budget)
	}
}

// TestRelevance scores the index on the judged set and enforces a floor.
// By default the corpus is the judged files' directories; with
// CTXKIT_RELEVANCE_FULL=1 it is the whole of GOROOT's doc and src, and the
// baselines are scored too (the BENCHMARKS.md figures).
func TestRelevance(t *testing.T) {
	set, goroot := loadRelevanceSet(t)
	if len(set.Questions) < 60 {
		t.Fatalf("the set has %d questions, want at least 60", len(set.Questions))
	}
	full := os.Getenv("CTXKIT_RELEVANCE_FULL") == "1"
	systems := []struct {
		name string
		make func(testing.TB, *relevanceSet, string, bool) func(string) []served
	}{{"new", newSystem}}
	// The baselines are scored on the full tree unless
	// CTXKIT_RELEVANCE_BASELINES=0 (while iterating on the ranking).
	if b := os.Getenv("CTXKIT_RELEVANCE_BASELINES"); b == "1" || full && b != "0" {
		systems = append(systems, struct {
			name string
			make func(testing.TB, *relevanceSet, string, bool) func(string) []served
		}{"legacy", legacySystem}, struct {
			name string
			make func(testing.TB, *relevanceSet, string, bool) func(string) []served
		}{"grep", grepSystem})
	}
	for _, sys := range systems {
		sc := evaluate(set, sys.make(t, set, goroot, full))
		t.Logf("%-6s recall@%d %.1f%% (%d/%d)  MRR %.3f  (full tree: %v)", sys.name, set.Budget, 100*sc.recall,
			int(sc.recall*float64(len(set.Questions))+0.5), len(set.Questions), sc.mrr, full)
		t.Logf("%-6s   tune %s; check %s; heldout %s; heldout4 %s; heldout5 %s", sys.name, sc.splits["tune"], sc.splits["check"], sc.splits["heldout"], sc.splits["heldout4"], sc.splits["heldout5"])
		if testing.Verbose() {
			for _, m := range sc.misses {
				t.Logf("  %s miss %s", sys.name, m)
			}
		}
		if sys.name == "new" && full {
			t.Logf("new    against the issue's targets on the full tree: recall %.3f (target 0.85), MRR %.3f (target 0.70)", sc.recall, sc.mrr)
		}
		if sys.name == "new" && !full && (sc.recall < relevanceFloorRecall || sc.mrr < relevanceFloorMRR) {
			t.Errorf("new index below the floor: recall %.3f (floor %.2f), MRR %.3f (floor %.2f)", sc.recall, relevanceFloorRecall, sc.mrr, relevanceFloorMRR)
		}
	}
	if os.Getenv("CTXKIT_RELEVANCE_EXPLAIN") == "1" {
		explainRelevance(t, set, goroot, full)
	}
}

// The floor the relevance test enforces, below what the judged
// directories give today (88.8% / 0.609 on 134 questions, BENCHMARKS.md,
// "Issue 16, session 7");
// the full tree (CTXKIT_RELEVANCE_FULL=1) scores lower and is reported
// against the targets rather than held to this floor.
const (
	relevanceFloorRecall = 0.87
	relevanceFloorMRR    = 0.59
)
