package files_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctxkit/ctxkit/frame"
)

// A Markdown section's heading describes every chunk of the section: a
// query naming the heading finds the section's later chunks too (their lines
// do not repeat the heading's words), and ranks them above a file that
// mentions the words once in passing.
func TestHeadingRanksItsSection(t *testing.T) {
	dir := t.TempDir()
	var sec strings.Builder
	sec.WriteString("# Garbage collection pacing\n\n")
	for i := range 60 { // longer than one chunk
		sec.WriteString("The collector sets its next goal from the live heap; line ")
		sec.WriteString(strings.Repeat("x", i%7))
		sec.WriteString(".\n")
	}
	var noise strings.Builder
	noise.WriteString("note: garbage collection pacing is tuned elsewhere\n")
	for i := range 30 {
		noise.WriteString("config: value ")
		noise.WriteString(strings.Repeat("y", i%5))
		noise.WriteString("\n")
	}
	for rel, content := range map[string]string{"gc.md": sec.String(), "values.yaml": noise.String()} {
		if err := os.WriteFile(filepath.Join(dir, rel), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	p := build(t, dir)
	res, err := p.Query(context.Background(), &frame.Query{Goal: "garbage collection pacing", MaxFrames: 8, MaxTokens: 100000})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, f := range res.Frames {
		ids = append(ids, f.ID)
	}
	if len(ids) < 3 || !strings.HasPrefix(ids[0], "gc.md#") || !strings.HasPrefix(ids[1], "gc.md#") {
		t.Fatalf("want both chunks of the gc.md section first, got %v", ids)
	}
}
