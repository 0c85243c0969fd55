// Package tokens counts tokens behind one interface, [Counter].
//
// Two different units live here and are never mixed silently:
//
//   - "canonical" counts CGP budget tokens, ceil(bytes/4). It is an
//     accounting unit defined by the protocol, not a model's token count.
//   - Every other counter estimates or computes model tokens: the exact
//     byte-pair encoders "o200k_base" and "cl100k_base" (OpenAI's encodings,
//     vocabularies compiled into the binary, no network), the seed's
//     "conservative" rule (kept for comparison), and [Safe], the default
//     estimator for models whose tokenizer is not available offline.
//
// [ForModel] picks the counter for a model name: exact where the model's
// encoding is known (OpenAI families), [Safe] otherwise. [ByName] returns
// a counter by the name above.
//
// The package does no I/O and keeps no global mutable state; counters are
// safe for concurrent use.
package tokens

// Counter counts the tokens of a text. Implementations are safe for
// concurrent use and never panic, whatever the input bytes (invalid UTF-8
// included).
type Counter interface {
	// Count returns the number of tokens text costs, never negative.
	Count(text string) int
	// Name identifies the counting rule, e.g. "o200k_base" or "safe".
	Name() string
}

// Names of the counters in this package, as returned by Name.
const (
	nameCanonical    = "canonical"
	nameConservative = "conservative"
	nameSafe         = "safe"
	nameO200kBase    = "o200k_base"
	nameCl100kBase   = "cl100k_base"
)

// canonical counts CGP budget tokens: ceil(len(text)/4) over the UTF-8
// bytes. It agrees with the frame package's budget-token rule.
type canonical struct{}

// Count returns ceil(len(text)/4).
func (canonical) Count(text string) int { return canonicalBytes(len(text)) }

// Name returns "canonical".
func (canonical) Name() string { return nameCanonical }

// canonicalBytes is the CGP budget-token cost of n bytes: ceil(n/4).
// A negative n costs 0.
func canonicalBytes(n int) int {
	if n <= 0 {
		return 0
	}
	return n/4 + boolInt(n%4 != 0)
}

// conservative is the seed design's estimator, kept unchanged so results can
// be compared with it: every ASCII character costs 2/5 of a token (1 token
// per 2.5 characters) and every byte of a non-ASCII character costs a whole
// token, summed in fifths and rounded up once.
//
// The seed claims this never under-counts; it does, on high-entropy text
// (base64, UUIDs, hex) — see BENCHMARKS.md. Use [Safe] for budgeting.
type conservative struct{}

// Count applies the seed's rule to text. Bytes of invalid UTF-8 cost a
// whole token each, like any other non-ASCII byte.
func (conservative) Count(text string) int {
	fifths := 0
	for i := 0; i < len(text); i++ {
		if text[i] < 0x80 {
			fifths += 2
		} else {
			fifths += 5
		}
	}
	return fifths/5 + boolInt(fifths%5 != 0)
}

// Name returns "conservative".
func (conservative) Name() string { return nameConservative }

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
