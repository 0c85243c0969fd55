package compose

import (
	"bytes"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/ctxkit/ctxkit/frame"
	"github.com/ctxkit/ctxkit/internal/cgpjson"
	"github.com/ctxkit/ctxkit/internal/safetext"
)

// Disposition says whether an offered frame reached the prompt.
type Disposition uint8

// Dispositions. The zero value is not a disposition.
const (
	// Included: rendered into the prompt.
	Included Disposition = iota + 1
	// Excluded: left out, with a Reason.
	Excluded
)

var dispositionNames = [...]string{Included: "included", Excluded: "excluded"}

// String returns "included" or "excluded".
func (d Disposition) String() string {
	return enumName(d, Included, dispositionNames[:], "disposition")
}

// Verification says whether an included frame's content can be revalidated
// later: it carries a content_digest a provider can answer context/verify
// against.
type Verification uint8

// Verification states. The zero value is not a state.
const (
	// Verifiable: the frame carries a content_digest.
	Verifiable Verification = iota + 1
	// Unverifiable: no content_digest; trust on first use.
	Unverifiable
)

var verificationNames = [...]string{Verifiable: "verifiable", Unverifiable: "unverifiable"}

// String returns "verifiable" or "unverifiable".
func (v Verification) String() string {
	return enumName(v, Verifiable, verificationNames[:], "verification")
}

// ReasonKind names why a frame was excluded.
type ReasonKind uint8

// Exclusion reasons. The zero value is not a reason.
const (
	// Duplicate: the same evidence as another offer, which was kept
	// (Reason.Kept names the group's final survivor).
	Duplicate ReasonKind = iota + 1
	// OverBudget: its rendered cost (Reason.Cost) exceeded the budget still
	// remaining (Reason.Remaining) when the packer reached it.
	OverBudget
	// PackingStopped: the StopAtFirstMiss packer had already stopped at an
	// earlier frame that did not fit; Reason.Cost and Reason.Remaining are
	// this frame's cost and the budget left when packing stopped.
	PackingStopped
	// UnresolvedReference: a reference frame (representation "reference"),
	// whose content lives behind its content_ref. The composer has no
	// content to render for it, so it is left out and charged nothing,
	// rather than rendered as an empty fence and counted as evidence.
	UnresolvedReference
)

var reasonNames = [...]string{Duplicate: "duplicate", OverBudget: "over_budget",
	PackingStopped: "packing_stopped", UnresolvedReference: "unresolved_reference"}

// String returns "duplicate", "over_budget", "packing_stopped" or
// "unresolved_reference".
func (k ReasonKind) String() string {
	return enumName(k, Duplicate, reasonNames[:], "reason")
}

// Reason explains one exclusion.
type Reason struct {
	// Kind is why the frame was excluded; it says which of the other
	// members are set. The zero value is not a valid reason.
	Kind ReasonKind
	// Kept is the survivor's identity (Duplicate only).
	Kept frame.ID
	// Cost is the frame's rendered cost in budget tokens (OverBudget,
	// PackingStopped).
	Cost int
	// Remaining is the budget left when the decision was made (OverBudget,
	// PackingStopped).
	Remaining int
}

// Entry is one offered frame's line in the audit: which frame, what became
// of it, and what the host found about its attestation.
type Entry struct {
	// Frame is the offered frame's identity.
	Frame frame.ID
	// Disposition is Included or Excluded.
	Disposition Disposition
	// Verification is set for an included frame.
	Verification Verification
	// Sticky is set when Options.StickyMargin changed the frame's
	// disposition: StickyHeld on an included frame that the composition
	// without the margin excludes, StickyDisplaced on an excluded frame it
	// includes.
	Sticky StickyEffect
	// Reason is set for an excluded frame.
	Reason Reason
	// Attestation is the frame's attestation state from
	// Options.Attestations; nil means not checked. It never decides
	// inclusion or placement.
	Attestation Attestation
}

// Audit is the record of one composition: one Entry per offered frame (a
// total partition into included and excluded-with-reason), the budget, the
// rendered tokens actually used, and the names of the ranking strategy and
// packer that ran.
type Audit struct {
	// Entries holds one entry per offer: unresolved references first, then
	// duplicates (each in canonical order), then the dedup survivors in
	// ranking order.
	Entries []Entry
	// Budget is the budget the composition ran under, in CGP budget
	// tokens (ceil(bytes/4)); a negative budget is recorded as 0.
	Budget int
	// TokensUsed is the sum of the included frames' rendered costs, in
	// budget tokens. The preamble is not charged. It never exceeds Budget.
	TokensUsed int
	// Strategy is the ranking strategy's Name, "score-descending" by
	// default.
	Strategy string
	// Packer is the packer's String form, "first-fit" or
	// "stop-at-first-miss".
	Packer string
	// StickyMargin is the sticky margin the ranking ran under
	// (Options.StickyMargin when in force), 0 when off. Under a margin the
	// survivors' entries are in the order of the ranking with the margin
	// applied.
	StickyMargin float32
}

// Included returns the identities of the included frames, in audit order.
func (a *Audit) Included() []frame.ID {
	var out []frame.ID
	for _, e := range a.Entries {
		if e.Disposition == Included {
			out = append(out, e.Frame)
		}
	}
	return out
}

// Excluded returns the excluded entries, in audit order.
func (a *Audit) Excluded() []Entry {
	var out []Entry
	for _, e := range a.Entries {
		if e.Disposition == Excluded {
			out = append(out, e)
		}
	}
	return out
}

// Attested returns the entries whose attestation verified under a trusted
// key. NotChecked and every failure state are left out: "could not check"
// is never "good".
func (a *Audit) Attested() []Entry {
	var out []Entry
	for _, e := range a.Entries {
		if e.attestation().IsAttested() {
			out = append(out, e)
		}
	}
	return out
}

// ExplainsEveryDrop reports whether every entry is either included with a
// verification state or excluded with a known reason that carries its
// evidence (a Duplicate names a survivor).
func (a *Audit) ExplainsEveryDrop() bool {
	for _, e := range a.Entries {
		switch e.Disposition {
		case Included:
			if e.Verification != Verifiable && e.Verification != Unverifiable {
				return false
			}
		case Excluded:
			switch e.Reason.Kind {
			case Duplicate:
				if e.Reason.Kept == (frame.ID{}) {
					return false
				}
			case OverBudget, PackingStopped, UnresolvedReference:
			default:
				return false
			}
		default:
			return false
		}
		switch e.Sticky {
		case NotSticky:
		case StickyHeld:
			if e.Disposition != Included {
				return false
			}
		case StickyDisplaced:
			if e.Disposition != Excluded {
				return false
			}
		default:
			return false
		}
	}
	return true
}

// String renders the entry as one audit line, for example
//
//	included verifiable alpha/cheap@sha256:… attestation=not_checked
//	excluded duplicate alpha/dup_low@sha256:… kept=beta/dup_high@sha256:… attestation=not_checked
//	excluded over_budget beta/huge@sha256:… cost=118 remaining=16 attestation=not_checked
//
// An entry whose fate the sticky margin changed ends in " sticky=held" or
// " sticky=displaced".
func (e Entry) String() string {
	var b strings.Builder
	b.WriteString(e.Disposition.String())
	b.WriteByte(' ')
	switch e.Disposition {
	case Included:
		b.WriteString(e.Verification.String())
		b.WriteByte(' ')
		b.WriteString(quoteID(e.Frame))
	case Excluded:
		b.WriteString(e.Reason.Kind.String())
		b.WriteByte(' ')
		b.WriteString(quoteID(e.Frame))
		switch e.Reason.Kind {
		case Duplicate:
			b.WriteString(" kept=" + quoteID(e.Reason.Kept))
		case OverBudget, PackingStopped:
			b.WriteString(" cost=" + strconv.Itoa(e.Reason.Cost) + " remaining=" + strconv.Itoa(e.Reason.Remaining))
		}
	}
	b.WriteString(" attestation=" + e.attestation().String())
	if e.Sticky != NotSticky {
		b.WriteString(" sticky=" + e.Sticky.String())
	}
	return b.String()
}

// quoteID prints an identity on one line: bare when it reads as one token,
// Go-quoted otherwise (a provider chooses its frame ids).
func quoteID(id frame.ID) string { return safetext.Quote(id.String()) }

// WriteText writes the audit as text: one line per entry, then a summary
// line with the budget, the tokens used, the strategy and the packer (and
// the sticky margin and how many frames it held and displaced, when one
// was in force).
func (a *Audit) WriteText(w io.Writer) error {
	var b bytes.Buffer
	held, displaced := 0, 0
	for _, e := range a.Entries {
		b.WriteString(e.String())
		b.WriteByte('\n')
		switch e.Sticky {
		case StickyHeld:
			held++
		case StickyDisplaced:
			displaced++
		}
	}
	fmt.Fprintf(&b, "budget=%d tokens_used=%d strategy=%s packer=%s included=%d excluded=%d",
		a.Budget, a.TokensUsed, a.Strategy, a.Packer, len(a.Included()), len(a.Excluded()))
	if a.StickyMargin != 0 {
		fmt.Fprintf(&b, " sticky_margin=%s held=%d displaced=%d",
			strconv.FormatFloat(float64(a.StickyMargin), 'g', -1, 32), held, displaced)
	}
	b.WriteByte('\n')
	_, err := w.Write(b.Bytes())
	return err
}

// Citation maps the label rendered in a frame's cite attribute to the
// frame's identity and its (merged) provenance.
type Citation struct {
	// Label is the frame's cite attribute as rendered: its citation label,
	// or its title when the label is blank. It may be empty, and it is not
	// unique across frames.
	Label string
	// Frame is the cited frame's identity.
	Frame frame.ID
	// Provenance is the frame's provenance; for a dedup survivor, its own
	// links followed by the links of the duplicates it replaced that it
	// does not already carry. nil when there is none.
	Provenance []frame.Provenance
}

// Result is a composed prompt: the rendered text (preamble and fenced
// frames), the citation map in render order, and the audit.
type Result struct {
	// Prompt is the rendered prompt text: Preamble, then one fenced block
	// per included frame in render order. It is Preamble alone when no
	// frame was included.
	Prompt string
	// Citations holds one citation per included frame, in render order.
	Citations []Citation
	// Audit records what became of every offered frame, and why.
	Audit Audit
	// Cache reports the prompt's split into a stable prefix and a volatile
	// tail (see Stable and Volatile).
	Cache CacheReport
	// Layout is the layout state to pass as Options.Previous on the next
	// turn.
	Layout *Layout

	// reported: the caller asked for a placement, a previous layout, cache
	// options or a sticky margin, so the JSON encoding carries the "cache"
	// member.
	reported bool
}

// JSON shapes. Member order is fixed; enumerations are spelled as their
// String forms.

type entryJSON struct {
	Frame        frame.ID    `json:"frame"`
	Disposition  string      `json:"disposition"`
	Verification string      `json:"verification,omitempty"`
	Reason       *reasonJSON `json:"reason,omitempty"`
	Attestation  Attestation `json:"attestation"`
	Sticky       string      `json:"sticky,omitempty"`
}

type reasonJSON struct {
	Kind      string    `json:"kind"`
	Kept      *frame.ID `json:"kept,omitempty"`
	Cost      *int      `json:"cost,omitempty"`
	Remaining *int      `json:"remaining,omitempty"`
}

type citationJSON struct {
	Label      string             `json:"label"`
	Frame      frame.ID           `json:"frame"`
	Provenance []frame.Provenance `json:"provenance"`
}

type auditJSON struct {
	Budget       int         `json:"budget"`
	TokensUsed   int         `json:"tokens_used"`
	Strategy     string      `json:"strategy"`
	Packer       string      `json:"packer"`
	StickyMargin float32     `json:"sticky_margin,omitempty"`
	Entries      []entryJSON `json:"entries"`
}

type resultJSON struct {
	Prompt    string         `json:"prompt"`
	Citations []citationJSON `json:"citations"`
	Audit     auditJSON      `json:"audit"`
	Cache     *cacheJSON     `json:"cache,omitempty"`
}

// attestation is the entry's attestation state, not checked when unset.
func (e Entry) attestation() Attestation {
	if e.Attestation == nil {
		return notChecked{}
	}
	return e.Attestation
}

func (e Entry) toJSON() entryJSON {
	j := entryJSON{Frame: e.Frame, Disposition: e.Disposition.String(), Attestation: e.attestation(),
		Sticky: e.Sticky.String()}
	switch e.Disposition {
	case Included:
		j.Verification = e.Verification.String()
	case Excluded:
		r := &reasonJSON{Kind: e.Reason.Kind.String()}
		switch e.Reason.Kind {
		case Duplicate:
			kept := e.Reason.Kept
			r.Kept = &kept
		case OverBudget, PackingStopped:
			cost, rem := e.Reason.Cost, e.Reason.Remaining
			r.Cost, r.Remaining = &cost, &rem
		}
		j.Reason = r
	}
	return j
}

func (a Audit) toJSON() auditJSON {
	j := auditJSON{Budget: a.Budget, TokensUsed: a.TokensUsed, Strategy: a.Strategy, Packer: a.Packer,
		StickyMargin: a.StickyMargin, Entries: make([]entryJSON, len(a.Entries))}
	for i, e := range a.Entries {
		j.Entries[i] = e.toJSON()
	}
	return j
}

// MarshalJSON encodes the entry as
// {"frame":ID,"disposition":"included","verification":"verifiable","attestation":STATE}
// or {"frame":ID,"disposition":"excluded","reason":{"kind":"over_budget","cost":N,"remaining":N},"attestation":STATE},
// with "sticky":"held" or "sticky":"displaced" last when the sticky margin
// changed the frame's fate.
func (e Entry) MarshalJSON() ([]byte, error) { return cgpjson.MarshalNoEscape(e.toJSON()) }

// MarshalJSON encodes the audit as
// {"budget":N,"tokens_used":N,"strategy":S,"packer":S,"entries":[...]},
// with "sticky_margin":M before "entries" when a sticky margin was in force.
func (a Audit) MarshalJSON() ([]byte, error) { return cgpjson.MarshalNoEscape(a.toJSON()) }

// MarshalJSON encodes the whole result as {"prompt":S,"citations":[...],"audit":{...}}
// with nothing HTML-escaped; the encoding is stable (fixed member order, no
// maps). When the composition was asked for a placement, a previous
// layout, cache options or a sticky margin, a "cache" member follows:
//
//	"cache":{"placement":S,"stable_prefix_bytes":N,"stable_prefix_tokens":N,
//	  "stable_prefix_hash":"sha256:…","stable_frames":N,
//	  "relay":S,"min_prefix_tokens":N,"warning":S,"layout":LAYOUT}
//
// (relay and warning only when set; the prompt splits into its stable and
// volatile parts at stable_prefix_bytes, counted in UTF-8 bytes). A default
// composition's encoding is unchanged.
func (r Result) MarshalJSON() ([]byte, error) {
	j := resultJSON{Prompt: r.Prompt, Citations: make([]citationJSON, len(r.Citations)), Audit: r.Audit.toJSON()}
	if r.reported {
		j.Cache = r.cacheJSON()
	}
	for i, c := range r.Citations {
		p := c.Provenance
		if p == nil {
			p = []frame.Provenance{}
		}
		j.Citations[i] = citationJSON{Label: c.Label, Frame: c.Frame, Provenance: p}
	}
	return cgpjson.MarshalNoEscape(j)
}

// WriteJSON writes the result's JSON encoding and a newline to w.
func (r *Result) WriteJSON(w io.Writer) error {
	b, err := r.MarshalJSON()
	if err != nil {
		return fmt.Errorf("compose: encode result: %w", err)
	}
	_, err = w.Write(append(b, '\n'))
	return err
}
