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
	Skipped   []Skipped  `json:"skipped,omitempty"`
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
