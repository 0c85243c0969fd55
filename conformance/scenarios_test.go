package conformance

import (
	"testing"
)

// TestScenariosAreWellFormed: every fixture frame is valid and B3-honest,
// except the three defective frames of scenarioInvalid, which each break
// exactly the one rule they are meant to; ids are unique per provider and
// no two frames share content unless the duplicate scenario says so.
func TestScenariosAreWellFormed(t *testing.T) {
	wantBroken := map[string]string{"score-frame": "F1", "cite-frame": "F3", "cost-frame": "B3"}
	for _, name := range scenarioNames() {
		s, ok := lookupScenario(name)
		if !ok {
			t.Fatalf("scenario %s missing", name)
		}
		if s.Query.MaxTokens != 1000 || s.Query.MaxFrames != 8 {
			t.Errorf("%s: query %+v", name, s.Query)
		}
		contents := map[string]string{}
		for _, p := range s.Providers {
			ids := map[string]bool{}
			for _, f := range p.Frames {
				if ids[f.ID] {
					t.Errorf("%s: %s serves %s twice", name, p.ID, f.ID)
				}
				ids[f.ID] = true
				v := f.Validate()
				if name == scenarioInvalid && p.ID == providerDefective {
					if len(v) != 1 || string(v[0].Rule) != wantBroken[f.ID] {
						t.Errorf("%s: %s/%s violations %v, want exactly %s", name, p.ID, f.ID, v, wantBroken[f.ID])
					}
					continue
				}
				if len(v) != 0 {
					t.Errorf("%s: %s/%s invalid: %v", name, p.ID, f.ID, v)
				}
				if other, dup := contents[f.Content]; dup && name != scenarioDuplicate {
					t.Errorf("%s: %s/%s has the same content as %s", name, p.ID, f.ID, other)
				}
				contents[f.Content] = p.ID + "/" + f.ID
			}
		}
	}
	if _, ok := lookupScenario("no-such-scenario"); ok {
		t.Error("an unknown scenario was found")
	}
}

// TestLookupScenarioReturnsFreshCopies: a caller may change what it gets.
func TestLookupScenarioReturnsFreshCopies(t *testing.T) {
	a, _ := lookupScenario(scenarioBudgetOverflow)
	a.Providers[0].Frames[0].Score = 0.99
	a.Providers[0].ID = "changed"
	b, _ := lookupScenario(scenarioBudgetOverflow)
	if b.Providers[0].ID != "p0" || b.Providers[0].Frames[0].Score != 0.5 {
		t.Fatalf("scenario state leaked between lookups: %+v", b.Providers[0])
	}
}

// Scenarios lists every scenario by name, in suite order, each a copy the
// caller may change.
func TestScenariosListsEveryScenario(t *testing.T) {
	all := Scenarios()
	names := scenarioNames()
	if len(all) != len(names) {
		t.Fatalf("%d scenarios, want %d", len(all), len(names))
	}
	for i, s := range all {
		if s.Name != names[i] || len(s.Providers) == 0 {
			t.Errorf("scenario %d: %q with %d providers, want %q", i, s.Name, len(s.Providers), names[i])
		}
	}
	all[0].Providers = nil
	if Scenarios()[0].Providers == nil {
		t.Error("a caller's change leaked into the next Scenarios")
	}
}
