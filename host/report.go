package host

import (
	"fmt"
	"time"

	"github.com/ctxkit/ctxkit/compose"
	"github.com/ctxkit/ctxkit/frame"
	"github.com/ctxkit/ctxkit/trust"
)

// FanOut is the result of QueryAll or QueryAllBudgeted: one Outcome per leg
// in registration order, plus what composition and accounting need.
type FanOut struct {
	// Query is the template query; for a budgeted fan-out its MaxTokens is
	// the global budget.
	Query frame.Query `json:"query"`
	// Budgeted is true for QueryAllBudgeted, with Budget the global budget.
	Budgeted bool `json:"budgeted"`
	// Budget is the global budget in budget tokens when Budgeted, else 0
	// (omitted).
	Budget uint32 `json:"budget,omitempty"`
	// Policy is the per-frame audit policy the legs were audited under.
	Policy AuditPolicy `json:"policy"`
	// Outcomes holds one outcome per leg, in registration order.
	Outcomes []Outcome `json:"outcomes"`
	// Elapsed is the whole fan-out's wall-clock time, encoded in
	// nanoseconds.
	Elapsed time.Duration `json:"elapsed_ns"`
	// ComposeElapsed is how long Compose took over the accepted frames,
	// encoded in nanoseconds; zero (omitted) until Compose has run. The
	// fan-out's own Elapsed does not include it.
	ComposeElapsed time.Duration `json:"compose_elapsed_ns,omitempty"`

	host *Host
}

// Accepted returns every accepted frame as a composer offer, legs in
// registration order, frames in reply order; each points at its frame
// inside its leg's outcome.
func (f *FanOut) Accepted() []compose.Offer {
	var out []compose.Offer
	for i := range f.Outcomes {
		o := &f.Outcomes[i]
		if o.Status != StatusFrames {
			continue
		}
		for j := range o.Frames {
			out = append(out, compose.Offer{Provider: o.Provider, Frame: &o.Frames[j]})
		}
	}
	return out
}

// ledger checks the attestations each accepted leg carried against the
// host's trust store (Options.Trust; an empty store when nil) and returns the
// resulting ledger, keyed by FrameID with the host's provider ids. The
// commitment is recomputed with the provider's declared name. The ledger
// only annotates: it never changes which frames are accepted.
func (f *FanOut) ledger() *trust.Ledger {
	l := trust.NewLedger()
	store := trust.NewStore()
	if f.host != nil && f.host.opts.Trust != nil {
		store = f.host.opts.Trust
	}
	for i := range f.Outcomes {
		o := &f.Outcomes[i]
		if o.Status != StatusFrames || o.Result == nil {
			continue
		}
		l.AddResult(store, o.Provider, o.ProviderName, o.Result)
	}
	return l
}

// Compose composes the accepted frames under budget (canonical budget
// tokens) with compose.ForPrompt, passing the fan-out's attestation ledger
// unless opts already carries attestations.
func (f *FanOut) Compose(budget int, opts *compose.Options) *compose.Result {
	var o compose.Options
	if opts != nil {
		o = *opts
	}
	if o.Attestations == nil {
		o.Attestations = ledgerStates{f.ledger()}
	}
	start := time.Now()
	res := compose.ForPrompt(f.Accepted(), budget, &o)
	f.ComposeElapsed = time.Since(start)
	return res
}

// ledgerStates gives the composer a ledger's attestation states.
type ledgerStates struct{ l *trust.Ledger }

func (s ledgerStates) Attestation(id frame.ID) compose.Attestation { return s.l.State(id) }

// Failures returns the legs that contributed nothing because of an error or
// an audit drop: everything but StatusFrames and the skipped legs (see
// Status.Skipped).
func (f *FanOut) Failures() []Outcome {
	var out []Outcome
	for _, o := range f.Outcomes {
		if o.Status != StatusFrames && !o.Status.Skipped() {
			out = append(out, o)
		}
	}
	return out
}

// withStatus returns the legs with status s.
func (f *FanOut) withStatus(s Status) []Outcome {
	var out []Outcome
	for _, o := range f.Outcomes {
		if o.Status == s {
			out = append(out, o)
		}
	}
	return out
}

// budgetLiars returns the legs dropped under B2.
func (f *FanOut) budgetLiars() []Outcome { return f.withStatus(StatusBudgetLie) }

// frameFloods returns the legs dropped under B4.
func (f *FanOut) frameFloods() []Outcome { return f.withStatus(StatusFrameFlood) }

// Excluded returns every frame the audit refused, across legs.
func (f *FanOut) Excluded() []ExcludedFrame {
	var out []ExcludedFrame
	for _, o := range f.Outcomes {
		out = append(out, o.Excluded...)
	}
	return out
}

// ServedFrame is one frame billed in a usage report.
type ServedFrame struct {
	// Frame is the billed frame's identity.
	Frame frame.ID `json:"frame"`
	// TokenCost is the frame's declared token_cost, in budget tokens.
	TokenCost uint32 `json:"token_cost"`
}

// ProviderUsage is one provider's line of a usage report.
type ProviderUsage struct {
	// ProviderID is the host's id for the provider.
	ProviderID string `json:"provider_id"`
	// FramesServed counts the provider's accepted frames; it equals
	// len(ServedFrames).
	FramesServed uint32 `json:"frames_served"`
	// FramesRejected counts the provider's frames the audit refused, or
	// every frame of its reply when the leg contributed nothing.
	FramesRejected uint32 `json:"frames_rejected"`
	// TokenCost is the sum of the served frames' token costs, in budget
	// tokens.
	TokenCost uint64 `json:"token_cost"`
	// ServedFrames lists each served frame with its cost; nil (omitted)
	// when none was served.
	ServedFrames []ServedFrame `json:"served_frames,omitempty"`
}

// UsageReport accounts for every token a fan-out served (UR1).
type UsageReport struct {
	// BudgetRequested is the query's max_tokens, or the global budget for a
	// budgeted fan-out, in budget tokens.
	BudgetRequested uint32 `json:"budget_requested"`
	// BudgetConsumed is the sum of every provider's TokenCost, in budget
	// tokens (rule UR1).
	BudgetConsumed uint64 `json:"budget_consumed"`
	// AsOf is when the report was made, a protocol timestamp recorded as
	// given.
	AsOf string `json:"as_of"`
	// Providers holds one line per leg, in registration order; nil
	// (omitted) when there were no legs.
	Providers []ProviderUsage `json:"providers,omitempty"`
}

// UsageReport builds the UR1 report: one line per leg; accepted frames are
// served (billed at their declared cost), audit-refused frames are rejected;
// budget_consumed is Σ served token_cost and budget_requested the query's
// max_tokens (the global budget for a budgeted fan-out). asOf is recorded
// as given (a protocol timestamp).
func (f *FanOut) UsageReport(asOf string) UsageReport {
	r := UsageReport{BudgetRequested: f.Query.MaxTokens, AsOf: asOf}
	for _, o := range f.Outcomes {
		u := ProviderUsage{ProviderID: o.Provider}
		if o.Status == StatusFrames {
			for i := range o.Frames {
				fr := &o.Frames[i]
				u.ServedFrames = append(u.ServedFrames, ServedFrame{Frame: fr.Identity(o.Provider), TokenCost: fr.TokenCost})
				u.TokenCost += uint64(fr.TokenCost)
			}
			u.FramesServed = uint32(len(o.Frames))
			u.FramesRejected = uint32(countFrames(o.Excluded))
		} else if o.Result != nil {
			u.FramesRejected = uint32(len(o.Result.Frames))
		}
		r.BudgetConsumed += u.TokenCost
		r.Providers = append(r.Providers, u)
	}
	return r
}

// countFrames counts distinct frames in an exclusion list (one frame may
// break several rules).
func countFrames(ex []ExcludedFrame) int {
	seen := make(map[frame.ID]bool, len(ex))
	for _, e := range ex {
		seen[e.Frame] = true
	}
	return len(seen)
}

// Check verifies the report's internal consistency: budget_consumed equals
// Σ provider token_cost, and each provider's frames_served and token_cost
// equal the count and Σ cost of its served_frames.
func (r *UsageReport) Check() error {
	var sum uint64
	for _, p := range r.Providers {
		var ps uint64
		for _, s := range p.ServedFrames {
			ps += uint64(s.TokenCost)
			if s.Frame.Provider != p.ProviderID {
				return fmt.Errorf("host: usage report: provider %q lists frame %s of another provider", p.ProviderID, s.Frame)
			}
		}
		if int(p.FramesServed) != len(p.ServedFrames) {
			return fmt.Errorf("host: usage report: provider %q frames_served %d but %d served_frames", p.ProviderID, p.FramesServed, len(p.ServedFrames))
		}
		if ps != p.TokenCost {
			return fmt.Errorf("host: usage report: provider %q token_cost %d but served frames sum to %d", p.ProviderID, p.TokenCost, ps)
		}
		sum += p.TokenCost
	}
	if sum != r.BudgetConsumed {
		return fmt.Errorf("host: usage report: budget_consumed %d but providers sum to %d", r.BudgetConsumed, sum)
	}
	return nil
}

// withinBudget reports whether budget_consumed ≤ budget_requested.
func (r *UsageReport) withinBudget() bool { return r.BudgetConsumed <= uint64(r.BudgetRequested) }

// contextUse is one frame's attribution (A1–A2): whether the composer
// selected it, whether it was rendered into the prompt, and whether the
// model's output visibly cited it. The handle is the FrameID (A1).
type contextUse struct {
	// Frame is the frame's identity, the attribution handle (rule A1).
	Frame frame.ID `json:"frame"`
	// Selected is true when the composer chose the frame; false (omitted)
	// otherwise.
	Selected bool `json:"selected,omitempty"`
	// Rendered is true when the frame was rendered into the prompt; it
	// implies Selected (rule A3). False is omitted.
	Rendered bool `json:"rendered,omitempty"`
	// Cited is true when the model's output visibly cited the frame; it
	// implies Rendered (rule A3). False is omitted.
	Cited bool `json:"cited,omitempty"`
}

// attributionReport pairs the uses of a turn's frames with the usage report
// that billed them (A3).
type attributionReport struct {
	// Uses holds one attribution per frame of the turn.
	Uses []contextUse `json:"uses"`
	// Usage is the usage report that billed the selected frames.
	Usage UsageReport `json:"usage"`
}

// Check verifies A3: cited ⇒ rendered ⇒ selected for every use, and every
// selected frame is billed in the paired usage report. It returns the first
// violation.
func (a *attributionReport) Check() error {
	billed := make(map[frame.ID]bool)
	for _, p := range a.Usage.Providers {
		for _, s := range p.ServedFrames {
			billed[s.Frame] = true
		}
	}
	for _, u := range a.Uses {
		if u.Cited && !u.Rendered {
			return fmt.Errorf("host: attribution: %s is cited but not rendered (A3)", u.Frame)
		}
		if u.Rendered && !u.Selected {
			return fmt.Errorf("host: attribution: %s is rendered but not selected (A3)", u.Frame)
		}
		if u.Selected && !billed[u.Frame] {
			return fmt.Errorf("host: attribution: %s is selected but not billed in the usage report (A3)", u.Frame)
		}
	}
	return a.Usage.Check()
}

// citedTokenShare is cited tokens over rendered tokens (billed costs), and
// false when nothing was rendered.
func (a *attributionReport) citedTokenShare() (float64, bool) {
	cost := make(map[frame.ID]uint64)
	for _, p := range a.Usage.Providers {
		for _, s := range p.ServedFrames {
			cost[s.Frame] = uint64(s.TokenCost)
		}
	}
	var cited, rendered uint64
	for _, u := range a.Uses {
		if u.Rendered {
			rendered += cost[u.Frame]
			if u.Cited {
				cited += cost[u.Frame]
			}
		}
	}
	if rendered == 0 {
		return 0, false
	}
	return float64(cited) / float64(rendered), true
}
