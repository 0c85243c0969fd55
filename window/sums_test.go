package window

import (
	"math/rand/v2"
	"reflect"
	"testing"
)

// Running sums give the same history totals as summing message by
// message, for every wire and reasoning rule, on random histories with
// system messages, user turns, reasoning, media, invalid and unpriced
// messages, and saturated figures.
func TestRunningSumsMatchMessageByMessage(t *testing.T) {
	r := rand.New(rand.NewPCG(20, 1))
	figure := func() int {
		switch r.IntN(20) {
		case 0:
			return maxTokens
		case 1, 2, 3, 4, 5, 6, 7, 8:
			return 0
		}
		return r.IntN(5000)
	}
	for trial := range 3000 {
		n := r.IntN(40)
		costs := make([]messageCost, n)
		sums := make([]costSums, n)
		for i := range costs {
			c := messageCost{
				tokens: figure(), images: figure(), lowImages: figure(), refs: figure(),
				documents: figure(), pages: figure(), unpriced: r.IntN(8) / 7,
				userTurn: r.IntN(3) == 0, system: r.IntN(4) == 0, invalid: r.IntN(10) == 0,
			}
			c.reasoning = min(figure(), c.tokens)
			costs[i] = c
			if i > 0 {
				sums[i] = sums[i-1]
			}
			sums[i] = sums[i].plus(i, &costs[i])
		}
		for _, wire := range []Wire{WireOpenAI, WireAnthropic, WireGemini, WireUnknown} {
			for _, prior := range []string{"dropped", "charged"} {
				res := &resolved{wire: wire, rules: wireRules{Wire: wire, PriorReasoning: prior}}
				cost := func(i int) *messageCost { return &costs[i] }
				want := res.totals(n, cost)
				got := res.sumTotals(n, func(k int) *costSums { return &sums[k-1] }, cost)
				if !reflect.DeepEqual(got, want) {
					t.Fatalf("trial %d, %d messages, wire %q, reasoning %s: running sums %+v, message by message %+v",
						trial, n, wire, prior, got, want)
				}
			}
		}
	}
}

// Past the point where running sums could overflow, totals are summed
// message by message.
func TestRunningSumsFallBackWhenSaturated(t *testing.T) {
	c := messageCost{tokens: maxTokens}
	s := costSums{plain: sideSums{tokens: sumCap - 1}}
	if s = s.plus(0, &c); !s.saturated {
		t.Fatalf("sums at %d tokens not marked saturated", s.plain.tokens)
	}
	res := &resolved{wire: WireAnthropic}
	got := res.sumTotals(1, func(int) *costSums { return &s }, func(int) *messageCost { return &c })
	if got.tokens != maxTokens || got.messages != 1 {
		t.Errorf("saturated history: %+v, want %d tokens in 1 message", got, maxTokens)
	}
}
