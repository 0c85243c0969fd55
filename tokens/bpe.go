package tokens

// Byte-pair encoding of one piece, as tiktoken does it: start from single
// bytes and repeatedly merge the adjacent pair whose concatenation has the
// lowest rank (the leftmost of equals) until no adjacent pair is a token.
// Short pieces use tiktoken's own quadratic loop over a small array, which
// is fastest for them; long ones (a 100 KB word, a long run of one symbol)
// keep their pairs in a heap, O(n log n), with the same result.

// shortPiece is the longest piece merged by the array loop.
const shortPiece = 128

// pieceParts merges piece p and returns the number of tokens. When starts
// is not nil, the parts' start offsets are appended to it and returned.
//
// Counting passes nil, and nothing is allocated: most pieces are one
// token, and an append to a nil slice per piece once cost a quarter of
// the counting time.
func (v *vocab) pieceParts(p string, starts []int32) (int, []int32) {
	switch {
	case len(p) == 1:
		return 1, appendStarts(starts, 0)
	case len(p) == 2:
		if v.pairs[uint16(p[0])<<8|uint16(p[1])] != noRank {
			return 1, appendStarts(starts, 0)
		}
		return 2, appendStarts(starts, 0, 1)
	case v.rank(p) != noRank:
		return 1, appendStarts(starts, 0)
	}
	if len(p) <= shortPiece {
		return v.mergeShort(p, starts)
	}
	return v.mergeLong(p, starts)
}

// appendStarts appends offsets to starts unless starts is nil (counting).
func appendStarts(starts []int32, offsets ...int32) []int32 {
	if starts == nil {
		return nil
	}
	return append(starts, offsets...)
}

func (v *vocab) mergeShort(p string, out []int32) (int, []int32) {
	var sbuf [shortPiece + 1]int32
	var rbuf [shortPiece]uint32
	n := len(p)
	starts, ranks := sbuf[:n+1], rbuf[:n]
	for k := range starts {
		starts[k] = int32(k)
	}
	for k := 0; k < n-1; k++ {
		ranks[k] = v.pairs[uint16(p[k])<<8|uint16(p[k+1])]
	}
	ranks[n-1] = noRank
	parts := n
	for parts > 1 {
		best, at := uint32(noRank), -1
		for k, r := range ranks[:parts-1] {
			if r < best {
				best, at = r, k
			}
		}
		if at < 0 {
			break
		}
		copy(starts[at+1:parts], starts[at+2:parts+1])
		copy(ranks[at+1:parts-1], ranks[at+2:parts])
		parts--
		ranks[at] = noRank
		if at+1 < parts {
			ranks[at] = v.rank(p[starts[at]:starts[at+2]])
		}
		if at > 0 {
			ranks[at-1] = v.rank(p[starts[at-1]:starts[at+1]])
		}
	}
	if out != nil {
		out = append(out, starts[:parts]...)
	}
	return parts, out
}

// mergeLong is the heap form. Parts are named by their start offset;
// next links them, and pair[i] is the rank of part i merged with its
// successor. Heap entries are rank<<32 | offset, so the minimum is the
// lowest rank, leftmost first; entries whose pair has changed since are
// skipped when popped.
func (v *vocab) mergeLong(p string, out []int32) (int, []int32) {
	n := len(p)
	next := make([]int32, n)
	prev := make([]int32, n)
	pair := make([]uint32, n)
	h := make(pairHeap, 0, n)
	for i := range n {
		next[i], prev[i] = int32(i+1), int32(i-1)
	}
	rankAt := func(i int32) uint32 {
		j := next[i]
		if int(j) >= n {
			return noRank
		}
		end := int(next[j])
		return v.rank(p[i:end])
	}
	for i := range int32(n) {
		if pair[i] = rankAt(i); pair[i] != noRank {
			h.push(uint64(pair[i])<<32 | uint64(i))
		}
	}
	parts := n
	for len(h) > 0 {
		e := h.pop()
		i, r := int32(e&0xffffffff), uint32(e>>32)
		if pair[i] != r {
			continue
		}
		j := next[i]
		next[i] = next[j]
		if int(next[j]) < n {
			prev[next[j]] = i
		}
		pair[j] = noRank
		parts--
		if pair[i] = rankAt(i); pair[i] != noRank {
			h.push(uint64(pair[i])<<32 | uint64(i))
		}
		if pi := prev[i]; pi >= 0 {
			if pair[pi] = rankAt(pi); pair[pi] != noRank {
				h.push(uint64(pair[pi])<<32 | uint64(pi))
			}
		}
	}
	if out != nil {
		for i := int32(0); int(i) < n; i = next[i] {
			out = append(out, i)
		}
	}
	return parts, out
}

// pairHeap is a binary min-heap of merge candidates.
type pairHeap []uint64

func (h *pairHeap) push(x uint64) {
	*h = append(*h, x)
	a := *h
	for k := len(a) - 1; k > 0; {
		parent := (k - 1) / 2
		if a[parent] <= a[k] {
			break
		}
		a[parent], a[k] = a[k], a[parent]
		k = parent
	}
}

func (h *pairHeap) pop() uint64 {
	a := *h
	top := a[0]
	last := len(a) - 1
	a[0] = a[last]
	a = a[:last]
	for k := 0; ; {
		l, m := 2*k+1, k
		if l < len(a) && a[l] < a[m] {
			m = l
		}
		if l+1 < len(a) && a[l+1] < a[m] {
			m = l + 1
		}
		if m == k {
			break
		}
		a[k], a[m] = a[m], a[k]
		k = m
	}
	*h = a
	return top
}
