package cachesim_test

import (
	"fmt"

	"github.com/ctxkit/ctxkit/compose"
	"github.com/ctxkit/ctxkit/compose/cachesim"
)

// A session where only scores jitter: the value fold reorders the block
// every turn, stable-first keeps nearly all of it.
func ExampleRun() {
	c := cachesim.Config{Turns: 10, ChurnPercent: 0, Jitter: 0.05, Seed: 1}
	for _, r := range cachesim.Run(c, compose.EdgesByRank, compose.StableFirst) {
		fmt.Printf("%s: shared prefix over 50%%: %v\n", r.Placement, r.SharedPrefixFraction > 0.5)
	}
	// Output:
	// edges-by-rank: shared prefix over 50%: false
	// stable-first: shared prefix over 50%: true
}
