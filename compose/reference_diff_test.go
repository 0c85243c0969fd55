package compose

import (
	"slices"
	"strings"
	"testing"

	"github.com/ctxkit/ctxkit/frame"
)

// The tests in this file pin where ctxkit's dedup deliberately differs from
// the CGP reference composer (docs/compose.md, "Where ctxkit differs from
// the reference composer"). refDedup models the reference's scan
// (docs/protocol.md §4.1): offers sorted by FrameID, each joining the first
// group whose current representative is the same evidence, the higher score
// replacing the representative, and a drop record written at the moment of
// each decision.

type refDrop struct{ dropped, kept string }

func refDedup(offers []Offer) (kept []Offer, drops []refDrop) {
	sorted := slices.Clone(offers)
	slices.SortFunc(sorted, func(a, b Offer) int { return a.ID().Compare(b.ID()) })
	for _, o := range sorted {
		joined := false
		for k, rep := range kept {
			if !refSame(rep.Frame, o.Frame) {
				continue
			}
			merged := slices.Clone(rep.Frame.Provenance)
			for _, p := range o.Frame.Provenance {
				if !slices.Contains(merged, p) {
					merged = append(merged, p)
				}
			}
			survivor, loser := rep, o
			if o.Frame.Score > rep.Frame.Score {
				survivor, loser = o, rep
			}
			f := *survivor.Frame
			f.Provenance = merged
			kept[k] = Offer{Provider: survivor.Provider, Frame: &f}
			drops = append(drops, refDrop{loser.Frame.ID, survivor.Frame.ID})
			joined = true
			break
		}
		if !joined {
			kept = append(kept, o)
		}
	}
	return kept, drops
}

func refSame(a, b *frame.Frame) bool {
	if a.ContentDigest != "" && a.ContentDigest == b.ContentDigest {
		return true
	}
	for _, p := range a.Provenance {
		for _, q := range b.Provenance {
			if p.Type == frame.ProvenanceFile && q.Type == frame.ProvenanceFile && p.URI != "" && p.URI == q.URI && p.Range == q.Range {
				return true
			}
		}
	}
	return false
}

func keptIDs(offers []Offer) []string {
	var ids []string
	for _, o := range offers {
		ids = append(ids, o.Frame.ID)
	}
	slices.Sort(ids)
	return ids
}

// rendered lists the frame ids the prompt fences, in render order.
func rendered(r *Result) []string {
	var ids []string
	for _, c := range r.Citations {
		ids = append(ids, c.Frame.Frame)
	}
	return ids
}

// bridge is the minimal input: a and c share digest X, b and c
// name the same file region, a and b share nothing.
func bridge() []Offer {
	a := mk("a", "alpha", 0.9, digestOf("X"))
	b := mk("b", "beta", 0.5, "")
	b.Provenance = []frame.Provenance{fileProv("file:///repo/f.rs", "L1-9")}
	c := mk("c", "gamma", 0.1, digestOf("X"))
	c.Provenance = []frame.Provenance{fileProv("file:///repo/f.rs", "L1-9")}
	return []Offer{{"p", a}, {"p", b}, {"p", c}}
}

// TestDedupMergesConnectedComponents: c links a (digest) and b (file
// region), so a, b and c are one piece of evidence and only a is rendered.
// The reference keeps b, because c joined a's group first and b was never
// compared with c; its own dedup, run again on what it kept, then drops b.
func TestDedupMergesConnectedComponents(t *testing.T) {
	offers := bridge()
	refKept, _ := refDedup(offers)
	if got := keptIDs(refKept); !slices.Equal(got, []string{"a", "b"}) {
		t.Fatalf("reference model kept %v, want [a b]", got)
	}
	if again, _ := refDedup(refKept); !slices.Equal(keptIDs(again), []string{"a"}) {
		t.Fatalf("reference model run twice kept %v, want [a]", keptIDs(again))
	}

	r := ForPrompt(offers, 10_000, nil)
	if got := rendered(r); !slices.Equal(got, []string{"a"}) {
		t.Fatalf("rendered %v, want only a", got)
	}
	for _, e := range r.Audit.Entries {
		if e.Frame.Frame == "a" {
			continue
		}
		if e.Disposition != Excluded || e.Reason.Kind != Duplicate || e.Reason.Kept.Frame != "a" {
			t.Errorf("%s: %+v, want a duplicate of a", e.Frame.Frame, e)
		}
	}
	// Idempotent: deduplicating what was kept drops nothing more.
	once := dedup(offers)
	if twice := dedup(once.Kept); len(twice.Dropped) != 0 || !slices.Equal(keptIDs(twice.Kept), keptIDs(once.Kept)) {
		t.Fatalf("dedup run twice dropped %+v", twice.Dropped)
	}
	// The survivor carries c's file link, merged in.
	if !slices.Contains(once.Kept[0].Frame.Provenance, fileProv("file:///repo/f.rs", "L1-9")) {
		t.Fatalf("survivor provenance %+v", once.Kept[0].Frame.Provenance)
	}
}

// TestDuplicateNamesTheFinalSurvivor: when a group's best frame arrives
// after a better-than-the-first one, every duplicate names the frame that
// was rendered. The reference's record for a names b, which was itself
// dropped later.
func TestDuplicateNamesTheFinalSurvivor(t *testing.T) {
	x := digestOf("X")
	offers := []Offer{{"p", mk("a", "e", 0.3, x)}, {"p", mk("b", "e", 0.5, x)}, {"p", mk("c", "e", 0.9, x)}}
	if _, drops := refDedup(offers); !slices.Equal(drops, []refDrop{{"a", "b"}, {"b", "c"}}) {
		t.Fatalf("reference model drops %v", drops)
	}
	r := ForPrompt(offers, 10_000, nil)
	if got := rendered(r); !slices.Equal(got, []string{"c"}) {
		t.Fatalf("rendered %v", got)
	}
	for _, e := range r.Audit.Entries {
		if e.Frame.Frame != "c" && e.Reason.Kept.Frame != "c" {
			t.Errorf("duplicate %s names %s, not the rendered survivor c", e.Frame.Frame, e.Reason.Kept.Frame)
		}
	}
}

// TestDuplicatesListedByFrameID: the audit lists duplicates in FrameID
// order, whatever order the decisions were made in. The reference writes c
// (dropped when it met b) before a (dropped when d replaced it).
func TestDuplicatesListedByFrameID(t *testing.T) {
	x, y := digestOf("X"), digestOf("Y")
	offers := []Offer{{"p", mk("a", "e", 0.5, x)}, {"p", mk("b", "f", 0.5, y)}, {"p", mk("c", "f", 0.1, y)}, {"p", mk("d", "e", 0.9, x)}}
	if _, drops := refDedup(offers); !slices.Equal(drops, []refDrop{{"c", "b"}, {"a", "d"}}) {
		t.Fatalf("reference model drops %v", drops)
	}
	for _, order := range [][]int{{0, 1, 2, 3}, {3, 2, 1, 0}, {2, 0, 3, 1}} {
		in := make([]Offer, len(order))
		for i, k := range order {
			in[i] = offers[k]
		}
		r := ForPrompt(in, 10_000, nil)
		var dups []string
		for _, e := range r.Audit.Entries {
			if e.Reason.Kind == Duplicate {
				dups = append(dups, e.Frame.Frame+"→"+e.Reason.Kept.Frame)
			}
		}
		if got := strings.Join(dups, " "); got != "a→d c→b" {
			t.Fatalf("order %v: duplicates %s, want a→d c→b", order, got)
		}
	}
}
