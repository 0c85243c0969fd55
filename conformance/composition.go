package conformance

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/ctxkit/ctxkit/frame"
	"github.com/ctxkit/ctxkit/internal/cgpjson"
)

// Names of the composition checks, in report order.
const (
	// checkBudgetBound: the admitted frames' summed cost stays within the
	// query's max_tokens even when every provider is honest and only the
	// cross-provider sum overflows, and the host reports what it dropped.
	checkBudgetBound = "composition-budget-bound"
	// checkTotalPartition: every offered frame is admitted or reported
	// dropped; nothing is silently truncated and nothing is invented.
	checkTotalPartition = "composition-total-partition"
	// checkQuarantine: frames of a provider the host's own audit rejected
	// (a frame flood, B4) never reach the prompt.
	checkQuarantine = "composition-quarantine"
	// checkDeterminism: the same frame set composes to the same admitted
	// sequence twice running.
	checkDeterminism = "composition-determinism"
	// checkArrivalOrder: registering the same providers in another order
	// yields the same admitted sequence.
	checkArrivalOrder = "composition-arrival-order"
	// checkDuplicateEvidence: the same evidence served by two providers
	// (equal content_digest) is admitted once, the other copy reported
	// dropped.
	checkDuplicateEvidence = "composition-duplicate-evidence"
	// checkInvalidFrames: a frame that breaks a protocol rule (F1 score
	// range, F3 citation label, B3 cost honesty) is never admitted.
	checkInvalidFrames = "composition-invalid-frames"
)

// compositionChecks lists the composition checks in report order.
func compositionChecks() []string {
	return []string{checkBudgetBound, checkTotalPartition, checkQuarantine, checkDeterminism,
		checkArrivalOrder, checkDuplicateEvidence, checkInvalidFrames}
}

// FrameRef names one frame by the provider id it was registered under and
// its frame id. Its JSON form is a two-element array ["provider", "frame_id"].
type FrameRef struct {
	// Provider is the id the frame's provider was registered under.
	Provider string
	// Frame is the frame's id within that provider.
	Frame string
}

// String returns "provider/frame".
func (r FrameRef) String() string { return r.Provider + "/" + r.Frame }

// MarshalJSON writes ["provider", "frame_id"].
func (r FrameRef) MarshalJSON() ([]byte, error) {
	return cgpjson.MarshalNoEscape([2]string{r.Provider, r.Frame})
}

// UnmarshalJSON reads ["provider", "frame_id"].
func (r *FrameRef) UnmarshalJSON(b []byte) error {
	var pair []string
	if err := json.Unmarshal(b, &pair); err != nil {
		return fmt.Errorf("frame ref: want [provider, frame_id]: %w", err)
	}
	if len(pair) != 2 {
		return fmt.Errorf("frame ref: want [provider, frame_id], got %d elements", len(pair))
	}
	r.Provider, r.Frame = pair[0], pair[1]
	return nil
}

// Composition is what a composing host did with one scenario: the frames
// that reach the prompt, in render order, and the frames it reports having
// dropped on the way. Frames a host's per-provider audit quarantined need
// not be listed in Dropped.
type Composition struct {
	// Admitted lists the frames that reach the prompt, in render order.
	Admitted []FrameRef `json:"admitted"`
	// Dropped lists the frames the host reports dropping on the way.
	Dropped []FrameRef `json:"dropped"`
}

// ScenarioProvider is one fixture provider of a scenario: its id (the host's
// routing key and FrameID provider) and its reply to the scenario's query.
type ScenarioProvider struct {
	// ID is the provider's id: the host's routing key and the provider
	// part of its frames' identities.
	ID string
	// Frames is the provider's reply, in reply order. A host that runs its
	// providers in-process serves exactly these; over stdio,
	// `ctxkit fixture-provider --scenario NAME --provider ID` serves them.
	Frames []*frame.Frame
}

// Scenario is one composition input: providers in registration order and
// the query the host fans out.
type Scenario struct {
	// Name identifies the scenario (as passed to fixture-provider
	// --scenario).
	Name string
	// Providers are the scenario's providers, in registration order.
	Providers []ScenarioProvider
	// Query is the query the host fans out to every provider.
	Query frame.Query
}

// ComposingHost is a host's composition layer as the composition suite sees
// it: given the providers of a scenario and its query, what reaches the
// prompt and what was dropped getting there. An implementation should build
// a fresh host per call: provider ids are reused across scenarios.
type ComposingHost interface {
	Compose(ctx context.Context, s *Scenario) (*Composition, error)
}

// ComposingHostFunc adapts a function to ComposingHost.
type ComposingHostFunc func(ctx context.Context, s *Scenario) (*Composition, error)

// Compose calls f.
func (f ComposingHostFunc) Compose(ctx context.Context, s *Scenario) (*Composition, error) {
	return f(ctx, s)
}

// CompositionOptions configures RunComposition. A nil *CompositionOptions
// means the defaults.
type CompositionOptions struct {
	// Target names the host in the report; "" means "composing host".
	Target string
}

// RunComposition runs every composition check against h and returns the
// report, checks in compositionChecks order. Each check composes its
// adversarial scenario and a well-behaved counterpart; a host error or a
// cancelled ctx fails the check that was running, with the error as
// evidence.
func RunComposition(ctx context.Context, h ComposingHost, opts *CompositionOptions) Report {
	target := "composing host"
	if opts != nil && opts.Target != "" {
		target = opts.Target
	}
	rep := Report{Target: target}
	r := &compRun{ctx: ctx, h: h, rep: &rep}
	r.budgetBound()
	r.totalPartition()
	r.quarantine()
	r.determinism()
	r.arrivalOrder()
	r.duplicateEvidence()
	r.invalidFrames()
	return rep
}

type compRun struct {
	ctx context.Context
	h   ComposingHost
	rep *Report
}

// compose runs one scenario; on a host error it records the failure of
// check and returns ok=false.
func (r *compRun) compose(check, name string) (*Scenario, *Composition, bool) {
	s, ok := lookupScenario(name)
	if !ok {
		r.rep.add(check, Fail, "sent: nothing; got: no scenario %q in this harness; expected: a known scenario", name)
		return nil, nil, false
	}
	if err := r.ctx.Err(); err != nil {
		r.rep.add(check, Fail, "sent: nothing (scenario %s); got: %v before the run; expected: a composition", name, err)
		return nil, nil, false
	}
	c, err := r.h.Compose(r.ctx, s)
	if err == nil && c == nil {
		err = fmt.Errorf("host returned no composition")
	}
	if err != nil {
		r.rep.add(check, Fail, "sent: %s; got: host error: %v; expected: a composition", describeScenario(s), err)
		return nil, nil, false
	}
	return s, c, true
}

// passWithCounterpart composes the counterpart of check, scenario name,
// which differs from the check's own only in the property under test, and
// fails the check unless the host admits every frame it offers (want says
// what that shows): a host that admits nothing must not pass a check about
// what it leaves out. Otherwise the check passes, citing found and how the
// counterpart differs (desc).
func (r *compRun) passWithCounterpart(check, name, want, found, desc string) {
	cs, cc, ok := r.compose(check, name)
	if !ok {
		return
	}
	if missing := notAdmitted(cs, cc); len(missing) > 0 {
		r.fail(check, cs, cc, fmt.Sprintf("counterpart: %s; missing %s", want, refList(missing)))
		return
	}
	r.rep.add(check, Pass, "%s; counterpart %s: all %d admitted", found, desc, len(cc.Admitted))
}

func (r *compRun) fail(check string, s *Scenario, c *Composition, expected string) {
	r.rep.add(check, Fail, "sent: %s; got: %s; expected: %s", describeScenario(s), describeComposition(c), expected)
}

func (r *compRun) budgetBound() {
	const check = checkBudgetBound
	s, c, ok := r.compose(check, scenarioBudgetOverflow)
	if !ok {
		return
	}
	used, budget := admittedCost(s, c), int64(s.Query.MaxTokens)
	switch {
	case len(c.Admitted) == 0:
		r.fail(check, s, c, "at least one frame admitted (each provider is honest and fits alone)")
		return
	case used > budget:
		r.fail(check, s, c, fmt.Sprintf("admitted cost ≤ max_tokens %d (admitted %d)", budget, used))
		return
	case len(c.Dropped) == 0:
		r.fail(check, s, c, fmt.Sprintf("a reported drop: the offered frames cost %d > max_tokens %d, so something must have been left out and said so", offeredCost(s), budget))
		return
	}
	cs, cc, ok := r.compose(check, scenarioBudgetFits)
	if !ok {
		return
	}
	if missing := notAdmitted(cs, cc); len(missing) > 0 || len(cc.Dropped) > 0 {
		r.fail(check, cs, cc, fmt.Sprintf("counterpart: all %d frames admitted and nothing dropped (the offer costs %d ≤ %d)", countOffered(cs), offeredCost(cs), cs.Query.MaxTokens))
		return
	}
	r.rep.add(check, Pass, "3 honest providers overflowing %d together: admitted %d tokens (%s), dropped %s; counterpart under budget: all admitted, no drops",
		budget, used, refList(c.Admitted), refList(c.Dropped))
}

func (r *compRun) totalPartition() {
	const check = checkTotalPartition
	s, c, ok := r.compose(check, scenarioBudgetOverflow)
	if !ok {
		return
	}
	if why := partitionViolation(s, c); why != "" {
		r.fail(check, s, c, "every offered frame exactly once in admitted ∪ dropped, nothing else: "+why)
		return
	}
	cs, cc, ok := r.compose(check, scenarioBudgetFits)
	if !ok {
		return
	}
	if why := partitionViolation(cs, cc); why != "" {
		r.fail(check, cs, cc, "counterpart: every offered frame admitted or dropped: "+why)
		return
	}
	if len(cc.Dropped) > 0 || len(cc.Admitted) == 0 {
		r.fail(check, cs, cc, "counterpart: every frame admitted and no drops reported (the offer fits the budget)")
		return
	}
	r.rep.add(check, Pass, "overflowing offer of %d frames: %d admitted + %d dropped, none missing or invented; counterpart: %d admitted, no drops",
		countOffered(s), len(c.Admitted), len(c.Dropped), len(cc.Admitted))
}

// admittedFrom lists the admitted frames that came from provider.
func admittedFrom(admitted []FrameRef, provider string) []FrameRef {
	var out []FrameRef
	for _, a := range admitted {
		if a.Provider == provider {
			out = append(out, a)
		}
	}
	return out
}

// honestRef is the well-behaved provider's frame in the quarantine and
// invalid-frames scenarios: the counterpart that must be admitted.
var honestRef = FrameRef{Provider: providerHonest, Frame: "honest-f"}

// composeWithBad composes scenario for check and returns, beside the
// scenario and its composition, the frames admitted from provider bad.
func (r *compRun) composeWithBad(check, scenario, bad string) (*Scenario, *Composition, []FrameRef, bool) {
	s, c, ok := r.compose(check, scenario)
	if !ok {
		return nil, nil, nil, false
	}
	return s, c, admittedFrom(c.Admitted, bad), true
}

func (r *compRun) quarantine() {
	const check = checkQuarantine
	s, c, leaked, ok := r.composeWithBad(check, scenarioQuarantine, providerFlooder)
	if !ok {
		return
	}
	switch {
	case len(leaked) > 0:
		r.fail(check, s, c, fmt.Sprintf("no frame of %q, which returned %d frames for max_frames %d (B4 flood), admitted; leaked %s",
			providerFlooder, len(s.Providers[0].Frames), s.Query.MaxFrames, refList(leaked)))
	case !contains(c.Admitted, honestRef):
		r.fail(check, s, c, fmt.Sprintf("counterpart: the honest frame %s admitted beside the quarantined flooder", honestRef))
	default:
		r.rep.add(check, Pass, "flooder (%d frames for max_frames %d) contributed nothing; honest frame %s admitted",
			len(s.Providers[0].Frames), s.Query.MaxFrames, honestRef)
	}
}

func (r *compRun) determinism() {
	const check = checkDeterminism
	s, c1, ok := r.compose(check, scenarioDeterminism)
	if !ok {
		return
	}
	_, c2, ok := r.compose(check, scenarioDeterminism)
	if !ok {
		return
	}
	switch {
	case len(c1.Admitted) == 0:
		r.fail(check, s, c1, "a non-empty admitted sequence (the offer fits the budget)")
	case !sameRefs(c1.Admitted, c2.Admitted):
		r.fail(check, s, c2, fmt.Sprintf("the admitted sequence of the first run, %s", refList(c1.Admitted)))
	default:
		r.rep.add(check, Pass, "same set composed twice: identical admitted sequence %s", refList(c1.Admitted))
	}
}

func (r *compRun) arrivalOrder() {
	const check = checkArrivalOrder
	pairs := [][2]string{
		{scenarioArrivalForward, scenarioArrivalRotated},
		{scenarioArrivalFitsForward, scenarioArrivalFitsRotated},
	}
	var notes []string
	for i, p := range pairs {
		s1, c1, ok := r.compose(check, p[0])
		if !ok {
			return
		}
		s2, c2, ok := r.compose(check, p[1])
		if !ok {
			return
		}
		label := "adversarial (ties under an overflowing budget)"
		if i == 1 {
			label = "counterpart (ties under budget)"
		}
		if len(c1.Admitted) == 0 {
			r.fail(check, s1, c1, label+": a non-empty admitted sequence")
			return
		}
		if i == 1 && len(notAdmitted(s1, c1)) > 0 {
			r.fail(check, s1, c1, label+": every frame admitted (the offer fits the budget)")
			return
		}
		if !sameRefs(c1.Admitted, c2.Admitted) {
			r.fail(check, s2, c2, fmt.Sprintf("%s: the admitted sequence of %s (%s), %s", label, s1.Name, providerOrder(s1), refList(c1.Admitted)))
			return
		}
		notes = append(notes, fmt.Sprintf("%s: %s in both orders", label, refList(c1.Admitted)))
	}
	r.rep.add(check, Pass, "%s", strings.Join(notes, "; "))
}

func (r *compRun) duplicateEvidence() {
	const check = checkDuplicateEvidence
	s, c, ok := r.compose(check, scenarioDuplicate)
	if !ok {
		return
	}
	a := FrameRef{Provider: "alpha", Frame: "alpha-shared"}
	b := FrameRef{Provider: "beta", Frame: "beta-shared"}
	g := FrameRef{Provider: "gamma", Frame: "gamma-own"}
	na := countRef(c.Admitted, a) + countRef(c.Admitted, b)
	switch {
	case na != 1:
		r.fail(check, s, c, fmt.Sprintf("exactly one of %s and %s (same content_digest) admitted; got %d", a, b, na))
		return
	case !contains(c.Dropped, a) && !contains(c.Dropped, b):
		r.fail(check, s, c, fmt.Sprintf("the copy not admitted among %s, %s reported dropped", a, b))
		return
	case !contains(c.Admitted, g):
		r.fail(check, s, c, fmt.Sprintf("the distinct frame %s admitted", g))
		return
	}
	r.passWithCounterpart(check, scenarioDuplicateDistinct, "distinct evidence (different digests) all admitted",
		fmt.Sprintf("shared evidence admitted once (%s), the copy reported dropped", refList(intersect(c.Admitted, []FrameRef{a, b}))),
		"with distinct digests")
}

func (r *compRun) invalidFrames() {
	const check = checkInvalidFrames
	s, c, bad, ok := r.composeWithBad(check, scenarioInvalid, providerDefective)
	if !ok {
		return
	}
	switch {
	case len(bad) > 0:
		r.fail(check, s, c, fmt.Sprintf("no frame breaking F1 (score 1.5), F3 (blank citation_label) or B3 (token_cost 1 for 100 tokens of content) admitted; admitted %s", refList(bad)))
		return
	case !contains(c.Admitted, honestRef):
		r.fail(check, s, c, fmt.Sprintf("the valid frame %s admitted", honestRef))
		return
	}
	r.passWithCounterpart(check, scenarioInvalidRepaired, "the same frames made valid all admitted",
		fmt.Sprintf("no rule-breaking frame admitted (admitted %s)", refList(c.Admitted)), "with the frames repaired")
}

// partitionViolation returns "" when every offered frame appears exactly
// once in admitted ∪ dropped and nothing else appears there.
func partitionViolation(s *Scenario, c *Composition) string {
	offered := map[FrameRef]bool{}
	for _, p := range s.Providers {
		for _, f := range p.Frames {
			offered[FrameRef{Provider: p.ID, Frame: f.ID}] = true
		}
	}
	seen := map[FrameRef]int{}
	var problems []string
	for _, list := range [][]FrameRef{c.Admitted, c.Dropped} {
		for _, r := range list {
			if !offered[r] {
				problems = append(problems, "phantom "+r.String())
			}
			seen[r]++
		}
	}
	for _, p := range s.Providers {
		for _, f := range p.Frames {
			r := FrameRef{Provider: p.ID, Frame: f.ID}
			switch n := seen[r]; {
			case n == 0:
				problems = append(problems, "silently truncated "+r.String())
			case n > 1:
				problems = append(problems, fmt.Sprintf("%s reported %d times", r, n))
			}
		}
	}
	return strings.Join(problems, ", ")
}

func notAdmitted(s *Scenario, c *Composition) []FrameRef {
	var out []FrameRef
	for _, p := range s.Providers {
		for _, f := range p.Frames {
			r := FrameRef{Provider: p.ID, Frame: f.ID}
			if !contains(c.Admitted, r) {
				out = append(out, r)
			}
		}
	}
	return out
}

// admittedCost sums the canonical content cost of the admitted frames that
// were offered (phantoms are the partition check's concern).
func admittedCost(s *Scenario, c *Composition) int64 {
	var sum int64
	for _, a := range c.Admitted {
		if f := s.frame(a); f != nil {
			sum += int64(frameCost(f))
		}
	}
	return sum
}

func offeredCost(s *Scenario) int64 {
	var sum int64
	for _, p := range s.Providers {
		for _, f := range p.Frames {
			sum += int64(frameCost(f))
		}
	}
	return sum
}

func countOffered(s *Scenario) int {
	n := 0
	for _, p := range s.Providers {
		n += len(p.Frames)
	}
	return n
}

func (s *Scenario) frame(r FrameRef) *frame.Frame {
	for _, p := range s.Providers {
		if p.ID != r.Provider {
			continue
		}
		for _, f := range p.Frames {
			if f.ID == r.Frame {
				return f
			}
		}
	}
	return nil
}

func contains(list []FrameRef, r FrameRef) bool { return countRef(list, r) > 0 }

func countRef(list []FrameRef, r FrameRef) int {
	n := 0
	for _, x := range list {
		if x == r {
			n++
		}
	}
	return n
}

func intersect(list, want []FrameRef) []FrameRef {
	var out []FrameRef
	for _, x := range list {
		if contains(want, x) {
			out = append(out, x)
		}
	}
	return out
}

func sameRefs(a, b []FrameRef) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func refList(rs []FrameRef) string {
	parts := make([]string, len(rs))
	for i, r := range rs {
		parts[i] = r.String()
	}
	return "[" + strings.Join(parts, " ") + "]"
}

func providerOrder(s *Scenario) string {
	ids := make([]string, len(s.Providers))
	for i, p := range s.Providers {
		ids[i] = p.ID
	}
	return "providers registered as " + strings.Join(ids, ", ")
}

func describeScenario(s *Scenario) string {
	var b strings.Builder
	fmt.Fprintf(&b, "scenario %s (max_tokens %d, max_frames %d;", s.Name, s.Query.MaxTokens, s.Query.MaxFrames)
	for _, p := range s.Providers {
		if len(p.Frames) > 4 {
			fmt.Fprintf(&b, " %s: %d frames of %s each;", p.ID, len(p.Frames), plural(frameCost(p.Frames[0]), "token"))
			continue
		}
		fmt.Fprintf(&b, " %s:", p.ID)
		for _, f := range p.Frames {
			fmt.Fprintf(&b, " %s %d tok%s", f.ID, frameCost(f), frameDefects(f))
		}
		b.WriteString(";")
	}
	out := strings.TrimSuffix(b.String(), ";")
	return out + ")"
}

func describeComposition(c *Composition) string {
	return fmt.Sprintf("admitted %s, dropped %s", refList(c.Admitted), refList(c.Dropped))
}

// frameDefects names the protocol rules a fixture frame breaks, for evidence.
func frameDefects(f *frame.Frame) string {
	var d []string
	if f.Score < 0 || f.Score > 1 {
		d = append(d, fmt.Sprintf("score %g", f.Score))
	}
	if strings.TrimSpace(f.CitationLabel) == "" {
		d = append(d, "blank citation_label")
	}
	if int(f.TokenCost) != frameCost(f) {
		d = append(d, fmt.Sprintf("declares token_cost %d", f.TokenCost))
	}
	if f.ContentDigest != "" {
		d = append(d, "digest "+f.ContentDigest[:min(len(f.ContentDigest), 19)]+"…")
	}
	if len(d) == 0 {
		return ""
	}
	return " (" + strings.Join(d, ", ") + ")"
}

func plural(n int, unit string) string {
	if n == 1 {
		return "1 " + unit
	}
	return fmt.Sprintf("%d %ss", n, unit)
}
