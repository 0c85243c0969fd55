package files

import (
	"context"
	"os"
	"slices"
	"testing"

	"github.com/ctxkit/ctxkit/frame"
)

func TestRelevanceDebug(t *testing.T) {
	if os.Getenv("RELDEBUG") == "" {
		t.Skip()
	}
	set, goroot := loadRelevanceSet(t)
	var ixs []*Index
	for _, r := range set.Roots {
		ix, _ := Build(context.Background(), goroot+"/"+r, corpusOptions(set, r, false))
		ixs = append(ixs, ix)
	}
	p := New(ixs...)
	for _, q := range set.Questions {
		res, _ := p.Query(context.Background(), &frame.Query{Goal: q.Question, MaxFrames: 300, MaxTokens: 1 << 30})
		rank := -1
		for i, f := range res.Frames {
			name, a, b, _ := parseFrameID(f.ID)
			if slices.ContainsFunc(q.Spans, func(j judgedSpan) bool { return j.File == name && a <= j.End && j.Start <= b }) {
				rank = i + 1
				t.Logf("%3d %.3f %q -> %s (top %.3f %s)", rank, f.Score, q.Question, f.ID, res.Frames[0].Score, res.Frames[0].ID)
				break
			}
		}
		if rank < 0 {
			t.Logf("  - %q", q.Question)
		}
	}
}
