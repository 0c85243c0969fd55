// Package compose is the pure composition core of ctxkit: it turns frames
// offered by many context providers into one block of evidence for a
// prompt. It does no I/O and uses no clock and no randomness: every result
// is a function of its input set.
//
// Two entry points:
//
//   - Context is the determinism floor: the set rendered in canonical
//     FrameID order, each identity once, with score and token_cost never
//     rendered, so the same set is the same bytes whatever the arrival order
//     or the scores (provider prompt caches reward exactly that).
//   - ForPrompt is the full composer: Dedup, rank with a Strategy, pack
//     under a budget of canonical budget tokens charged on each frame's
//     rendered block (RenderedCost, fence included), place the included
//     frames (folded to the edges by default; Options.Placement chooses Canonical or
//     StableFirst, which keeps the previous turn's Layout so a provider
//     prompt cache can reuse the prompt's prefix, reported in
//     Result.Cache; Options.StickyMargin adds hysteresis so score jitter
//     does not swap the previous turn's frames out), and render a constant
//     Preamble, one fence per frame and a citation map. Its Audit has one Entry per offer: included
//     (verifiable or not) or excluded with a Reason (duplicate of a named
//     survivor, over budget with cost and remaining, or packing stopped).
//     Optional Options.Attestations (a host's attestation checks) annotate each entry with its attestation
//     state and never changes what is selected or where it goes.
//
// # Fences
//
// Each frame renders as
//
//	<frame provider="P" id="I" kind="K" cite="C">
//	CONTENT
//	</frame>
//
// byte for byte as the CGP reference composer does for ordinary content.
// Frame content is untrusted, so every fence-like token in it (a less-than,
// then any whitespace and slashes, then "frame" in any case) is broken by a
// visible backslash after the less-than; nothing is deleted. The matcher
// also sees tokens through Unicode look-alikes, invisible characters,
// NFKC variants, HTML character references and JSON or percent escapes, so
// the output holds exactly one opening and one closing fence per frame when
// read raw, after NFKC normalisation, after removing format (Cf) characters,
// after decoding HTML entities, and after all three. Attribute values are
// neutralised the same way and then escaped (& " < > and their NFKC forms as
// references, every line break as a space, other control characters as hex
// references). Rendering and escaping are linear in the input size.
//
// Composition is O(n log n) in the number of offers.
package compose
