package frame

import (
	"math/rand/v2"
	"slices"
	"testing"
)

func TestIDCompareOrder(t *testing.T) {
	ordered := []ID{
		{Provider: "", Frame: ""},
		{Provider: "A", Frame: "z"},
		{Provider: "a", Frame: "a"},
		{Provider: "a", Frame: "a", Digest: "sha256:0"},
		{Provider: "a", Frame: "a", Digest: "sha256:1"},
		{Provider: "a", Frame: "b"},
		{Provider: "a", Frame: "é"}, // bytes 0xc3 0xa9 sort after ASCII
		{Provider: "ab", Frame: ""},
		{Provider: "b", Frame: ""},
	}
	for i := range ordered {
		for j := range ordered {
			got := ordered[i].Compare(ordered[j])
			want := 0
			if i < j {
				want = -1
			} else if i > j {
				want = 1
			}
			if got != want {
				t.Errorf("Compare(%v, %v) = %d, want %d", ordered[i], ordered[j], got, want)
			}
		}
	}
}

// Property: sorting any shuffle by Compare gives the same sequence, and
// Compare is antisymmetric and transitive on random identities.
func TestIDCompareIsATotalOrder(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	pick := func(opts ...string) string { return opts[r.IntN(len(opts))] }
	ids := make([]ID, 200)
	for i := range ids {
		ids[i] = ID{Provider: pick("", "a", "b", "ab", "é"), Frame: pick("", "1", "10", "2", "x"), Digest: pick("", "", "sha256:a", "sha256:b")}
	}
	sorted := slices.Clone(ids)
	slices.SortFunc(sorted, ID.Compare)
	for k := 0; k < 20; k++ {
		shuffled := slices.Clone(ids)
		r.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
		slices.SortFunc(shuffled, ID.Compare)
		if !slices.Equal(sorted, shuffled) {
			t.Fatal("sort depends on input order")
		}
	}
	for i := 0; i < 2000; i++ {
		a, b, c := ids[r.IntN(len(ids))], ids[r.IntN(len(ids))], ids[r.IntN(len(ids))]
		if a.Compare(b) != -b.Compare(a) {
			t.Fatalf("not antisymmetric: %v %v", a, b)
		}
		if a.Compare(b) <= 0 && b.Compare(c) <= 0 && a.Compare(c) > 0 {
			t.Fatalf("not transitive: %v %v %v", a, b, c)
		}
		if (a.Compare(b) == 0) != (a == b) {
			t.Fatalf("equality mismatch: %v %v", a, b)
		}
	}
}

func TestIdentity(t *testing.T) {
	f := Frame{ID: "f1", ContentDigest: "sha256:d"}
	id := f.Identity("prov")
	if id != (ID{Provider: "prov", Frame: "f1", Digest: "sha256:d"}) || !id.Verifiable() {
		t.Fatalf("Identity = %+v", id)
	}
	if (ID{Provider: "p", Frame: "f"}).Verifiable() {
		t.Fatal("digest-less id is verifiable")
	}
	if s := id.String(); s != "prov/f1@sha256:d" {
		t.Fatalf("String = %q", s)
	}
}

func TestBudgetTokens(t *testing.T) {
	cases := map[string]int{"": 0, "a": 1, "abcd": 1, "abcde": 2, "😀": 1, "日本語": 3, "12345678": 2}
	for s, want := range cases {
		if got := BudgetTokens(s); got != want {
			t.Errorf("BudgetTokens(%q) = %d, want %d", s, got, want)
		}
		if got := BudgetTokens([]byte(s)); got != want {
			t.Errorf("BudgetTokens([]byte(%q)) = %d, want %d", s, got, want)
		}
	}
	ref := Frame{Representation: RepresentationReference}
	if ref.ExpectedInlineCost() != 0 {
		t.Fatal("reference frame costs tokens")
	}
	full := Frame{Content: "abcde"}
	if full.ExpectedInlineCost() != 2 {
		t.Fatal("wrong inline cost")
	}
}

func TestKindsAndScopes(t *testing.T) {
	if len(BaseKinds()) != 7 {
		t.Fatal("want 7 base kinds")
	}
	for _, k := range BaseKinds() {
		if !k.isBase() || k.String() != string(k) {
			t.Errorf("%s", k)
		}
	}
	if Kind("Doc").isBase() {
		t.Error("kinds are case-sensitive")
	}
	if !ScopeLocalOnly.Valid() || ScopeLocalOnly.offMachine() || !EgressScope("a:b").offMachine() {
		t.Error("scope classification")
	}
	d := DataFlow{Egress: true, EgressScopes: []EgressScope{ScopeLocalOnly, ScopeOrgTenant, "x:y"}}
	if got := d.OffMachineScopes(); len(got) != 2 || got[0] != ScopeOrgTenant {
		t.Errorf("OffMachineScopes = %v", got)
	}
}

func TestCite(t *testing.T) {
	f := Frame{Title: "T", CitationLabel: "  "}
	if f.Cite() != "T" {
		t.Fatal("blank label must fall back to the title")
	}
	f.CitationLabel = "L"
	if f.Cite() != "L" {
		t.Fatal("label must win")
	}
}

func TestCapabilitiesHelpers(t *testing.T) {
	var c Capabilities
	if !c.Supports("") || !c.Supports(RepresentationFull) || c.Supports(RepresentationCompact) {
		t.Fatal("empty representations means [full]")
	}
	c.Representations = []Representation{RepresentationCompact}
	if c.Supports(RepresentationFull) || !c.Supports(RepresentationCompact) {
		t.Fatal("declared list")
	}
	c.Query.Kinds = []Kind{KindDoc}
	if !c.ServesAny(nil) || !c.ServesAny([]Kind{KindFact, KindDoc}) || c.ServesAny([]Kind{KindFact}) {
		t.Fatal("ServesAny")
	}
	q := Query{Kinds: []Kind{KindDoc}}
	if !q.WantsKind(KindDoc) || q.WantsKind(KindFact) || !(&Query{}).WantsKind(KindFact) {
		t.Fatal("WantsKind")
	}
}
