package tokens

import "unicode/utf8"

// The pre-tokenisers split text into the pieces that byte-pair encoding
// then encodes one at a time. Each is tiktoken's regular expression for
// its encoding, written out as a scanner: the alternatives are tried in
// the pattern's order and each quantifier backtracks as the regex engine
// would, but every decision is made from a bounded look at the input, so
// the cost is linear in the text whatever it holds.
//
// cl100k_base:
//
//	'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}+|\p{N}{1,3}|
//	 ?[^\s\p{L}\p{N}]++[\r\n]*|\s*[\r\n]|\s+(?!\S)|\s+
//
// o200k_base:
//
//	[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?|
//	[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?|
//	\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+
//
// Every character matches some alternative of both patterns, so each call
// returns an end beyond its start.

// pieceCl100k returns the end of the cl100k_base piece that starts at i.
func (sc *scanner) pieceCl100k(i int) int {
	s := sc.s
	if s[i] == '\'' {
		if n := contraction(s, i); n > 0 {
			return i + n
		}
	}
	c, n := sc.at(i)
	switch {
	case c&clLetter != 0:
		return sc.skip(i+n, clLetter, 0)
	case c&(clNumber|clNewline) == 0 && i+n < len(s):
		if c2, n2 := sc.at(i + n); c2&clLetter != 0 {
			return sc.skip(i+n+n2, clLetter, 0)
		}
	}
	return sc.afterWords(i, c, false)
}

// pieceO200k returns the end of the o200k_base piece that starts at i.
func (sc *scanner) pieceO200k(i int) int {
	if j := sc.asciiO200k(i); j > i {
		return j
	}
	return sc.pieceO200kAny(i)
}

// asciiO200k is pieceO200k for the common case where the piece is decided
// by ASCII characters alone; it returns -1 when a character it would have
// to look at is not ASCII. It takes the same decisions as pieceO200kAny
// without trying alternatives that cannot match ASCII: a word needs a
// letter at i or, after a one-character prefix, at i+1 (ASCII has no
// marks, and no letter of both case classes).
func (sc *scanner) asciiO200k(i int) int {
	s := sc.s
	if s[i] >= utf8.RuneSelf {
		return -1
	}
	switch c := asciiClass[s[i]]; {
	case c&clLetter != 0:
		return sc.asciiWord(i)
	case c&clNumber != 0:
		return sc.digits(i)
	case c&clNewline != 0:
		return sc.whitespace(i)
	}
	if i+1 < len(s) {
		if s[i+1] >= utf8.RuneSelf {
			return -1
		}
		if asciiClass[s[i+1]]&clLetter != 0 {
			return sc.asciiWord(i + 1)
		}
	}
	if j := sc.punctuation(i, true); j > i {
		return j
	}
	return sc.whitespace(i)
}

// asciiWord matches o200k_base's two word alternatives on ASCII at i,
// which holds a letter: capitals, then small letters, then a
// contraction; -1 when a non-ASCII character ends either run (it could be
// a letter or a mark, which pieceO200kAny decides).
func (sc *scanner) asciiWord(i int) int {
	s := sc.s
	j := i
	for j < len(s) && s[j] < utf8.RuneSelf && asciiClass[s[j]]&clUpper != 0 {
		j++
	}
	k := j
	for k < len(s) && s[k] < utf8.RuneSelf && asciiClass[s[k]]&clLower != 0 {
		k++
	}
	if k < len(s) && s[k] >= utf8.RuneSelf {
		return -1
	}
	return k + contraction(s, k)
}

// pieceO200kAny is pieceO200k on any text: the pattern's alternatives in
// order.
func (sc *scanner) pieceO200kAny(i int) int {
	c, n := sc.at(i)
	prefix := c&(clLetter|clNumber|clNewline) == 0 // [^\r\n\p{L}\p{N}]
	if prefix && i+n < len(sc.s) {
		if j := sc.lowerWord(i + n); j >= 0 {
			return j
		}
	}
	if j := sc.lowerWord(i); j >= 0 {
		return j
	}
	if prefix && i+n < len(sc.s) {
		if j := sc.upperWord(i + n); j >= 0 {
			return j
		}
	}
	if j := sc.upperWord(i); j >= 0 {
		return j
	}
	return sc.afterWords(i, c, true)
}

// afterWords matches the alternatives both patterns try after their words,
// in order, at i, whose character has class c: `\p{N}{1,3}`, then
// punctuation (with slash, o200k's form), then white space.
func (sc *scanner) afterWords(i int, c uint8, slash bool) int {
	if c&clNumber != 0 {
		return sc.digits(i)
	}
	if j := sc.punctuation(i, slash); j > i {
		return j
	}
	return sc.whitespace(i)
}

// lowerWord matches [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+
// and an optional contraction at i, returning the end or -1. The greedy
// first run gives back characters until the second can match: the match
// ends after the first run when a lower-class character follows it, else
// after the last character of the first run that is also lower-class.
func (sc *scanner) lowerWord(i int) int {
	j, lastLower, lastLowerEnd := i, -1, -1
	for j < len(sc.s) {
		c, n := asciiClass[sc.s[j]&0x7f], 1 // at, inlined by hand
		if sc.s[j] >= utf8.RuneSelf {
			c, n = sc.atMultibyte(j)
		}
		if c&clUpper == 0 {
			break
		}
		if c&clLower != 0 {
			lastLower, lastLowerEnd = j, j+n
		}
		j += n
	}
	end := -1
	if j < len(sc.s) {
		if c, n := sc.at(j); c&clLower != 0 {
			end = sc.skip(j+n, clLower, 0)
		}
	}
	if end < 0 {
		if lastLower < 0 {
			return -1
		}
		end = lastLowerEnd
	}
	return end + contraction(sc.s, end)
}

// upperWord matches [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*
// and an optional contraction at i, returning the end or -1.
func (sc *scanner) upperWord(i int) int {
	j := sc.skip(i, clUpper, 0)
	if j == i {
		return -1
	}
	j = sc.skip(j, clLower, 0)
	return j + contraction(sc.s, j)
}

// digits matches \p{N}{1,3} at i, which holds a number.
func (sc *scanner) digits(i int) int {
	_, n := sc.at(i)
	j := i + n
	for k := 1; k < 3 && j < len(sc.s); k++ {
		c, n := sc.at(j)
		if c&clNumber == 0 {
			break
		}
		j += n
	}
	return j
}

// punctuation matches ` ?[^\s\p{L}\p{N}]+[\r\n]*` (with slash, the o200k
// form `[\r\n/]*`) at i, returning i when it does not match.
func (sc *scanner) punctuation(i int, slash bool) int {
	j := i
	if sc.s[j] == ' ' {
		j++
	}
	if j >= len(sc.s) {
		return i
	}
	if c, _ := sc.at(j); c&(clSpace|clLetter|clNumber) != 0 {
		return i
	}
	j = sc.skip(j, 0, clSpace|clLetter|clNumber)
	for j < len(sc.s) && (sc.s[j] == '\r' || sc.s[j] == '\n' || slash && sc.s[j] == '/') {
		j++
	}
	return j
}

// whitespace matches the last three alternatives at i, which holds white
// space. `\s*[\r\n]+` ends after the run's last line break when it has
// one; otherwise `\s+(?!\S)` takes the whole run at the end of the text,
// or all of it but its last character (which then prefixes what follows);
// a single white-space character before other text falls to `\s+`.
func (sc *scanner) whitespace(i int) int {
	j, lastBreak, last := i, -1, i
	for j < len(sc.s) {
		c, n := sc.at(j)
		if c&clSpace == 0 {
			break
		}
		if c&clNewline != 0 {
			lastBreak = j
		}
		last = j
		j += n
	}
	switch {
	case lastBreak >= 0:
		return lastBreak + 1
	case j == len(sc.s), last == i:
		return j
	default:
		return last
	}
}

// contraction returns the length of an English contraction at s[i:]
// ('s 't 're 've 'm 'll 'd in any case), or 0. Case-insensitive matching
// in tiktoken's regex engine follows Unicode simple case folding, under
// which U+017F LATIN SMALL LETTER LONG S is an s.
func contraction(s string, i int) int {
	if i+1 >= len(s) || s[i] != '\'' {
		return 0
	}
	switch s[i+1] | 0x20 {
	case 's', 't', 'm', 'd':
		return 2
	case 'r', 'v':
		if i+2 < len(s) && s[i+2]|0x20 == 'e' {
			return 3
		}
		return 0
	case 'l':
		if i+2 < len(s) && s[i+2]|0x20 == 'l' {
			return 3
		}
		return 0
	}
	if s[i+1] == 0xC5 && i+2 < len(s) && s[i+2] == 0xBF { // ſ
		return 3
	}
	return 0
}
