package window

// costSums are running sums of message costs over the first messages of a
// history. A Session keeps one per cached message, so that an assessment
// after an append reads the history's totals from two of them (the whole
// history, and the part before its last user turn) instead of visiting
// every message: the work per append does not grow with the history.
type costSums struct {
	plain, system sideSums // other roles; the system and developer roles
	images        int64
	lowImages     int64
	refs          int64
	documents     int64
	pages         int64
	invalid       int // messages charged as text
	unpriced      int // messages with unpriced media by reference
	lastUserTurn  int // 1 + index of the last user turn; 0: none
	saturated     bool
}

type sideSums struct{ tokens, reasoning, count int64 }

// sumCap is where running sums stop being trusted: each figure is at most
// maxTokens (2^40), so only millions of saturated messages reach it, and
// totals are then summed message by message instead.
const sumCap = 1 << 61

// plus returns s with c, the cost of message i (the next one), added.
func (s costSums) plus(i int, c *messageCost) costSums {
	side := &s.plain
	if c.system {
		side = &s.system
	}
	side.tokens += int64(c.tokens)
	side.reasoning += int64(c.reasoning)
	side.count++
	s.images += int64(c.images)
	s.lowImages += int64(c.lowImages)
	s.refs += int64(c.refs)
	s.documents += int64(c.documents)
	s.pages += int64(c.pages)
	if c.invalid {
		s.invalid++
	}
	if c.unpriced > 0 {
		s.unpriced++
	}
	if c.userTurn {
		s.lastUserTurn = i + 1
	}
	s.saturated = s.saturated || max(s.plain.tokens, s.system.tokens, s.images, s.lowImages, s.refs, s.documents, s.pages) >= sumCap
	return s
}

// sumTotals equals totals(n, cost), read from running sums: at(k) returns
// the sums of the first k messages, 1 ≤ k ≤ n.
func (r *resolved) sumTotals(n int, at func(k int) *costSums, cost func(int) *messageCost) historyTotals {
	if n == 0 {
		return historyTotals{}
	}
	all := at(n)
	if all.saturated {
		return r.totals(n, cost)
	}
	// The messages before the last user turn, whose reasoning is not
	// charged on a wire that drops it.
	var before costSums
	if r.rules.dropsPriorReasoning() && all.lastUserTurn > 1 {
		before = *at(all.lastUserTurn - 1)
	}
	plain := all.plain.tokens - before.plain.reasoning
	system := all.system.tokens - before.system.reasoning
	h := historyTotals{
		images:           capped(all.images),
		lowImages:        capped(all.lowImages),
		refs:             capped(all.refs),
		documents:        capped(all.documents),
		pages:            capped(all.pages),
		reasoningDropped: capped(before.plain.reasoning + before.system.reasoning),
	}
	if r.wire == WireOpenAI {
		h.tokens, h.messages = capped(plain), int(all.plain.count)
		h.system = capped(system + FramingTokensPerMessage*all.system.count)
	} else {
		h.tokens, h.messages = capped(plain+system), int(all.plain.count+all.system.count)
	}
	if all.invalid > 0 || all.unpriced > 0 {
		for i := range n {
			c := cost(i)
			if c.invalid {
				h.invalid = append(h.invalid, i)
			}
			if c.unpriced > 0 {
				h.unpriced = append(h.unpriced, i)
			}
		}
	}
	return h
}

// capped saturates a sum at maxTokens, as satAdd does step by step.
func capped(v int64) int { return int(min(v, maxTokens)) }
