package tokens

import "sync"

// countCache remembers the counts of long texts, bounded by the bytes of
// text it holds. Eviction is CLOCK (second chance): a hit marks its entry,
// and the hand sweeping for room clears marks and evicts the first entry
// not marked since its last pass, so texts that recur outlive a stream of
// texts seen once. A limit of 0 or less disables the cache.
type countCache struct {
	mu    sync.Mutex
	limit int // bytes of text
	size  int
	index map[string]int // text to slot
	slots []cacheSlot
	free  []int
	hand  int
}

type cacheSlot struct {
	text  string
	count int
	used  bool // holds an entry
	ref   bool // hit since the hand last passed
}

func (c *countCache) get(text string) (int, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	k, ok := c.index[text]
	if !ok {
		return 0, false
	}
	c.slots[k].ref = true
	return c.slots[k].count, true
}

func (c *countCache) put(text string, n int) {
	if len(text) > c.limit/4 {
		return // one text must not flush a quarter of the cache
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.index[text]; ok {
		return
	}
	if c.index == nil {
		c.index = make(map[string]int)
	}
	for c.size+len(text) > c.limit && len(c.index) > 0 {
		c.evict()
	}
	slot := cacheSlot{text: text, count: n, used: true}
	var k int
	if len(c.free) > 0 {
		k = c.free[len(c.free)-1]
		c.free = c.free[:len(c.free)-1]
		c.slots[k] = slot
	} else {
		k = len(c.slots)
		c.slots = append(c.slots, slot)
	}
	c.index[text] = k
	c.size += len(text)
}

// evict removes one entry: the first unmarked one from the hand on.
func (c *countCache) evict() {
	for {
		if c.hand >= len(c.slots) {
			c.hand = 0
		}
		s := &c.slots[c.hand]
		k := c.hand
		c.hand++
		if !s.used {
			continue
		}
		if s.ref {
			s.ref = false
			continue
		}
		delete(c.index, s.text)
		c.size -= len(s.text)
		*s = cacheSlot{}
		c.free = append(c.free, k)
		return
	}
}
