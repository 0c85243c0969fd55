// Command quickstart is the README's Go example: it indexes docs/ with the
// built-in files provider, fans a goal out through a host (one in-process
// provider here), and composes the audited frames into a fenced prompt.
package main

import (
	"context"
	"fmt"
	"log"
	"os"

	"github.com/ctxkit/ctxkit/frame"
	"github.com/ctxkit/ctxkit/host"
	"github.com/ctxkit/ctxkit/host/files"
)

func main() {
	ctx := context.Background()
	ix, err := files.Build(ctx, "docs", nil) // index the text files under docs/
	if err != nil {
		log.Fatal(err)
	}
	h := host.New(nil)
	defer h.Close(ctx)
	if err := h.AddInProcess("docs", files.New(ix)); err != nil {
		log.Fatal(err)
	}
	q := &frame.Query{Goal: "how is the budget split between providers", MaxFrames: 8, MaxTokens: 1500}
	res := h.QueryAllBudgeted(ctx, q, 1500).Compose(1500, nil) // fan out, audit each leg, compose
	fmt.Print(res.Prompt)                                      // preamble and one fence per frame
	_ = res.Audit.WriteText(os.Stderr)                         // every frame: included, or excluded and why
}
