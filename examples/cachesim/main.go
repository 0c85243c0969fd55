// Command cachesim simulates an agent session that re-composes its evidence
// every turn and prints, per placement, how much of each prompt a provider
// prompt cache can reuse and what the input costs under Anthropic's cache
// pricing (see package compose/cachesim for the session and cache models).
//
//	go run ./examples/cachesim -turns 30 -churn 10 -jitter 0.05
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/ctxkit/ctxkit/compose"
	"github.com/ctxkit/ctxkit/compose/cachesim"
)

func main() {
	os.Exit(run(os.Args[1:]))
}

func run(args []string) int {
	fs := flag.NewFlagSet("cachesim", flag.ContinueOnError)
	turns := fs.Int("turns", 30, "turns T (compositions) in the session")
	offered := fs.Int("offered", 60, "frames offered each turn")
	churn := fs.Float64("churn", 10, "percentage C of offered frames replaced each turn")
	jitter := fs.Float64("jitter", 0.05, "score jitter J: each score is base ± J")
	model := fs.String("model", "uniform", "which frames are replaced: uniform or tail")
	seed := fs.Uint64("seed", 1, "session seed")
	minPrefix := fs.Int("min-prefix", compose.DefaultMinPrefixTokens, "provider minimum cacheable prefix, tokens")
	price := fs.Float64("price", cachesim.DefaultBaseUSDPerMTok, "base input price, USD per million tokens")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 0 || *turns < 2 || *offered < 1 || *churn < 0 || *churn > 100 || *jitter < 0 || *minPrefix < 1 || *price <= 0 {
		fmt.Fprintln(os.Stderr, "cachesim: want -turns ≥ 2, -offered ≥ 1, 0 ≤ -churn ≤ 100, -jitter ≥ 0, -min-prefix ≥ 1, -price > 0 and no arguments")
		return 2
	}
	c := cachesim.Config{Turns: *turns, Offered: *offered, ChurnPercent: *churn, Jitter: *jitter, Seed: *seed,
		MinPrefixTokens: *minPrefix, BaseUSDPerMTok: *price}
	switch *model {
	case "uniform":
	case "tail":
		c.Churn = cachesim.TailChurn
	default:
		fmt.Fprintf(os.Stderr, "cachesim: unknown -model %q (uniform, tail)\n", *model)
		return 2
	}
	if err := cachesim.WriteTable(os.Stdout, c, cachesim.Run(c, compose.Placements()...)); err != nil {
		fmt.Fprintln(os.Stderr, "cachesim:", err)
		return 1
	}
	return 0
}
