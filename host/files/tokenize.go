package files

import (
	"bytes"
	"unicode"
	"unicode/utf8"

	"github.com/ctxkit/ctxkit/host/files/internal/lex"
)

// tokenizer holds scratch space and a stem cache, so tokenising a large
// tree allocates once per distinct word rather than once per occurrence.
// A tokenizer is not safe for concurrent use; each indexing worker has one.
type tokenizer struct {
	word  []rune
	part  []byte
	whole []byte
	stems map[string]*stemEntry // lower-cased part -> its term; nil for a stop word
	dict  *termDict             // whose ids the stem cache holds
	// The current call's output: fn for each, ids and fnID for eachID.
	fn   func([]byte)
	ids  *termDict
	fnID func(uint32)
}

// maxStemCache bounds a tokenizer's stem cache.
const maxStemCache = 1 << 16

func newTokenizer() *tokenizer { return &tokenizer{stems: make(map[string]*stemEntry)} }

// each calls fn with every term of b. The slice passed to fn is valid only
// during the call.
func (tk *tokenizer) each(b []byte, fn func([]byte)) {
	tk.fn, tk.ids = fn, nil
	tk.scan(b)
}

// eachID calls fn with the id in ids of every term of b. A part's id is
// kept beside its stem in the cache, so most words cost one map access.
func (tk *tokenizer) eachID(b []byte, ids *termDict, fn func(uint32)) {
	if tk.dict != ids {
		clear(tk.stems) // the ids cached are another dictionary's
		tk.dict = ids
	}
	tk.fn, tk.ids, tk.fnID = nil, ids, fn
	tk.scan(b)
}

// emit passes a term on: to fn, or by id to fnID (e, when not nil, is the
// term's stem-cache entry and holds its id once known).
func (tk *tokenizer) emit(t []byte, e *stemEntry) {
	if tk.ids == nil {
		tk.fn(t)
		return
	}
	if e == nil {
		tk.fnID(tk.ids.id(t))
		return
	}
	if !e.known {
		e.id, e.known = tk.ids.id(t), true
	}
	tk.fnID(e.id)
}

func (tk *tokenizer) scan(b []byte) {
	tk.word = tk.word[:0]
	for i := 0; i < len(b); {
		c := b[i]
		if c < utf8.RuneSelf {
			if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' {
				tk.word = append(tk.word, rune(c))
			} else {
				tk.flush()
			}
			i++
			continue
		}
		r, n := utf8.DecodeRune(b[i:])
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			tk.word = append(tk.word, r)
		} else {
			tk.flush()
		}
		i += n
	}
	tk.flush()
}

// flush emits the pending word's parts and, for a multi-part word, the
// whole identifier.
func (tk *tokenizer) flush() {
	w := tk.word
	if len(w) == 0 {
		return
	}
	parts := 0
	tk.whole = tk.whole[:0]
	start := 0
	for i := 0; i <= len(w); i++ {
		if i < len(w) && w[i] != '_' && (i == start || !lex.IsBoundary(w, i)) {
			continue
		}
		if i > start {
			parts++
			tk.whole = lex.AppendLower(tk.whole, w[start:i])
			tk.emitPart(w[start:i])
		}
		start = i
		if i < len(w) && w[i] == '_' {
			start = i + 1
		}
	}
	if parts > 1 && len(tk.whole) >= 3 {
		tk.emit(tk.whole, nil)
	}
	tk.word = tk.word[:0]
}

func (tk *tokenizer) emitPart(part []rune) {
	if len(part) < 2 {
		return
	}
	t := lex.AppendLower(tk.part[:0], part)
	tk.part = t
	// One map access per word in the common case: the cache remembers stop
	// words too (as nil).
	if e, ok := tk.stems[string(t)]; ok {
		if e != nil {
			tk.emit(e.term, e)
		}
		return
	}
	if len(tk.stems) >= maxStemCache {
		clear(tk.stems) // bounded: a tree of generated names must not grow it without end
	}
	key := string(t)
	if stopwords[key] {
		tk.stems[key] = nil
		return
	}
	st := stem(t)
	if len(st) < 2 || stopwords[string(st)] {
		tk.stems[key] = nil
		return
	}
	e := &stemEntry{term: bytes.Clone(st)} // the cache keeps it; stem may return part's buffer
	tk.stems[key] = e
	tk.emit(e.term, e)
}

// stemEntry is a cached part: its term and, once looked up, the term's id
// in the tokenizer's dictionary.
type stemEntry struct {
	term  []byte
	id    uint32
	known bool
}

// stopwords are English function words: they carry no signal for ranking.
// Words that also name things in code (All, Any, Each, Once, After, Before,
// Until, Not, Up, Out, Get, Make, Use...) are not stop words: in an
// identifier such as FindAll or sync.Once they are what a query asks for.
var stopwords = func() map[string]bool {
	m := make(map[string]bool)
	for _, w := range []string{
		"a", "about", "also", "am", "an", "and", "are", "as", "at",
		"be", "been", "being", "but", "by", "can", "could",
		"did", "do", "does", "doing", "for", "from", "had", "has", "have",
		"he", "her", "here", "him", "his", "how", "i", "if", "in", "into", "is", "it",
		"its", "itself", "just", "me", "my", "nor", "of",
		"on", "or", "our", "she",
		"should", "so", "such", "than", "that", "the", "their", "them", "then",
		"there", "these", "they", "this", "those", "through", "to", "too",
		"very", "was", "we", "were", "what", "when", "where", "which",
		"while", "who", "whom", "why", "will", "with", "would", "you", "your", "want",
		"way", "go", "golang", "need", "happen", "happens",
	} {
		m[w] = true
	}
	return m
}()
