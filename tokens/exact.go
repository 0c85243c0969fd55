package tokens

import (
	"unicode/utf8"
)

// exact is a byte-pair-encoding counter for one of OpenAI's encodings,
// o200k_base or cl100k_base, equal to OpenAI's tiktoken: the same
// pieces from the same pre-tokenising pattern, the same merges over the
// same ranks, so the count is tiktoken's len(encode_ordinary(text)).
//
// The ranks are embedded in the binary as compressed tables and parsed on
// the first count of each encoding (tens of milliseconds); nothing is
// read from disk or the network.
//
// exact follows tiktoken, not its JavaScript ports, where the two differ
// (the ports use JavaScript regular expressions, whose classes are not
// the Rust regex crate's):
//
//   - \s is Unicode's White_Space property: U+0085 NEXT LINE is white
//     space and U+FEFF ZERO WIDTH NO-BREAK SPACE is not (JavaScript's \s
//     has it the other way round);
//   - contractions match case-insensitively by Unicode case folding, so
//     "'ſ" (U+017F LONG S) is a contraction like "'s" (the ports spell
//     out 's|'S|... and miss it).
//
// Character classes come from Go's Unicode tables (unicode.Version,
// 15.0.0). A character assigned in a later version is unassigned here;
// tiktoken classes it by the tables of the regex crate it was built with,
// a JavaScript port by its runtime's (Node 20: Unicode 17), so such
// characters can split differently between implementations.
//
// Text is a Go string of bytes. tiktoken encodes Unicode strings, so
// ill-formed UTF-8 is first decoded as Python's errors="replace", the
// WHATWG TextDecoder and Node.js do: each maximal ill-formed subpart
// becomes U+FFFD. Special-token text such as "<|endoftext|>" is ordinary
// text, which is what a provider does with text inside a message.
//
// The cost is linear in the text: the pre-tokeniser never backtracks
// further than one run of one class, and long pieces merge through a heap.
// Counts of texts of at least cacheMinBytes bytes are remembered (up to
// cacheBytes bytes of text in all, CLOCK eviction, so a text counted
// again, such as a message re-sent with every turn, stays while one-off
// texts pass through).
type exact struct {
	name  string
	vocab *lazyVocab
	o200k bool // o200k_base's pattern, else cl100k_base's
	cache countCache
}

// piece returns the end of the piece at i. A branch, not a function
// value: an indirect call would move the scanner to the heap.
func (e *exact) piece(sc *scanner, i int) int {
	if e.o200k {
		return sc.pieceO200k(i)
	}
	return sc.pieceCl100k(i)
}

// Cache limits of an exact counter.
const (
	// cacheMinBytes is the shortest text an exact counter remembers;
	// shorter texts are cheaper to count again than to remember.
	cacheMinBytes = 256
	// cacheBytes bounds the text an exact counter holds in its cache.
	cacheBytes = 8 << 20
)

// o200kBase returns an exact counter for OpenAI's o200k_base encoding
// (GPT-4o, GPT-4.1, GPT-5, o1/o3/o4).
func o200kBase() *exact {
	return &exact{name: nameO200kBase, vocab: o200kVocab, o200k: true, cache: countCache{limit: cacheBytes}}
}

// cl100kBase returns an exact counter for OpenAI's cl100k_base encoding
// (GPT-4, GPT-3.5-turbo, text-embedding-3).
func cl100kBase() *exact {
	return &exact{name: nameCl100kBase, vocab: cl100kVocab, cache: countCache{limit: cacheBytes}}
}

// Name returns the encoding's name, "o200k_base" or "cl100k_base".
func (e *exact) Name() string { return e.name }

// Count returns the number of tokens the encoding produces for text.
func (e *exact) Count(text string) int {
	if len(text) < cacheMinBytes {
		return e.count(text)
	}
	if n, ok := e.cache.get(text); ok {
		return n
	}
	n := e.count(text)
	e.cache.put(text, n)
	return n
}

// count encodes text without the cache.
func (e *exact) count(text string) int {
	n, _ := e.run(text, false)
	return n
}

// encode returns the token ids of text, the same as tiktoken's
// encode_ordinary. Tests use it to compare with reference encoders.
func (e *exact) encode(text string) []uint32 {
	_, ids := e.run(text, true)
	return ids
}

func (e *exact) run(text string, wantIDs bool) (int, []uint32) {
	v, err := e.vocab.get()
	if err != nil {
		// The embedded tables are checked by the tests; should one be
		// damaged, a byte per token is the byte-level encoding's upper
		// bound, so the count errs high.
		return len(text), nil
	}
	if !utf8.ValidString(text) {
		text = string(replaceInvalid(text))
	}
	sc := scanner{s: text, bmp: bmpTable()}
	if !wantIDs {
		total := 0
		for i := 0; i < len(text); {
			j := e.piece(&sc, i)
			n, _ := v.pieceParts(text[i:j], nil)
			total += n
			i = j
		}
		return total, nil
	}
	var ids []uint32
	starts := make([]int32, 0, 64)
	for i := 0; i < len(text); {
		j := e.piece(&sc, i)
		p := text[i:j]
		starts = starts[:0]
		_, starts = v.pieceParts(p, starts)
		for k, s := range starts {
			end := len(p)
			if k+1 < len(starts) {
				end = int(starts[k+1])
			}
			ids = append(ids, v.rank(p[s:end]))
		}
		i = j
	}
	return len(ids), ids
}
