package server

import (
	"encoding/json"

	"github.com/ctxkit/ctxkit/compose"
	"github.com/ctxkit/ctxkit/frame"
)

// ComposeResult is the answer of POST /v1/compose decoded: compose.Result's
// JSON encoding (prompt, citations in render order, and the audit), plus the
// offers skipped when the request asked for skip_invalid. The server writes
// compose.Result's own encoding; this type lets a Go client read it back.
type ComposeResult struct {
	// Prompt is the evidence preamble and one fence per included frame.
	Prompt string `json:"prompt"`
	// Citations map each rendered cite label to its frame, in render order.
	Citations []Citation `json:"citations"`
	// Audit has one entry per offered frame.
	Audit Audit `json:"audit"`
	// Cache is present when the request named a placement, a previous
	// layout or a minimum prefix: where the prompt's stable prefix ends.
	Cache *CacheReport `json:"cache,omitempty"`
	// Skipped lists the invalid offers left out (skip_invalid only).
	Skipped []Skipped `json:"skipped,omitempty"`
}

// CacheReport splits the prompt into a stable prefix, byte-identical to
// the start of the previous turn's prompt when the previous layout was sent,
// and a volatile tail: put a provider cache breakpoint between them.
type CacheReport struct {
	// Placement is the placement that ran.
	Placement string `json:"placement"`
	// StablePrefixBytes is where the stable part ends, in UTF-8 bytes of
	// the prompt (not characters: slice the encoded prompt).
	StablePrefixBytes int `json:"stable_prefix_bytes"`
	// StablePrefixTokens is the stable prefix in canonical budget tokens.
	StablePrefixTokens int `json:"stable_prefix_tokens"`
	// StablePrefixHash is "sha256:" and the hex digest of the stable prefix.
	StablePrefixHash string `json:"stable_prefix_hash"`
	// StableFrames is the number of frames in the stable prefix.
	StableFrames int `json:"stable_frames"`
	// Relay says why stable-first re-laid the block: "no_previous",
	// "invalid_layout" or "dropped"; empty when the whole previous layout
	// survived, and under the other placements.
	Relay string `json:"relay,omitempty"`
	// MinPrefixTokens is the minimum cacheable prefix the warning used.
	MinPrefixTokens int `json:"min_prefix_tokens"`
	// Warning says when the stable prefix is shorter than the minimum.
	Warning string `json:"warning,omitempty"`
	// Layout is the state to send back as "previous" next turn.
	Layout json.RawMessage `json:"layout"`
}

// Stable is the prompt's stable prefix (all of it when there is no cache
// report, or the offset is out of range).
func (r *ComposeResult) Stable() string { return r.Prompt[:r.split()] }

// Volatile is the rest of the prompt after the stable prefix.
func (r *ComposeResult) Volatile() string { return r.Prompt[r.split():] }

// Blocks splits the prompt into content blocks, the preamble and one block
// per frame, as compose.Result.Blocks does; the first 1 +
// Cache.StableFrames of them make up Stable when there is a cache report.
func (r *ComposeResult) Blocks() []string { return compose.SplitBlocks(r.Prompt) }

func (r *ComposeResult) split() int {
	if r.Cache == nil || r.Cache.StablePrefixBytes < 0 || r.Cache.StablePrefixBytes > len(r.Prompt) {
		return len(r.Prompt)
	}
	return r.Cache.StablePrefixBytes
}

// Citation maps a rendered cite label to the frame and its provenance.
type Citation struct {
	// Label is the cite attribute rendered in the fence.
	Label string `json:"label"`
	// Frame is the cited frame's identity.
	Frame frame.ID `json:"frame"`
	// Provenance is the frame's merged provenance chain.
	Provenance []frame.Provenance `json:"provenance"`
}

// Audit accounts for every offered frame: one entry each.
type Audit struct {
	// Budget is the budget in canonical budget tokens.
	Budget int `json:"budget"`
	// TokensUsed is the sum of the included frames' rendered costs, at most Budget.
	TokensUsed int `json:"tokens_used"`
	// Strategy names the ranking strategy that ran.
	Strategy string `json:"strategy"`
	// Packer names the packer that ran.
	Packer string `json:"packer"`
	// StickyMargin is the request's sticky margin; absent (0) when off.
	StickyMargin float64 `json:"sticky_margin,omitempty"`
	// Entries has one entry per offered frame, a total partition.
	Entries []AuditEntry `json:"entries"`
}

// AuditEntry is one offered frame's fate: disposition "included" (with a
// verification, "verifiable" or "unverifiable") or "excluded" with a reason.
type AuditEntry struct {
	// Frame is the offered frame's identity.
	Frame frame.ID `json:"frame"`
	// Disposition is "included" or "excluded".
	Disposition string `json:"disposition"`
	// Verification is "verifiable" or "unverifiable" for an included frame.
	Verification string `json:"verification,omitempty"`
	// Reason says why an excluded frame was left out.
	Reason *ExcludeReason `json:"reason,omitempty"`
	// Attestation is the trust ledger's state, {"state": ...}; it never changes selection.
	Attestation json.RawMessage `json:"attestation"`
	// Sticky is "held" when the sticky margin alone included the frame and
	// "displaced" when it alone excluded it; empty otherwise.
	Sticky string `json:"sticky,omitempty"`
}

// ExcludeReason says why a frame was excluded: kind "duplicate" (Kept names
// the survivor), "over_budget" or "packing_stopped" (Cost and Remaining in
// budget tokens), or "unresolved_reference" (a reference frame, which has
// no content to render).
type ExcludeReason struct {
	// Kind is "duplicate", "over_budget", "packing_stopped" or
	// "unresolved_reference".
	Kind string `json:"kind"`
	// Kept is the surviving duplicate (duplicate only).
	Kept *frame.ID `json:"kept,omitempty"`
	// Cost is the frame's rendered cost in budget tokens.
	Cost *int `json:"cost,omitempty"`
	// Remaining is the budget left when the packer reached the frame.
	Remaining *int `json:"remaining,omitempty"`
}
