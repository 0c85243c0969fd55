package compose

import (
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"strings"
	"testing"

	"github.com/ctxkit/ctxkit/frame"
)

// refFrame is a valid reference frame: no content, a content_ref, cost 0.
func refFrame(id, digest string, score float32) *frame.Frame {
	return &frame.Frame{ID: id, Kind: frame.KindDoc, Title: id, CitationLabel: id, Score: score,
		Representation: frame.RepresentationReference, ContentDigest: digest,
		ContentRef: &frame.ContentRef{ProviderID: "p", URI: "cgp://p/" + id}}
}

// A reference frame has no content to render, so the composer must not
// print an empty fence for it and audit it as included evidence: it is
// excluded with its reason and costs nothing.
func TestReferenceFrameIsExcludedNotRenderedEmpty(t *testing.T) {
	full := testFrame("full", "the retry policy backs off")
	offers := []Offer{{Provider: "p", Frame: refFrame("ref", "", 0.9)}, {Provider: "p", Frame: full}}
	res := ForPrompt(offers, 1000, nil)
	if strings.Contains(res.Prompt, `id="ref"`) {
		t.Fatalf("reference frame rendered:\n%s", res.Prompt)
	}
	var reason string
	for _, e := range res.Audit.Entries {
		if e.Frame.Frame == "ref" {
			if e.Disposition != Excluded {
				t.Fatalf("reference frame is %v", e.Disposition)
			}
			reason = e.Reason.Kind.String()
		}
	}
	if reason != "unresolved_reference" {
		t.Errorf("reference frame's reason = %q, want unresolved_reference", reason)
	}
	if want := RenderedCost("p", full); res.Audit.TokensUsed != want || len(res.Citations) != 1 {
		t.Errorf("tokens_used %d (want %d, the full frame alone), citations %d", res.Audit.TokensUsed, want, len(res.Citations))
	}
	if !res.Audit.ExplainsEveryDrop() {
		t.Errorf("audit does not explain the reference frame: %v", res.Audit.Entries)
	}
}

// A reference frame that shares its digest with a full frame must not win
// their duplicate group on score and take the evidence with it: the full
// frame is the one that is rendered.
func TestReferenceFrameDoesNotDisplaceItsContent(t *testing.T) {
	full := testFrame("full", "shared evidence")
	sum := sha256.Sum256([]byte(full.Content))
	full.ContentDigest = "sha256:" + hex.EncodeToString(sum[:])
	ref := refFrame("ref", full.ContentDigest, 0.99)
	offers := []Offer{{Provider: "a", Frame: ref}, {Provider: "b", Frame: full}}
	for _, perm := range [][]Offer{offers, {offers[1], offers[0]}} {
		res := ForPrompt(perm, 1000, nil)
		if got := res.Audit.Included(); len(got) != 1 || got[0].Frame != "full" {
			t.Fatalf("included %v, want b/full", got)
		}
	}
	a, b := ForPrompt(offers, 1000, nil), ForPrompt(slices.Clone([]Offer{offers[1], offers[0]}), 1000, nil)
	if a.Prompt != b.Prompt || len(a.Audit.Entries) != 2 || a.Audit.Entries[0] != b.Audit.Entries[0] {
		t.Errorf("order changed the result")
	}
}
