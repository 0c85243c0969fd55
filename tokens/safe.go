package tokens

import "unicode/utf8"

// Safe is the default estimator for models without an offline tokenizer.
// It is designed never to under-count OpenAI's o200k_base and cl100k_base
// encodings on any class of text in the package's benchmark corpus while
// over-counting English prose by at most 1.6× (the figures are in
// BENCHMARKS.md and a test enforces both bounds).
//
// The text is scanned once, left to right, and every run is charged by
// what byte-pair encoders do with it:
//
//   - a run of ASCII letters and digits (a "word") costs ceil(letters/4)
//     per case-or-digit segment, digits ceil(n/3) (encoders split numbers
//     into groups of at most three digits); but a word of at least
//     [HighEntropyMin] characters that changes between lower case, upper
//     case and digits (upper to lower case excepted) at least once every
//     [HighEntropySwitch] characters
//     looks like a hash, UUID or base64 and costs 4 tokens per 5
//     characters (1.25 characters per token; measured encoders need 1.4 to
//     1.7 on such text);
//   - ASCII punctuation costs a token per character, except that one
//     punctuation character directly before a word rides with it;
//   - whitespace: a single space before a word or punctuation is free;
//     other runs cost a token per line break plus ceil(spaces/4);
//   - non-ASCII characters cost by UTF-8 length: 1.25 tokens for a 2-byte
//     character (Cyrillic, Arabic, accented Latin), 1.75 for a 3-byte one
//     (CJK), 4 for a 4-byte one (emoji: the byte-level worst case); an
//     invalid byte costs 1.
//
// Safe is an estimate: it can under-count text unlike any corpus class
// (for example long random letter strings without digits). Anchoring on
// the usage a provider reports (see package window) corrects the rest.
type Safe struct{}

// Parameters of [Safe]'s high-entropy class.
const (
	// HighEntropyMin is the shortest word Safe may classify as
	// high-entropy.
	HighEntropyMin = 8
	// HighEntropySwitch: a word is high-entropy when it switches between
	// lower case, upper case and digits at least once per this many
	// characters.
	HighEntropySwitch = 4
)

// Name returns "safe".
func (Safe) Name() string { return NameSafe }

// Count returns Safe's estimate for text.
func (Safe) Count(text string) int {
	// Charges are accumulated in quarters of a token.
	q := 0
	n := len(text)
	for i := 0; i < n; {
		c := text[i]
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
	// Count class switches, except upper to lower case, which starts an
	// ordinary capitalised segment.
	switches := 0
	for k := 1; k < len(w); k++ {
		a, b := charClass(w[k-1]), charClass(w[k])
		if a != b && !(a == classUpper && b == classLower) {
			switches++
		}
	}
	if len(w) >= HighEntropyMin && switches*HighEntropySwitch >= len(w) {
		return (len(w)*4 + 4) / 5
	}
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
