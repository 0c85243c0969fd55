package tokens

import "unicode/utf8"

// Safe is the default estimator for models without an offline tokenizer.
// It is a bound: Safe(s) ≥ max(o200k_base(s), cl100k_base(s)) for every
// string s, and it over-counts English prose by at most 1.5× (both
// checked by tests; the figures are in BENCHMARKS.md).
//
// The bound is by construction: Safe is the larger of a per-class charge
// and both exact counts. A per-class charge alone cannot be a bound, the
// argument goes, because the cost of a character depends on the whole
// vocabulary: the most a character can cost in a byte-level BPE is one
// token per UTF-8 byte (1 for ASCII, including control characters and
// DEL, 2 to 4 for other characters, 1 for each ill-formed byte, which
// tiktoken sees as the 3-byte U+FFFD but encodes in at most 3 tokens), and
// that worst case is reached by short strings: "\v\v\v\v" costs 4
// tokens, a 4-letter base64 string 3, ", 164, 165" 6. Any charge low
// enough for prose (about 4.5 bytes per token) is exceeded somewhere:
// random letter ids, spaced digits, combining marks, C1 controls and
// uniform CJK all cost more per byte than prose. So Safe counts exactly
// too, with the same encoders the exact counters use (without their cache), and
// pays their cost: about that of two exact counts.
//
// The per-class charge keeps a margin over the OpenAI encodings for other
// vendors' tokenizers, which split rarer text more finely. The text is
// scanned once, left to right, and every run is charged by what byte-pair
// encoders do with it:
//
//   - a high-entropy run — ASCII letters, digits and + / = _ - with at
//     least 6 (highEntropyMin) letters and digits that are hex, or switch
//     between lower case, upper case and digits at least once per
//     4 (highEntropySwitch) of them (once per 5 when under 30% of the
//     letters are vowels), or are letters with under one vowel in five —
//     costs 0.85 tokens per letter or digit, 1 per symbol, plus
//     2 (highEntropyExtra);
//   - any other run of ASCII letters and digits costs ceil(n/4) per
//     case segment ("getElementById" is get|Element|By|Id) and ceil(n/3)
//     per digit segment (encoders split numbers into groups of three);
//   - ASCII punctuation costs a token per character, except that the last
//     one of a run directly before a word rides with it;
//   - whitespace: a single space before a word or punctuation is free;
//     other runs cost a token per line break plus ceil(spaces/4);
//   - non-ASCII characters cost by UTF-8 length: 1.25 tokens for a 2-byte
//     character, 1.75 for a 3-byte one, 4 for a 4-byte one; an invalid
//     byte costs 1.
//
// Anchoring on the usage a provider reports (package window) corrects
// what remains for models whose tokenizer is not OpenAI's.
type Safe struct{}

// Parameters of [Safe]'s high-entropy class.
const (
	// highEntropyMin is the fewest letters and digits of a run Safe may
	// classify as high-entropy.
	highEntropyMin = 6
	// highEntropySwitch: a run is high-entropy when it switches between
	// lower case, upper case and digits at least once per this many
	// letters and digits.
	highEntropySwitch = 4
	// highEntropyExtra is added to every high-entropy run's charge, for
	// the tokens its edges split.
	highEntropyExtra = 2
)

// Name returns "safe".
func (Safe) Name() string { return nameSafe }

// Count returns Safe's estimate for text: the larger of its per-class
// charge and the exact o200k_base and cl100k_base counts.
func (Safe) Count(text string) int {
	o := exact{name: nameO200kBase, vocab: o200kVocab, o200k: true}
	c := exact{name: nameCl100kBase, vocab: cl100kVocab}
	return max(classCharge(text), o.count(text), c.count(text))
}

// classCharge is Safe's per-class charge (see [Safe]).
func classCharge(text string) int {
	// Charges are accumulated in quarters of a token.
	q := 0
	n := len(text)
	plainUntil := 0 // text[:plainUntil] is known not to start a high-entropy run
	for i := 0; i < n; {
		c := text[i]
		if i >= plainUntil && isRunByte(c) {
			j, cost, ok := highEntropyRun(text, i)
			if ok {
				q += 4 * cost
				i = j
				continue
			}
			plainUntil = j
		}
		switch {
		case c >= utf8.RuneSelf:
			_, size := utf8.DecodeRuneInString(text[i:])
			switch size {
			case 2:
				q += 5
			case 3:
				q += 7
			case 4:
				q += 16
			default: // invalid byte
				q += 4
			}
			i += size
		case isASCIIAlnum(c):
			j := i + 1
			for j < n && isASCIIAlnum(text[j]) {
				j++
			}
			q += 4 * wordCost(text[i:j])
			i = j
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f':
			j := i
			breaks, spaces := 0, 0
			for j < n {
				switch text[j] {
				case '\n', '\r':
					breaks++
				case ' ', '\t', '\v', '\f':
					spaces++
				default:
					goto done
				}
				j++
			}
		done:
			if breaks == 0 && spaces == 1 && j < n {
				// A single space before something else joins its token.
			} else {
				q += 4 * (breaks + (spaces+3)/4)
			}
			i = j
		default: // ASCII punctuation and control characters
			j := i + 1
			for j < n && isASCIIPunct(text[j]) {
				j++
			}
			cost := j - i
			if j < n && isASCIIAlnum(text[j]) && cost > 1 {
				cost-- // the last one rides with the word
			}
			q += 4 * cost
			i = j
		}
	}
	return q/4 + boolInt(q%4 != 0)
}

// isRunByte reports whether c can be part of a high-entropy run: ASCII
// letters and digits plus the base64, base64url and UUID symbols.
func isRunByte(c byte) bool {
	return isASCIIAlnum(c) || c == '+' || c == '/' || c == '=' || c == '_' || c == '-'
}

// highEntropyRun scans the run of isRunByte bytes at text[i:] and returns
// its end, and its cost when it looks like a hash, UUID or base64: at least
// highEntropyMin letters and digits classified as Safe's documentation
// says. Such a run costs ceil(0.85 × letters and digits) + symbols +
// highEntropyExtra.
func highEntropyRun(text string, i int) (end, cost int, ok bool) {
	j := i
	alnum, switches, last, before := 0, 0, -1, -1
	letters, vowels, lowerHex, upperHex := 0, 0, 0, 0
	for ; j < len(text); j++ {
		k := kinds[text[j]]
		if k&kindRun == 0 {
			break
		}
		if k&kindAlnum == 0 {
			continue
		}
		alnum++
		if k&kindDigit == 0 {
			letters++
		}
		if k&kindVowel != 0 {
			vowels++
		}
		if k&kindHexLetter != 0 {
			if k&kindUpper != 0 {
				upperHex++
			} else {
				lowerHex++
			}
		}
		class := int(k & kindClassMask)
		// A single capital starting lower case ("Title") is no switch;
		// the lower case after a run of capitals ("HTTPServer") is.
		title := last == classUpper && class == classLower && before != classUpper
		if last >= 0 && class != last && !title {
			switches++
		}
		before, last = last, class
	}
	if alnum < highEntropyMin {
		return j, 0, false
	}
	// Hex (letters only a–f, or only A–F) is high-entropy whatever its
	// switches: "deadbeef" tokenizes like any digest.
	hex := letters > 0 && (letters == lowerHex || letters == upperHex)
	// Random letters are mostly consonants: under one vowel in five
	// (English words have about two in five).
	unpronounceable := letters >= 8 && vowels*5 < letters
	// Frequent switches, or fairly frequent ones among few vowels.
	switching := switches*highEntropySwitch >= alnum || switches*5 >= alnum && vowels*10 < letters*3
	if !hex && !unpronounceable && !switching {
		return j, 0, false
	}
	symbols := j - i - alnum
	return j, (alnum*17+19)/20 + symbols + highEntropyExtra, true
}

// Byte kinds for the scanner: the case/digit class in the low bits, then
// flags.
const (
	kindClassMask = 3 // classLower, classUpper or classDigit
	kindAlnum     = 1 << 2
	kindRun       = 1 << 3 // isRunByte
	kindDigit     = 1 << 4
	kindUpper     = 1 << 5
	kindVowel     = 1 << 6
	kindHexLetter = 1 << 7
)

// kinds maps every byte to its kind flags. It is computed once and never
// written afterwards.
var kinds = func() (t [256]uint8) {
	for c := 0; c < 256; c++ {
		b := byte(c)
		var k uint8
		if isASCIIAlnum(b) {
			k |= kindAlnum | uint8(charClass(b))
			switch {
			case b <= '9':
				k |= kindDigit
			case b <= 'Z':
				k |= kindUpper
			}
			switch b | 0x20 {
			case 'a', 'e', 'i', 'o', 'u':
				k |= kindVowel
			}
			if b|0x20 >= 'a' && b|0x20 <= 'f' {
				k |= kindHexLetter
			}
		}
		if isRunByte(b) {
			k |= kindRun
		}
		t[c] = k
	}
	return t
}()

func isASCIIPunct(c byte) bool {
	return c < utf8.RuneSelf && !isASCIIAlnum(c) && c != ' ' && c != '\t' && c != '\n' && c != '\r' && c != '\v' && c != '\f'
}

const (
	classLower = iota
	classUpper
	classDigit
)

func charClass(c byte) int {
	switch {
	case c >= 'a' && c <= 'z':
		return classLower
	case c >= 'A' && c <= 'Z':
		return classUpper
	default:
		return classDigit
	}
}

// wordCost charges one run of ASCII letters and digits.
func wordCost(w string) int {
	// Segment at case and digit changes; an upper-case letter followed by
	// lower case starts a segment ("TitleCase" is two segments).
	cost := 0
	start := 0
	for k := 1; k <= len(w); k++ {
		boundary := k == len(w)
		if !boundary {
			a, b := charClass(w[k-1]), charClass(w[k])
			boundary = a != b && !(a == classUpper && b == classLower)
		}
		if boundary {
			seg := k - start
			if charClass(w[start]) == classDigit {
				cost += (seg + 2) / 3
			} else {
				cost += (seg + 3) / 4
			}
			start = k
		}
	}
	return cost
}

func isASCIIAlnum(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}
