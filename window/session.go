package window

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/ctxkit/ctxkit/tokens"
)

// SessionOptions configures a [Session]. A nil *SessionOptions or zero
// fields mean the documented defaults.
type SessionOptions struct {
	// Model the session's requests target.
	Model string
	// ProjectID is the host's project identity; memory contributions for
	// any other project are refused. Empty: every contribution is refused.
	ProjectID string
	// Catalog resolves the model; nil means DefaultCatalog().
	Catalog *Catalog
	// Counter overrides the model's counter.
	Counter tokens.Counter
}

// MemoryContribution is recalled memory a memory provider offers for the
// next request. It is charged to the memory lane only.
type MemoryContribution struct {
	// ProjectID is the project the memory belongs to.
	ProjectID string
	// ProviderID names the memory provider (informational).
	ProviderID string
	// Rendered is the text that will be sent.
	Rendered string
}

// ProjectMismatchError refuses a memory contribution whose project is not
// the session's. The contribution is not held and never budgeted.
type ProjectMismatchError struct {
	Session      string // the session's project
	Contribution string // the contribution's project
}

// Error describes the refusal.
func (e *ProjectMismatchError) Error() string {
	return fmt.Sprintf("window: memory contribution for project %q refused: session belongs to project %q", e.Contribution, e.Session)
}

// ErrUsage is wrapped by ObserveUsage's errors.
var ErrUsage = errors.New("invalid usage report")

// Session is the per-conversation surface: it holds the system prompt,
// exposed tools, window override, request parameters and a memory
// contribution, and assesses histories with the same calculation as
// [Assess]. On top of Assess it
//
//   - caches each message's estimate, so assessing a long history after
//     appending one message costs about one message's work;
//   - anchors on the input usage the provider reported (ObserveUsage) and
//     keeps a calibration factor, an exponentially weighted reported ÷
//     estimated within bounds, that moves both ways;
//   - reports a compaction that did not reduce the estimate and latches
//     ShouldCompact off until the history grows again.
//
// Messages are matched to the cache by position and content: a history
// re-serialized into new byte slices is recognised (at the cost of a
// memory comparison), and the same slice is recognised without one, so
// a message must not be modified in place once passed to Assess. A
// Session is safe for concurrent use.
type Session struct {
	mu      sync.Mutex
	project string
	catalog *Catalog
	counter tokens.Counter // nil: resolved per model
	in      Inputs         // everything but Messages and Memory
	memory  *MemoryContribution

	// Counts of the static lanes, recomputed only when their inputs change.
	lanes        Breakdown
	laneWarnings []string
	lanesValid   bool

	// Per-message cache, by position, of the last assessed history.
	cache []cachedMessage

	calibration map[string]float64 // per model, within [calibrationMin, calibrationMax]
	anchor      *anchorState

	advised       *advice // the last assessment that advised compaction
	suppressUntil int     // ShouldCompact is latched off while len(history) ≤ this
}

type cachedMessage struct {
	msg  json.RawMessage
	cost messageCost
	sums costSums // of this message and every one before it
}

type anchorState struct {
	model    string
	reported int
	messages int
	estimate int // raw (unscaled) estimate of the anchored request
}

type advice struct {
	used     int
	messages int
}

// NewSession returns a session for opts (nil: an unknown model, no
// project).
func NewSession(opts *SessionOptions) *Session {
	var o SessionOptions
	if opts != nil {
		o = *opts
	}
	s := &Session{project: o.ProjectID, catalog: o.Catalog, counter: o.Counter, calibration: map[string]float64{}}
	if s.catalog == nil {
		s.catalog = DefaultCatalog()
	}
	s.in.Model = o.Model
	s.in.Catalog = s.catalog
	s.in.Counter = o.Counter
	return s
}

// Update changes what the session assesses with: f gets the session's
// Inputs (system prompt, tools, skills, window override, thinking budget,
// next tool-result cap, output reserve, wire and model) to change in
// place. Messages, Memory, Catalog and Counter are the session's own and
// are reset after f; the tool and skill slices are copied. Switching the model or
// the wire recounts the message estimates (calibration factors are kept
// per model). A zero Window or OutputReserve restores the catalog's
// default.
func (s *Session) Update(f func(in *Inputs)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	old := s.in
	f(&s.in)
	s.in.Messages, s.in.Memory, s.in.Catalog = nil, nil, s.catalog
	s.in.Tools = slices.Clone(s.in.Tools)
	s.in.Skills = slices.Clone(s.in.Skills)
	s.in.Counter = old.Counter
	if s.in.Model != old.Model || s.in.Wire != old.Wire {
		s.in.Counter = s.counter
		s.cache = nil // message estimates and image charges change
	}
	s.lanesValid = false
}

// HoldMemoryContribution holds c for the next assessments, charged to the
// memory lane only. A contribution for another project (or any
// contribution when the session has no project) is refused with a
// *ProjectMismatchError and the held contribution, if any, is kept.
func (s *Session) HoldMemoryContribution(c MemoryContribution) error {
	if s.project == "" || c.ProjectID != s.project {
		return &ProjectMismatchError{Session: s.project, Contribution: c.ProjectID}
	}
	s.update(func() { s.memory = &c })
	return nil
}

// ClearMemoryContribution drops the held contribution.
func (s *Session) ClearMemoryContribution() { s.update(func() { s.memory = nil }) }

func (s *Session) update(f func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f()
	s.lanesValid = false
}

// Inputs returns the exact Inputs the session assesses messages with;
// Assess(s.Inputs(m)) equals s.Assess(m) before any usage is observed.
func (s *Session) Inputs(messages []json.RawMessage) Inputs {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.inputs(messages)
}

func (s *Session) inputs(messages []json.RawMessage) Inputs {
	in := s.in
	if in.Counter == nil {
		// Resolve the model's counter once, so exact counters keep their
		// cache across assessments.
		in.Counter = counterFor(s.catalog.lookup(in.Model))
		if in.Counter == nil {
			in.Counter = tokens.ForModel(in.Model)
		}
		s.in.Counter = in.Counter
	}
	in.Messages = messages
	if s.memory != nil {
		in.Memory = []string{s.memory.Rendered}
	}
	return in
}

// Calibration bounds and weight. Each reported usage moves the factor a
// share calibrationWeight of the way from its current value to reported ÷
// estimated, so one odd request (a cache warm-up, a provider-side system
// prompt) moves it by at most that share and later requests pull it back;
// the bounds keep a broken report (0 tokens, or a figure for another
// request) from scaling estimates past what any counter is off by.
const (
	calibrationWeight = 0.3
	calibrationMin    = 0.5
	calibrationMax    = 4.0
)

// Calibration returns the session's calibration factor for its model (1
// until a usage is observed); Assessment.Calibration reports it too.
func (s *Session) Calibration() float64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.factor(s.in.Model)
}

func (s *Session) factor(model string) float64 {
	if f, ok := s.calibration[model]; ok {
		return f
	}
	return 1
}

// Assess assesses the next request with the given history. It equals
// Assess(s.Inputs(messages)) except that lanes are scaled by the
// calibration factor, usage is anchored on the last reported figure while
// that request's messages are still the history's prefix, and the
// compaction loop guard applies.
func (s *Session) Assess(messages []json.RawMessage) Assessment {
	s.mu.Lock()
	defer s.mu.Unlock()
	in := s.inputs(messages)
	r := resolve(&in)

	// Per-message estimates: reuse by position while the bytes are the
	// same slice; the first difference marks a rewrite.
	rewrite := len(messages) < len(s.cache)
	for i, m := range messages {
		if i < len(s.cache) && sameBytes(s.cache[i].msg, m) {
			if !samePointer(s.cache[i].msg, m) {
				s.cache[i].msg = m // later calls compare pointers first
			}
			continue
		}
		if i < len(s.cache) {
			rewrite = true
			if s.anchor != nil && i < s.anchor.messages {
				s.anchor = nil // the anchored request is no longer the prefix
			}
			s.cache = s.cache[:i]
		}
		c := cachedMessage{msg: m, cost: estimateMessage(r.counter, m, r.charges())}
		if i > 0 {
			c.sums = s.cache[i-1].sums
		}
		c.sums = c.sums.plus(i, &c.cost)
		s.cache = append(s.cache, c)
	}
	if len(messages) < len(s.cache) {
		s.cache = s.cache[:len(messages)]
	}
	if s.anchor != nil && len(messages) < s.anchor.messages {
		s.anchor = nil
	}
	h := s.totals(r, len(s.cache))

	if !s.lanesValid {
		n := len(r.warnings)
		s.lanes = r.staticLanes(&in)
		s.laneWarnings = append([]string(nil), r.warnings[n:]...)
		s.lanesValid = true
	} else {
		r.warnings = append(r.warnings, s.laneWarnings...)
	}
	factor := s.factor(in.Model)
	a := r.finish(&in, s.lanes, h, factor)

	if an := s.anchor; an != nil && an.model == in.Model {
		// The anchored request's share of this estimate: everything but
		// what was added since, so that an unchanged history is charged
		// exactly the reported figure.
		raw := satAdd(satAdd(s.lanes.Total(), satAdd(h.tokens, h.system)), satMul(FramingTokensPerMessage, h.messages))
		added := scale(max(raw-an.estimate, 0), factor)
		a.Anchor = &Anchor{Reported: an.reported, Messages: an.messages, Estimated: max(a.Breakdown.Total()-added, 0)}
	}

	// Compaction loop guard.
	if rewrite && s.advised != nil {
		check := &CompactionCheck{Before: s.advised.used, After: a.Used()}
		check.Reduced = check.After < check.Before
		a.Compaction = check
		if !check.Reduced {
			s.suppressUntil = len(messages)
		}
		s.advised = nil
	}
	if len(messages) > s.suppressUntil {
		s.suppressUntil = 0
	}
	if s.suppressUntil > 0 && a.overBudget() {
		a.CompactionSuppressed = true
	}
	if a.ShouldCompact() {
		s.advised = &advice{used: a.Used(), messages: len(messages)}
	}
	return a
}

// totals sums the first n cached messages from their running sums.
func (s *Session) totals(r *resolved, n int) historyTotals {
	return r.sumTotals(n,
		func(k int) *costSums { return &s.cache[k-1].sums },
		func(i int) *messageCost { return &s.cache[i].cost })
}

// samePointer reports whether a and b are the same slice of memory.
func samePointer(a, b json.RawMessage) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}

// sameBytes reports whether a and b hold the same bytes, comparing the
// pointers first so an unchanged history costs no memory comparison.
func sameBytes(a, b json.RawMessage) bool {
	if len(a) != len(b) {
		return false
	}
	return len(a) == 0 || &a[0] == &b[0] || bytes.Equal(a, b)
}

// ObserveUsage records that the provider billed reportedInputTokens of
// input for the request made of the first messageCount messages of the
// last assessed history (with the session's current system prompt, tools,
// skills and memory). Later assessments use that figure plus the estimate
// of what was added since, and the model's calibration factor moves
// calibrationWeight of the way toward reported ÷ estimated, within
// [calibrationMin, calibrationMax]. It fails, naming the bad figure, for a
// negative figure or a messageCount beyond the last assessed history; the
// error wraps [ErrUsage].
func (s *Session) ObserveUsage(reportedInputTokens, messageCount int) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case reportedInputTokens < 0 || reportedInputTokens > maxTokens:
		return fmt.Errorf("window: observe usage: %w: reported tokens %d out of range", ErrUsage, reportedInputTokens)
	case messageCount < 0 || messageCount > len(s.cache):
		return fmt.Errorf("window: observe usage: %w: message count %d, last assessed history has %d", ErrUsage, messageCount, len(s.cache))
	}
	in := s.inputs(nil)
	r := resolve(&in)
	if !s.lanesValid {
		n := len(r.warnings)
		s.lanes = r.staticLanes(&in)
		s.laneWarnings = append([]string(nil), r.warnings[n:]...)
		s.lanesValid = true
	}
	h := s.totals(r, messageCount)
	est := satAdd(s.lanes.Total(), satAdd(h.tokens, h.system))
	est = satAdd(est, satMul(FramingTokensPerMessage, h.messages))
	if est > 0 {
		ratio := float64(reportedInputTokens) / float64(est)
		f := s.factor(s.in.Model)
		f += calibrationWeight * (ratio - f)
		s.calibration[s.in.Model] = min(max(f, calibrationMin), calibrationMax)
	}
	s.anchor = &anchorState{model: s.in.Model, reported: reportedInputTokens, messages: messageCount, estimate: est}
	return nil
}
