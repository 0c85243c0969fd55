package tokens

import (
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/tiktoken-go/tokenizer/codec"
)

// Exact is a byte-pair-encoding counter with a vocabulary compiled into the
// binary (github.com/tiktoken-go/tokenizer): it needs no network and no
// files. Construct it with [O200kBase] or [Cl100kBase].
//
// Counts equal the encoding's token count for ordinary text. Two
// deliberate departures keep the cost linear on hostile input:
//
//   - The encoder's pre-tokenising regular expression is quadratic on long
//     whitespace runs that contain line breaks. Exact therefore cuts such a
//     run after a line break every [WhitespaceCut] bytes; a cut can change
//     the count of that run by a token or so.
//   - Special-token text such as "<|endoftext|>" is counted as ordinary
//     text, which is what a provider does with text inside a message.
//   - The library drops DEL (U+007F) characters; Exact adds a token for
//     each, so text with DEL counts at most one token more per DEL than
//     the encoding would.
//
// Texts of at least CacheMinBytes bytes are remembered (up to CacheBytes
// bytes of text in total) so that counting the same long text again costs
// one map look-up.
type Exact struct {
	name  string
	codec *codec.Codec

	mu         sync.Mutex
	cacheLimit int // bytes; CacheBytes
	cache      map[string]int
	order      []string // insertion order, for eviction
	cacheSize  int      // bytes of text held by cache
}

// Cache limits of an [Exact] counter.
const (
	// CacheMinBytes is the shortest text an Exact counter remembers;
	// shorter texts are cheaper to count again than to remember.
	CacheMinBytes = 256
	// CacheBytes bounds the text an Exact counter holds in its cache.
	CacheBytes = 8 << 20
	// WhitespaceCut is the longest stretch of a whitespace run with line
	// breaks that is handed to the encoder in one piece.
	WhitespaceCut = 256
)

// O200kBase returns an exact counter for OpenAI's o200k_base encoding
// (GPT-4o, GPT-4.1, GPT-5, o1/o3/o4). The first call in a process builds
// the vocabulary (tens of milliseconds); later calls are cheap.
func O200kBase() *Exact {
	return &Exact{name: NameO200kBase, codec: codec.NewO200kBase(), cacheLimit: CacheBytes}
}

// Cl100kBase returns an exact counter for OpenAI's cl100k_base encoding
// (GPT-4, GPT-3.5-turbo, text-embedding-3).
func Cl100kBase() *Exact {
	return &Exact{name: NameCl100kBase, codec: codec.NewCl100kBase(), cacheLimit: CacheBytes}
}

// Name returns the encoding's name, "o200k_base" or "cl100k_base".
func (e *Exact) Name() string { return e.name }

// Count returns the number of tokens the encoding produces for text.
func (e *Exact) Count(text string) int {
	if len(text) < CacheMinBytes {
		return e.count(text)
	}
	e.mu.Lock()
	n, ok := e.cache[text]
	e.mu.Unlock()
	if ok {
		return n
	}
	n = e.count(text)
	if len(text) <= e.cacheLimit/4 {
		e.remember(text, n)
	}
	return n
}

func (e *Exact) remember(text string, n int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.cache == nil {
		e.cache = make(map[string]int)
	}
	if _, ok := e.cache[text]; ok {
		return
	}
	for e.cacheSize+len(text) > e.cacheLimit && len(e.order) > 0 {
		old := e.order[0]
		e.order = e.order[1:]
		delete(e.cache, old)
		e.cacheSize -= len(old)
	}
	e.cache[text] = n
	e.order = append(e.order, text)
	e.cacheSize += len(text)
}

// count splits text at points where the encoder's pre-tokeniser is known
// to split anyway, and counts the pieces. Splitting keeps every call to
// the encoder short, which bounds the regular expression's backtracking.
func (e *Exact) count(text string) int {
	total := 0
	start := 0    // start of the piece not yet encoded
	wsStart := -1 // start of the current whitespace run, or -1
	var prev rune // the rune before i
	for i := 0; i < len(text); {
		r, size := rune(text[i]), 1
		if r >= utf8.RuneSelf {
			r, size = utf8.DecodeRuneInString(text[i:])
		}
		// Safe split: a letter or digit followed by an ASCII character that
		// is neither a letter, a digit nor an apostrophe. The piece holding
		// the letter or digit ends there in both encodings, and the next
		// piece starts there whatever came before.
		if i-start >= 64 && r < utf8.RuneSelf && !isASCIIAlnum(byte(r)) && r != '\'' &&
			(unicode.IsLetter(prev) || unicode.IsNumber(prev)) {
			total += e.encode(text[start:i])
			start = i
		}
		if isSpace(r) {
			if wsStart < 0 {
				wsStart = i
			}
			// A long whitespace run: cut it (see the type's documentation).
			if i-max(start, wsStart) >= WhitespaceCut {
				total += e.encode(text[start:i])
				start = i
			}
		} else {
			wsStart = -1
		}
		prev = r
		i += size
	}
	if start < len(text) {
		total += e.encode(text[start:])
	}
	return total
}

func (e *Exact) encode(piece string) int {
	n, err := e.codec.Count(piece)
	if err != nil {
		// The codec reports errors only for invalid UTF-8 in strict mode,
		// which is not used; fall back to one token per byte, the
		// byte-level encoding's upper bound, rather than under-count.
		return len(piece)
	}
	// The library's pre-tokeniser skips DEL (U+007F), the one character it
	// drops (checked over every rune); the encodings give it a token.
	return n + strings.Count(piece, "\x7f")
}

func isSpace(r rune) bool {
	switch r {
	case ' ', '\t', '\n', '\r', '\v', '\f':
		return true
	}
	return r >= utf8.RuneSelf && unicode.IsSpace(r)
}

func isASCIIAlnum(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}
