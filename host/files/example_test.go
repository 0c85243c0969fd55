package files_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/ctxkit/ctxkit/frame"
	"github.com/ctxkit/ctxkit/host/files"
)

// An Index over documents held in memory: chunked by structure, ranked by
// BM25F, scores in [0, 1].
func ExampleNewIndex() {
	ix := files.NewIndex()
	ix.Add(files.Document{Path: "retry.md", Content: []byte("# Retries\n\nA failed request is retried three times with exponential backoff,\nand jitter spreads the retries of many clients apart.\n\n# Timeouts\n\nEach request has a deadline of thirty seconds, after which the\nclient gives up and reports the last error it saw.\n")})
	ix.Add(files.Document{Path: "client.go", Content: []byte("package client\n\n// Backoff returns the delay before retry n.\nfunc Backoff(n int) int { return 1 << n }\n")})
	for _, h := range ix.Search("how are failed requests retried", 2) {
		fmt.Printf("%s:%d-%d %s %q %.2f\n", h.Path, h.Chunk.StartLine, h.Chunk.EndLine, h.Chunk.Kind, h.Chunk.Heading, h.Score)
	}
	// Output:
	// retry.md:1-5 doc "Retries" 0.53
	// retry.md:6-9 doc "Timeouts" 0.25
}

// Split cuts a Go file by declarations, each with its doc comment.
func ExampleSplit() {
	src := []byte("package retry\n\nimport \"time\"\n\n// Backoff returns the delay before attempt n: one second, doubled\n// for each attempt after the first, so that a failing server is not\n// hammered by clients that all retry at once.\nfunc Backoff(n int) time.Duration {\n\treturn time.Second << n\n}\n\n// Attempts is how many times a request is tried before giving up.\n// Three attempts cover the usual transient failures.\nconst Attempts = 3\n")
	for _, c := range files.Split("retry.go", src) {
		fmt.Printf("%d-%d %s %q\n", c.StartLine, c.EndLine, c.Kind, c.Heading)
	}
	// Output:
	// 1-10 snippet "package retry; Backoff"
	// 12-14 snippet "Attempts"
}

// Build indexes a directory; New serves it as a CGP provider.
func ExampleBuild() {
	dir, _ := os.MkdirTemp("", "docs")
	defer os.RemoveAll(dir)
	_ = os.WriteFile(filepath.Join(dir, "retry.md"), []byte("# Retries\n\nRetries back off exponentially.\n"), 0o644)
	ix, err := files.Build(context.Background(), dir, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	p := files.New(ix)
	res, _ := p.Query(context.Background(), &frame.Query{Goal: "retry backoff", MaxFrames: 3, MaxTokens: 200})
	for _, f := range res.Frames {
		fmt.Println(f.ID, f.Kind, f.TokenCost, f.CitationLabel)
	}
	fmt.Println(ix.Stats().State, ix.Files(), "file(s)")
	// Output:
	// retry.md#L1-3 doc 11 retry.md:1-3
	// memory 1 file(s)
}
