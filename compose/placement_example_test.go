package compose_test

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/ctxkit/ctxkit/compose"
)

// Two turns of a session under StableFirst: the host keeps the layout
// state between turns (here as JSON) and passes it back. On the second turn
// "config" has dropped out, so the layout is kept up to it (the stable
// part, byte-identical to the first turn's prefix) and the rest is re-laid.
func ExampleForPrompt_stableFirst() {
	turn1 := []compose.Offer{
		{Provider: "repo", Frame: doc("config", strings.Repeat("c", 40), 0.6)},
		{Provider: "repo", Frame: doc("retry", strings.Repeat("r", 40), 0.9)},
		{Provider: "wiki", Frame: doc("policy", strings.Repeat("p", 40), 0.7)},
	}
	opts := &compose.Options{Placement: compose.StableFirst, Cache: &compose.CacheOptions{MinPrefixTokens: 100}}
	res := compose.ForPrompt(turn1, 500, opts)
	stored, _ := json.Marshal(res.Layout)
	var labels []string
	for _, c := range res.Citations {
		labels = append(labels, c.Label)
	}
	fmt.Println("turn 1:", strings.Join(labels, ", "))

	turn2 := []compose.Offer{
		turn1[1], turn1[2],
		{Provider: "wiki", Frame: doc("backoff", strings.Repeat("b", 40), 0.8)},
	}
	prev, err := compose.ParseLayout(stored)
	if err != nil {
		panic(err)
	}
	opts.Previous = prev
	res = compose.ForPrompt(turn2, 500, opts)
	for i, c := range res.Citations {
		part := "volatile"
		if i < res.Cache.StableFrames {
			part = "stable"
		}
		fmt.Println(part, c.Label)
	}
	fmt.Println("stable prefix tokens:", res.Cache.StablePrefixTokens, "relay:", res.Cache.Relay)
	fmt.Println("split at a frame boundary:", strings.HasSuffix(res.Stable(), "</frame>\n"))
	// Output:
	// turn 1: retry cite, config cite, policy cite
	// stable retry cite
	// volatile backoff cite
	// volatile policy cite
	// stable prefix tokens: 124 relay: dropped
	// split at a frame boundary: true
}
