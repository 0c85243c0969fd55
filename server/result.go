package server

import (
	"encoding/json"

	"github.com/ctxkit/ctxkit/frame"
)

// ComposeResult is the answer of POST /v1/compose decoded: compose.Result's
// JSON encoding (prompt, citations in render order, and the audit), plus the
// offers skipped when the request asked for skip_invalid. The server writes
// compose.Result's own encoding; this type lets a Go client read it back.
type ComposeResult struct {
	Prompt    string     `json:"prompt"`
	Citations []Citation `json:"citations"`
	Audit     Audit      `json:"audit"`
	// Cache is present when the request named a placement, a previous
	// layout or a minimum prefix: where the prompt's stable prefix ends.
	Cache   *CacheReport `json:"cache,omitempty"`
	Skipped []Skipped    `json:"skipped,omitempty"`
}

// CacheReport splits the prompt into a stable prefix, byte-identical to
// the start of the previous turn's prompt when the previous layout was sent,
// and a volatile tail: put a provider cache breakpoint between them.
type CacheReport struct {
	Placement string `json:"placement"`
	// StablePrefixBytes is where the stable part ends, in UTF-8 bytes of
	// the prompt (not characters: slice the encoded prompt).
	StablePrefixBytes  int    `json:"stable_prefix_bytes"`
	StablePrefixTokens int    `json:"stable_prefix_tokens"`
	StablePrefixHash   string `json:"stable_prefix_hash"`
	StableFrames       int    `json:"stable_frames"`
	Relay              string `json:"relay,omitempty"`
	MinPrefixTokens    int    `json:"min_prefix_tokens"`
	Warning            string `json:"warning,omitempty"`
	// Layout is the state to send back as "previous" next turn.
	Layout json.RawMessage `json:"layout"`
}

// Stable is the prompt's stable prefix (all of it when there is no cache
// report, or the offset is out of range).
func (r *ComposeResult) Stable() string { return r.Prompt[:r.split()] }

// Volatile is the rest of the prompt after the stable prefix.
func (r *ComposeResult) Volatile() string { return r.Prompt[r.split():] }

func (r *ComposeResult) split() int {
	if r.Cache == nil || r.Cache.StablePrefixBytes < 0 || r.Cache.StablePrefixBytes > len(r.Prompt) {
		return len(r.Prompt)
	}
	return r.Cache.StablePrefixBytes
}

// Citation maps a rendered cite label to the frame and its provenance.
type Citation struct {
	Label      string             `json:"label"`
	Frame      frame.ID           `json:"frame"`
	Provenance []frame.Provenance `json:"provenance"`
}

// Audit accounts for every offered frame: one entry each.
type Audit struct {
	Budget     int          `json:"budget"`
	TokensUsed int          `json:"tokens_used"`
	Strategy   string       `json:"strategy"`
	Packer     string       `json:"packer"`
	Entries    []AuditEntry `json:"entries"`
}

// AuditEntry is one offered frame's fate: disposition "included" (with a
// verification, "verifiable" or "unverifiable") or "excluded" with a reason.
type AuditEntry struct {
	Frame        frame.ID        `json:"frame"`
	Disposition  string          `json:"disposition"`
	Verification string          `json:"verification,omitempty"`
	Reason       *ExcludeReason  `json:"reason,omitempty"`
	Attestation  json.RawMessage `json:"attestation"`
}

// ExcludeReason says why a frame was excluded: kind "duplicate" (Kept names
// the survivor), "over_budget" or "packing_stopped" (Cost and Remaining in
// budget tokens).
type ExcludeReason struct {
	Kind      string    `json:"kind"`
	Kept      *frame.ID `json:"kept,omitempty"`
	Cost      *int      `json:"cost,omitempty"`
	Remaining *int      `json:"remaining,omitempty"`
}
