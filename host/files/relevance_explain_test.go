package files

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/ctxkit/ctxkit/frame"
)

// explainRelevance is the failure analysis TestRelevance prints with
// CTXKIT_RELEVANCE_EXPLAIN=1 (to the file $CTXKIT_RELEVANCE_EXPLAIN_OUT if
// set): for every question missed or first answered below rank 2, what the
// provider served above the answer, which query terms each of those frames
// matched in which field (body, heading, path), and where the best judged
// chunk sits in the whole ranking; then how the served frames are spread.
func explainRelevance(t *testing.T, set *relevanceSet, goroot string, full bool) {
	p := corpusProvider(t, set, goroot, full)
	tk := newTokenizer()
	termsOf := func(s string) map[string]int {
		m := map[string]int{}
		tk.each([]byte(s), func(b []byte) { m[string(b)]++ })
		return m
	}
	var b strings.Builder
	hist := map[int]int{}
	var nFrames, nAdjacent, nTest, nCmd, nTokens int
	for qi, q := range set.Questions {
		res, err := p.Query(context.Background(), &frame.Query{Goal: q.Question, MaxFrames: 16, MaxTokens: uint32(set.Budget)})
		if err != nil {
			t.Fatal(err)
		}
		type span struct {
			name string
			a, e int
		}
		var spans []span
		for _, f := range res.Frames {
			name, a, e, _ := parseFrameID(f.ID)
			spans = append(spans, span{name, a, e})
			nFrames++
			nTokens += int(f.TokenCost)
			if isTest(name) {
				nTest++
			}
			if strings.HasPrefix(name, "src/cmd/") {
				nCmd++
			}
		}
		for i, x := range spans {
			for j, y := range spans {
				if i != j && x.name == y.name && (y.e+1 >= x.a && y.e < x.a) {
					nAdjacent++
					break
				}
			}
		}
		hit := 0
		for i, f := range res.Frames {
			name, a, e, _ := parseFrameID(f.ID)
			if slices.ContainsFunc(q.Spans, func(j judgedSpan) bool { return j.File == name && a <= j.End && j.Start <= e }) {
				hit = i + 1
				break
			}
		}
		hist[min(hit, 9)]++
		if hit == 1 || hit == 2 {
			continue
		}
		qterms := termsOf(q.Question)
		var qt []string
		for k := range qterms {
			qt = append(qt, k)
		}
		slices.Sort(qt)
		fmt.Fprintf(&b, "\n## [%d %s] %q hit=%d terms=%v\n", qi, splitOf(qi, q.Heldout, q.Round), q.Question, hit, qt)
		show := len(res.Frames)
		if hit > 0 {
			show = hit
		}
		tokens := 0
		for i, f := range res.Frames[:min(show, 8)] {
			name, a, e, _ := parseFrameID(f.ID)
			heading := ""
			if _, h, ok := strings.Cut(f.Title, " — "); ok {
				heading = h
			}
			why := matchedTerms(termsOf, qt, f.Content, heading, name)
			tokens += int(f.TokenCost)
			fmt.Fprintf(&b, "  %2d %.3f %s:%d-%d [%s] tok=%d %v\n", i+1, f.Score, name, a, e, heading, f.TokenCost, why)
		}
		fmt.Fprintf(&b, "  served %d frames, %d tokens\n", len(res.Frames), tokens)
		// Where the judged spans rank in the whole ranking.
		cands, _ := p.rank(&frame.Query{Goal: q.Question})
		bestRank := -1
		for i, c := range cands {
			ix := p.roots[c.root]
			s := ix.segs[c.seg]
			ch := s.chunk(c.chunk)
			for _, path := range ix.pathsOf(c.seg, ch.content) {
				name := set.Roots[c.root] + "/" + path
				if slices.ContainsFunc(q.Spans, func(j judgedSpan) bool {
					return j.File == name && int(ch.startLine) <= j.End && j.Start <= int(ch.endLine)
				}) && bestRank < 0 {
					bestRank = i
					heading := s.str(ch.headOff, ch.headN)
					text := s.str(ch.textOff, ch.textN)
					if t, _, _, ok := ix.readChunk(path, s.contents[ch.content].html, int(ch.startLine), int(ch.endLine)); ok {
						text = string(t)
					}
					why := matchedTerms(termsOf, qt, text, heading, path)
					fmt.Fprintf(&b, "  judged best: rank %d score %.3f %s:%d-%d [%s] bytes=%d %v\n", i+1, c.score, name, ch.startLine, ch.endLine, heading, ch.end-ch.start, why)
				}
			}
		}
		if bestRank < 0 {
			fmt.Fprintf(&b, "  judged: not matched at all (or under the floor)\n")
		}
	}
	fmt.Fprintf(&b, "\nframes %d (%.1f a question), tokens %.0f a question; directly after another served frame of its file %d; tests %d; src/cmd %d\n",
		nFrames, float64(nFrames)/float64(len(set.Questions)), float64(nTokens)/float64(len(set.Questions)), nAdjacent, nTest, nCmd)
	fmt.Fprintf(&b, "first-hit rank histogram (0 = miss, 9 = 9 or more): %v\n", hist)
	if out := os.Getenv("CTXKIT_RELEVANCE_EXPLAIN_OUT"); out != "" {
		if err := os.WriteFile(out, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Log(b.String())
}

// matchedTerms lists the query terms qt that body, heading or path hold,
// each with its count in the three fields ("term(b2 h1 p0)").
func matchedTerms(termsOf func(string) map[string]int, qt []string, body, heading, path string) []string {
	bt, ht, pt := termsOf(body), termsOf(heading), termsOf(path)
	var why []string
	for _, k := range qt {
		if bt[k]+ht[k]+pt[k] > 0 {
			why = append(why, fmt.Sprintf("%s(b%d h%d p%d)", k, bt[k], ht[k], pt[k]))
		}
	}
	return why
}
