package files_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/ctxkit/ctxkit/frame"
	"github.com/ctxkit/ctxkit/host/files"
)

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
	// Output:
	// retry.md#L1-3 doc 11 retry.md:1-3
}
