package host

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/ctxkit/ctxkit/compose"
	"github.com/ctxkit/ctxkit/frame"
	"github.com/ctxkit/ctxkit/rule"
	"github.com/ctxkit/ctxkit/wire"
)

// Status is the kind of a fan-out leg's outcome. It is a closed set; String
// gives the stable spelling used in JSON.
type Status int

// The leg outcomes.
const (
	StatusFrames               Status = iota // reply accepted (some frames may be excluded, see Outcome.Excluded)
	StatusConsentRequired                    // legacy egress provider without a consent record; not queried
	StatusScopeReceiptRequired               // off-machine scopes without receipts; not queried
	StatusTimeout                            // no reply in time
	StatusCrashed                            // process exited, pipe closed, connection lost
	StatusVersionMismatch                    // handshake in another protocol family
	StatusBudgetLie                          // B2: Σ declared token_cost > max_tokens; leg dropped
	StatusFrameFlood                         // B4: more frames than max_frames; leg dropped
	StatusInvalidFrames                      // DropLeg policy: a frame broke a validity or B3 rule
	StatusKindViolation                      // DropLeg policy: a frame of an unrequested kind (Q1)
	StatusFailed                             // any other failure (handshake rule, provider error, garbage)
	StatusKindsNotServed                     // declares none of the query's kinds; not queried
	StatusShareTooSmall                      // its share of the budget cannot hold one frame's fence; not queried
	StatusNotStarted                         // the provider's process could not be started (see Host.AddUnstarted)
)

var statusNames = [...]string{
	"frames", "consent_required", "scope_receipt_required", "timeout", "crashed",
	"version_mismatch", "budget_lie", "frame_flood", "invalid_frames", "kind_violation", "failed",
	"kinds_not_served", "share_too_small", "not_started",
}

// String returns the status's stable spelling.
func (s Status) String() string { return spell(statusNames[:], int(s), "status") }

// MarshalText spells the status for JSON.
func (s Status) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// UnmarshalText parses a spelling produced by MarshalText.
func (s *Status) UnmarshalText(b []byte) error {
	return unspell(s, statusNames[:], b, "leg status")
}

// Skipped reports whether the host did not query the provider because the
// query gave it nothing to do (none of its kinds asked for, or a share too
// small for one frame). A skipped leg is not a failure of the provider.
func (s Status) Skipped() bool { return s == StatusKindsNotServed || s == StatusShareTooSmall }

// ExcludedFrame is one frame the audit refused, with the rule it broke.
type ExcludedFrame struct {
	// Frame is the refused frame's identity.
	Frame frame.ID `json:"frame"`
	// Rule is the anchor of the broken rule (F1, B3, Q1 ...).
	Rule rule.Rule `json:"rule"`
	// Detail says what was wrong with the frame.
	Detail string `json:"detail"`
}

// spell is the stable spelling of the i-th value of an enumeration, or
// kind(i) for a value out of its range.
func spell(names []string, i int, kind string) string {
	if i >= 0 && i < len(names) {
		return names[i]
	}
	return fmt.Sprintf("%s(%d)", kind, i)
}

// unspell sets *dst to the index of spelling b in names; a spelling not
// there is an error naming kind, and *dst is left as it was.
func unspell[T ~int](dst *T, names []string, b []byte, kind string) error {
	for i, n := range names {
		if n == string(b) {
			*dst = T(i)
			return nil
		}
	}
	return fmt.Errorf("host: unknown %s %q", kind, b)
}

// Outcome is one provider's leg of a fan-out.
type Outcome struct {
	// Provider is the host's id for the leg's provider.
	Provider string `json:"provider"`
	// ProviderName is provider.name from the handshake ("" if none).
	ProviderName string `json:"provider_name,omitempty"`
	// Status says how the leg ended; only StatusFrames contributes frames.
	Status Status `json:"status"`
	// Frames are the accepted frames (only when Status is StatusFrames).
	Frames []frame.Frame `json:"frames,omitempty"`
	// Result is the provider's reply as received (nil when none arrived);
	// attestation checks read it.
	Result *wire.Result `json:"-"`
	// Excluded lists each frame the audit refused and why: under
	// ExcludeFrames the leg keeps its other frames; under DropLeg (and for
	// B2/B4, where frame ids are listed too) the whole leg is dropped.
	Excluded []ExcludedFrame `json:"excluded,omitempty"`
	// Query is the query the leg sent (or would have sent, for a skipped
	// leg). In a budgeted fan-out its max_tokens is the leg's share less
	// the fences reserved for max_frames frames (see Share).
	Query frame.Query `json:"query"`
	// Share is the leg's part of the global budget of a budgeted fan-out,
	// in rendered budget tokens (fences included); 0 when unbudgeted.
	Share uint32 `json:"share,omitempty"`
	// ClaimedTokens is Σ declared token_cost of the reply (B2 evidence).
	ClaimedTokens uint64 `json:"claimed_tokens,omitempty"`
	// ReturnedFrames is len(frames) of the reply (B4 evidence).
	ReturnedFrames int `json:"returned_frames,omitempty"`
	// Missing names the scopes lacking receipts (StatusScopeReceiptRequired).
	Missing []frame.EgressScope `json:"missing_scopes,omitempty"`
	// Declared lists the kinds the provider declared (StatusKindsNotServed).
	Declared []frame.Kind `json:"declared_kinds,omitempty"`
	// Err is the failure (nil for StatusFrames and for audit drops).
	Err error `json:"-"`
	// Elapsed is the leg's wall-clock time, encoded in nanoseconds.
	Elapsed time.Duration `json:"elapsed_ns"`
}

// Error returns the failure message, "" when none (for JSON reports).
func (o *Outcome) Error() string {
	switch {
	case o.Err != nil:
		return o.Err.Error()
	case o.Status == StatusBudgetLie:
		return fmt.Sprintf("%s: provider declared %d tokens against max_tokens %d; all %d frames dropped", rule.B2, o.ClaimedTokens, o.Query.MaxTokens, o.ReturnedFrames)
	case o.Status == StatusFrameFlood:
		return fmt.Sprintf("%s: provider returned %d frames against max_frames %d; all dropped", rule.B4, o.ReturnedFrames, o.Query.MaxFrames)
	case o.Status == StatusInvalidFrames || o.Status == StatusKindViolation:
		return fmt.Sprintf("%d frame(s) broke a rule under the drop-leg policy; all %d dropped", o.RefusedFrames(), o.ReturnedFrames)
	case o.Status == StatusKindsNotServed:
		return fmt.Sprintf("not queried: the query asks for kinds %s, the provider declares %s", kindList(o.Query.Kinds), kindList(o.Declared))
	case o.Status == StatusShareTooSmall:
		return fmt.Sprintf("not queried: a share of %d budget tokens cannot hold one frame, whose fence the host reserves at %d", o.Share, FrameChrome(o.Provider))
	}
	return ""
}

// RefusedFrames counts the distinct frames the audit refused; a frame
// breaking several rules has one entry in Excluded per rule but is one
// frame.
func (o *Outcome) RefusedFrames() int { return countFrames(o.Excluded) }

// kindList spells kinds for a message: [doc snippet], or "none".
func kindList(ks []frame.Kind) string {
	if len(ks) == 0 {
		return "none"
	}
	return fmt.Sprint(ks)
}

// MarshalJSON encodes the outcome with its failure message as "error".
func (o Outcome) MarshalJSON() ([]byte, error) {
	type plain Outcome
	return json.Marshal(struct {
		plain
		Error string `json:"error,omitempty"`
	}{plain(o), o.Error()})
}

// UnmarshalJSON decodes what MarshalJSON writes (a report read back from
// a ctxkit service): the failure message becomes Err, so Error returns it.
func (o *Outcome) UnmarshalJSON(b []byte) error {
	type plain Outcome
	var j struct {
		plain
		Error string `json:"error"`
	}
	if err := json.Unmarshal(b, &j); err != nil {
		return fmt.Errorf("host: decode outcome: %w", err)
	}
	*o = Outcome(j.plain)
	if j.Error != "" {
		o.Err = errors.New(j.Error)
	}
	return nil
}

// statusOf maps a leg error to its outcome status.
func statusOf(err error) Status {
	var ce *ConsentError
	var vm *VersionMismatchError
	switch {
	case errors.As(err, &ce):
		if len(ce.Missing) > 0 {
			return StatusScopeReceiptRequired
		}
		return StatusConsentRequired
	case errors.As(err, &vm):
		return StatusVersionMismatch
	case errors.Is(err, ErrNotStarted):
		return StatusNotStarted
	case errors.Is(err, ErrTimeout):
		return StatusTimeout
	case errors.Is(err, ErrProviderCrashed), errors.Is(err, ErrClosed):
		return StatusCrashed
	}
	return StatusFailed
}

// QueryAll sends q to every registered provider whose capabilities match its
// kinds, concurrently, and audits each reply. Outcomes are in registration
// order; one leg's failure never affects another's.
func (h *Host) QueryAll(ctx context.Context, q *frame.Query) *FanOut {
	return h.fanOut(ctx, q, nil)
}

// QueryAllBudgeted is QueryAll with a global budget: the capability-matching
// providers share it equally (compose.BudgetSplit semantics: the first
// budget%n providers get one token more), each leg's max_tokens being its
// share. The per-leg audit checks each reply against its own share.
func (h *Host) QueryAllBudgeted(ctx context.Context, q *frame.Query, globalBudget uint32) *FanOut {
	return h.fanOut(ctx, q, &globalBudget)
}

func (h *Host) fanOut(ctx context.Context, q *frame.Query, global *uint32) *FanOut {
	start := time.Now()
	es := h.entries()
	fo := &FanOut{Query: *q, Policy: h.opts.Policy, host: h}
	if global != nil {
		fo.Budget = *global
		fo.Budgeted = true
		fo.Query.MaxTokens = *global
	}
	// Phase 1: handshakes (concurrent; each provider's is cached). A leg
	// that fails here reports the time its handshake took in this fan-out.
	var wg sync.WaitGroup
	handTime := make([]time.Duration, len(es))
	handErr := make([]error, len(es))
	for i, e := range es {
		wg.Add(1)
		go func() {
			defer wg.Done()
			t0 := time.Now()
			handErr[i] = h.handshake(ctx, e)
			handTime[i] = time.Since(t0)
		}()
	}
	wg.Wait()
	// Phase 2: which providers take part, and with what share.
	type leg struct {
		e     *entry
		q     frame.Query
		share uint32
		out   *Outcome
	}
	var legs []leg
	var matching []int
	for i, e := range es {
		if err := handErr[i]; err != nil {
			// A consent refusal before connecting (C4) is a handshake-phase
			// outcome too: the provider was never reached.
			o := &Outcome{Provider: e.id, Status: statusOf(err), Err: err, Query: *q, Elapsed: handTime[i]}
			var ce *ConsentError
			if errors.As(err, &ce) {
				o.Missing = ce.Missing
			}
			legs = append(legs, leg{e: e, q: *q, out: o})
			continue
		}
		if !e.ack.Capabilities.ServesAny(q.Kinds) {
			legs = append(legs, leg{e: e, q: *q, out: &Outcome{Provider: e.id, ProviderName: e.info.Name,
				Status: StatusKindsNotServed, Query: *q, Declared: e.ack.Capabilities.Query.Kinds}})
			continue
		}
		matching = append(matching, len(legs))
		legs = append(legs, leg{e: e, q: *q})
	}
	if global != nil {
		shares := compose.BudgetSplit(int(*global), len(matching))
		for i, li := range matching {
			l := &legs[li]
			share := uint32(shares[i])
			lq, ok := legShare(q, l.e.id, share)
			l.q, l.share = lq, share
			if !ok {
				l.out = &Outcome{Provider: l.e.id, ProviderName: l.e.info.Name, Status: StatusShareTooSmall, Query: lq, Share: share}
			}
		}
	}
	// Phase 3: the legs.
	for i := range legs {
		if legs[i].out != nil {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			legs[i].out = h.leg(ctx, legs[i].e, &legs[i].q)
			legs[i].out.Share = legs[i].share
		}()
	}
	wg.Wait()
	fo.Outcomes = make([]Outcome, len(legs))
	for i, l := range legs {
		fo.Outcomes[i] = *l.out
	}
	fo.Elapsed = time.Since(start)
	return fo
}

// leg runs one provider's query: consent gate, query under the timeout, then
// the audit.
func (h *Host) leg(ctx context.Context, e *entry, q *frame.Query) *Outcome {
	start := time.Now()
	out := &Outcome{Provider: e.id, ProviderName: e.info.Name, Query: *q}
	defer func() { out.Elapsed = time.Since(start) }()
	if err := h.gate(e); err != nil {
		out.Status, out.Err = statusOf(err), err
		var ce *ConsentError
		if errors.As(err, &ce) {
			out.Missing = ce.Missing
		}
		return out
	}
	h.tailor(e, q)
	out.Query = *q
	res, err := h.query(ctx, e, q)
	if err != nil {
		out.Status, out.Err = statusOf(err), err
		return out
	}
	out.Result = res
	h.audit(e.id, q, res, out)
	return out
}

// tailor adapts a leg's query to its provider: the embedding is removed
// unless the provider declared exactly the host's fingerprint (E1), and
// representation preferences the provider did not advertise are dropped (P5;
// none left means the default, full).
func (h *Host) tailor(e *entry, q *frame.Query) {
	caps := &e.ack.Capabilities
	if len(q.Embedding) > 0 && (h.opts.EmbeddingsFingerprint == "" || caps.EmbeddingsFingerprint != h.opts.EmbeddingsFingerprint) {
		q.Embedding = nil
	}
	if len(q.RepresentationPreferences) > 0 {
		var keep []frame.Representation
		for _, r := range q.RepresentationPreferences {
			if caps.Supports(r) {
				keep = append(keep, r)
			}
		}
		q.RepresentationPreferences = keep
	}
}

// audit applies the per-leg rules to a reply, in order: B2 (declared Σ
// token_cost ≤ max_tokens) and B4 (len(frames) ≤ max_frames) drop the whole
// leg; then every frame is checked against Q1 (requested kinds), the frame
// validity rules and B3 (declared cost equals the canonical cost), and the
// policy decides between excluding the frame and dropping the leg.
func (h *Host) audit(provider string, q *frame.Query, res *wire.Result, out *Outcome) {
	out.ReturnedFrames = len(res.Frames)
	var claimed uint64
	for i := range res.Frames {
		claimed += uint64(res.Frames[i].TokenCost)
	}
	out.ClaimedTokens = claimed
	listAll := func(r rule.Rule, detail string) {
		for i := range res.Frames {
			out.Excluded = append(out.Excluded, ExcludedFrame{Frame: res.Frames[i].Identity(provider), Rule: r, Detail: detail})
		}
	}
	if claimed > uint64(q.MaxTokens) {
		out.Status = StatusBudgetLie
		listAll(rule.B2, fmt.Sprintf("leg declared %d tokens, max_tokens %d", claimed, q.MaxTokens))
		return
	}
	if uint64(len(res.Frames)) > uint64(q.MaxFrames) {
		out.Status = StatusFrameFlood
		listAll(rule.B4, fmt.Sprintf("leg returned %d frames, max_frames %d", len(res.Frames), q.MaxFrames))
		return
	}
	var kept []frame.Frame
	kindViolation := false
	for i := range res.Frames {
		f := &res.Frames[i]
		id := f.Identity(provider)
		var bad []ExcludedFrame
		if !q.WantsKind(f.Kind) {
			kindViolation = true
			bad = append(bad, ExcludedFrame{Frame: id, Rule: rule.Q1, Detail: fmt.Sprintf("kind %q was not requested", f.Kind)})
		}
		for _, v := range frameViolations(f) {
			bad = append(bad, ExcludedFrame{Frame: id, Rule: v.Rule, Detail: v.Error()})
		}
		if len(bad) > 0 {
			out.Excluded = append(out.Excluded, bad...)
			continue
		}
		kept = append(kept, *f)
	}
	if len(out.Excluded) > 0 && h.opts.Policy == DropLeg {
		out.Status = StatusInvalidFrames
		if kindViolation {
			out.Status = StatusKindViolation
		}
		return
	}
	out.Status = StatusFrames
	out.Frames = kept
}
