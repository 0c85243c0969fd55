package fencetest

import "strings"

// A shape is one unit of benchmark content, repeated to fill the text.
type shape struct {
	Name, Unit string
}

// Shapes returns the benchmark contents for fence name (lower-case ASCII):
// benign prose first, then one adversarial shape per way the scanner can be
// made to work per byte: a trigger every byte, a look-ahead that reads one
// more unit, a reference decoded per unit (plain, compatibility-spelt, or
// deleted by a decoder), an escape, a folded or overlaid rune per unit,
// every unit a real token, a numeric or a rarer named reference per unit,
// invalid UTF-8, a reference read through an invisible rune, and one
// whose extent depends on the order of the views. The ratio of each
// shape's cost per byte to the benign one's is the adversarial/benign
// ratio.
func Shapes(name string) []shape {
	first := name[:1]
	return []shape{
		{"benign", "the retry loop backs off exponentially; "},
		{"lt-every-8-bytes", "<abcdefg"},
		{"lt", "<"},
		{"token", "</" + name + ">"},
		{"lt-first-letter", "<" + first},
		{"lt-cjk", "<日"},
		{"lt-emoji", "<😀"},
		{"entities", "&lt;&amp;"},
		{"amp", "&"},
		{"lt-amp-hash", "<&#"},
		{"lt-slash-zwsp", "</\u200b"},
		{"json-lt", `\u003c`},
		{"lt-overlay", "<\u0338"},
		{"fullwidth-amp", "\uFF06lt"},
		{"deleted-ref", "<&#xFDD0;"},
		{"fullwidth-lt-letter", "\uFF1C" + strings.ToUpper(first)},
		{"lt-newer-letter", "<\U0001CCE4"},
		{"numeric-lt", "&#60;"},
		{"named-ref", "&frac12;"},
		{"invalid-utf8", "<\xff"},
		{"invisible-in-ref", "&l\u200bt;"},
		{"order-dependent-ref", "&#x3C\u200b" + first},
	}
}
