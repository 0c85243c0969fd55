package conformance

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/ctxkit/ctxkit/frame"
)

// Names of the composition scenarios. Each is one call to a ComposingHost;
// `ctxkit fixture-provider --scenario NAME --provider ID` serves one of its
// providers over stdio.
const (
	// scenarioBudgetOverflow: p0, p1, p2 each serve one honest 400-token
	// frame against max_tokens 1000.
	scenarioBudgetOverflow = "budget-overflow"
	// scenarioBudgetFits: the counterpart, three 200-token frames.
	scenarioBudgetFits = "budget-fits"
	// scenarioQuarantine: "flooder" serves max_frames+9 one-token frames
	// (a B4 frame flood), "honest" one 100-token frame.
	scenarioQuarantine = "quarantine"
	// scenarioDeterminism: three 100-token frames, composed twice.
	scenarioDeterminism = "determinism"
	// scenarioArrivalForward and scenarioArrivalRotated: three tied
	// 400-token frames (only two fit), providers registered p0, p1, p2 and
	// then p2, p0, p1.
	scenarioArrivalForward = "arrival-forward"
	scenarioArrivalRotated = "arrival-rotated"
	// scenarioArrivalFitsForward and scenarioArrivalFitsRotated: the
	// counterpart, three tied 200-token frames in the same two orders.
	scenarioArrivalFitsForward = "arrival-fits-forward"
	scenarioArrivalFitsRotated = "arrival-fits-rotated"
	// scenarioDuplicate: "alpha" and "beta" serve the same evidence (equal
	// content and content_digest) under different frame ids; "gamma" serves
	// distinct evidence.
	scenarioDuplicate = "duplicate"
	// scenarioDuplicateDistinct: the counterpart, alpha and beta serve
	// different evidence with different digests.
	scenarioDuplicateDistinct = "duplicate-distinct"
	// scenarioInvalid: "defective" serves three frames that each break one
	// protocol rule (F1, F3, B3); "honest" serves one valid frame.
	scenarioInvalid = "invalid"
	// scenarioInvalidRepaired: the counterpart, the same frames made valid.
	scenarioInvalidRepaired = "invalid-repaired"
)

// Provider ids used by the scenarios.
const (
	providerFlooder   = "flooder"
	providerHonest    = "honest"
	providerDefective = "defective"
)

// probeQuery is the query of both suites: any kind, max_frames 8, under
// maxTokens (4096 for the provider suite's sample query, docs/protocol.md
// §5.1; 1000 for every composition scenario).
func probeQuery(maxTokens uint32) frame.Query {
	return frame.Query{
		Goal:      "conformance probe: return your most relevant frames",
		QueryText: "conformance probe",
		MaxFrames: 8,
		MaxTokens: maxTokens,
	}
}

// trios are the scenarios of three single-frame providers: the frames'
// cost and the order the providers register in.
var trios = map[string]struct {
	cost  int
	order []int
}{
	scenarioBudgetOverflow:     {400, []int{0, 1, 2}},
	scenarioBudgetFits:         {200, []int{0, 1, 2}},
	scenarioDeterminism:        {100, []int{0, 1, 2}},
	scenarioArrivalForward:     {400, []int{0, 1, 2}},
	scenarioArrivalRotated:     {400, []int{2, 0, 1}},
	scenarioArrivalFitsForward: {200, []int{0, 1, 2}},
	scenarioArrivalFitsRotated: {200, []int{2, 0, 1}},
}

// Scenarios returns a fresh copy of every composition scenario, in the
// order the suite runs them; the caller may modify them.
func Scenarios() []*Scenario {
	var out []*Scenario
	for _, name := range scenarioNames() {
		s, _ := lookupScenario(name)
		out = append(out, s)
	}
	return out
}

// scenarioNames lists every composition scenario.
func scenarioNames() []string {
	return []string{scenarioBudgetOverflow, scenarioBudgetFits, scenarioQuarantine, scenarioDeterminism,
		scenarioArrivalForward, scenarioArrivalRotated, scenarioArrivalFitsForward, scenarioArrivalFitsRotated,
		scenarioDuplicate, scenarioDuplicateDistinct, scenarioInvalid, scenarioInvalidRepaired}
}

// lookupScenario returns a fresh copy of the named scenario; the caller may
// modify it.
func lookupScenario(name string) (*Scenario, bool) {
	s := &Scenario{Name: name, Query: probeQuery(1000)}
	trio := func(cost int, order ...int) {
		for _, i := range order {
			id := fmt.Sprintf("p%d", i)
			s.Providers = append(s.Providers, ScenarioProvider{ID: id, Frames: []*frame.Frame{fixtureFrame(id, id+"-f", cost)}})
		}
	}
	if t, ok := trios[name]; ok {
		trio(t.cost, t.order...)
		return s, true
	}
	switch name {
	case scenarioQuarantine:
		n := int(s.Query.MaxFrames) + 9
		flood := make([]*frame.Frame, n)
		for i := range flood {
			flood[i] = fixtureFrame(providerFlooder, fmt.Sprintf("flood-%02d", i), 1)
		}
		s.Providers = []ScenarioProvider{
			{ID: providerFlooder, Frames: flood},
			{ID: providerHonest, Frames: []*frame.Frame{fixtureFrame(providerHonest, "honest-f", 100)}},
		}
	case scenarioDuplicate, scenarioDuplicateDistinct:
		a := fixtureFrame("shared", "evidence", 100)
		b := fixtureFrame("shared", "evidence", 100)
		if name == scenarioDuplicateDistinct {
			b = fixtureFrame("beta", "evidence", 100)
		}
		a.ID, a.Title, a.CitationLabel, a.Score = "alpha-shared", "alpha-shared", "alpha-shared", 0.7
		b.ID, b.Title, b.CitationLabel, b.Score = "beta-shared", "beta-shared", "beta-shared", 0.6
		a.ContentDigest, b.ContentDigest = digestOf(a.Content), digestOf(b.Content)
		g := fixtureFrame("gamma", "gamma-own", 100)
		g.ContentDigest = digestOf(g.Content)
		s.Providers = []ScenarioProvider{
			{ID: "alpha", Frames: []*frame.Frame{a}},
			{ID: "beta", Frames: []*frame.Frame{b}},
			{ID: "gamma", Frames: []*frame.Frame{g}},
		}
	case scenarioInvalid, scenarioInvalidRepaired:
		score := fixtureFrame(providerDefective, "score-frame", 50)
		cite := fixtureFrame(providerDefective, "cite-frame", 50)
		cost := fixtureFrame(providerDefective, "cost-frame", 100)
		if name == scenarioInvalid {
			score.Score = 1.5        // F1: score outside [0, 1]
			cite.CitationLabel = " " // F3: blank citation label
			cost.TokenCost = 1       // B3: declares 1 for 100 tokens of content
		}
		s.Providers = []ScenarioProvider{
			{ID: providerDefective, Frames: []*frame.Frame{score, cite, cost}},
			{ID: providerHonest, Frames: []*frame.Frame{fixtureFrame(providerHonest, "honest-f", 100)}},
		}
	default:
		return nil, false
	}
	return s, true
}

// provider returns the scenario's provider with the given id.
func (s *Scenario) provider(id string) (ScenarioProvider, bool) {
	for _, p := range s.Providers {
		if p.ID == id {
			return p, true
		}
	}
	return ScenarioProvider{}, false
}

// fixtureFrame is a valid, B3-honest doc frame of exactly cost budget
// tokens. Its content starts with a tag naming provider and id, so no two
// fixture frames share content unless a scenario says so.
func fixtureFrame(provider, id string, cost int) *frame.Frame {
	tag := provider + "/" + id + " "
	n := 4 * cost
	var content string
	if len(tag) <= n {
		content = tag + strings.Repeat("x", n-len(tag))
	} else {
		content = id[len(id)-min(n, len(id)):] // short frames: the tail of the id keeps them distinct
		content += strings.Repeat("x", n-len(content))
	}
	return &frame.Frame{
		ID:            id,
		Kind:          "doc",
		Title:         id,
		Content:       content,
		Score:         0.5,
		TokenCost:     uint32(frame.BudgetTokens(content)),
		CitationLabel: id,
	}
}

func digestOf(s string) string {
	sum := sha256.Sum256([]byte(s))
	return "sha256:" + hex.EncodeToString(sum[:])
}

// frameCost is the canonical cost of a frame's inline content (B3), which
// is what the budget is measured in, whatever the frame declares.
func frameCost(f *frame.Frame) int { return f.ExpectedInlineCost() }
