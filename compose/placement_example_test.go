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

// Hysteresis against score jitter: on the second turn "backoff" outscores
// "policy" by 0.02, and the budget holds only two frames. Without a margin
// policy is swapped out and the prefix breaks there; with a margin of 0.1
// policy is held and the audit says so.
func ExampleForPrompt_stickyMargin() {
	turn1 := []compose.Offer{
		{Provider: "repo", Frame: doc("retry", strings.Repeat("r", 40), 0.9)},
		{Provider: "repo", Frame: doc("policy", strings.Repeat("p", 40), 0.6)},
		{Provider: "repo", Frame: doc("backoff", strings.Repeat("b", 40), 0.5)},
	}
	// Room for retry and one of the other two.
	budget := compose.RenderedCost("repo", turn1[0].Frame) + compose.RenderedCost("repo", turn1[2].Frame)
	first := compose.ForPrompt(turn1, budget, &compose.Options{Placement: compose.StableFirst})

	turn2 := []compose.Offer{turn1[0],
		{Provider: "repo", Frame: doc("policy", strings.Repeat("p", 40), 0.56)},
		{Provider: "repo", Frame: doc("backoff", strings.Repeat("b", 40), 0.58)},
	}
	for _, margin := range []float32{0, 0.1} {
		res := compose.ForPrompt(turn2, budget, &compose.Options{Placement: compose.StableFirst,
			Previous: first.Layout, StickyMargin: margin})
		fmt.Printf("margin %g: %d of 2 frames stable\n", margin, res.Cache.StableFrames)
		for _, e := range res.Audit.Entries {
			if e.Sticky != compose.NotSticky {
				fmt.Printf("  %s %s: %s\n", e.Frame.Frame, e.Disposition, e.Sticky)
			}
		}
	}
	// Output:
	// margin 0: 1 of 2 frames stable
	// margin 0.1: 2 of 2 frames stable
	//   policy included: held
	//   backoff excluded: displaced
}

// Content blocks for a provider with explicit cache breakpoints: the
// preamble and one block per frame. The host marks the last stable block
// and the last block, so the next turn can read either prefix from the
// cache.
func ExampleResult_Blocks() {
	offers := []compose.Offer{
		{Provider: "repo", Frame: doc("retry", strings.Repeat("r", 40), 0.9)},
		{Provider: "wiki", Frame: doc("policy", strings.Repeat("p", 40), 0.7)},
	}
	opts := &compose.Options{Placement: compose.StableFirst}
	first := compose.ForPrompt(offers, 500, opts)
	// The next turn brings one more frame; the first two stay stable.
	offers = append(offers, compose.Offer{Provider: "wiki", Frame: doc("backoff", strings.Repeat("b", 40), 0.5)})
	opts.Previous = first.Layout
	res := compose.ForPrompt(offers, 500, opts)

	blocks := res.Blocks()
	lastStable := res.Cache.StableFrames // blocks[0] is the preamble
	for i, b := range blocks {
		mark := ""
		if i == lastStable || i == len(blocks)-1 {
			mark = " cache_control"
		}
		fmt.Printf("block %d: %d bytes%s\n", i, len(b), mark)
	}
	fmt.Println("joined:", strings.Join(blocks, "") == res.Prompt)
	fmt.Println("stable:", strings.Join(blocks[:lastStable+1], "") == res.Stable())
	// Output:
	// block 0: 381 bytes
	// block 1: 114 bytes
	// block 2: 116 bytes cache_control
	// block 3: 118 bytes cache_control
	// joined: true
	// stable: true
}
