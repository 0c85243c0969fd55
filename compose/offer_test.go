package compose

import (
	"strings"
	"testing"

	"github.com/ctxkit/ctxkit/frame"
	"github.com/ctxkit/ctxkit/rule"
)

// TestOfferValidate checks the one offer check: a blank provider id first,
// then the frame's violations named from the offer.
func TestOfferValidate(t *testing.T) {
	good := &frame.Frame{ID: "a", Kind: "doc", Title: "t", Content: "abcd", Score: 0.5, TokenCost: 1, CitationLabel: "a"}
	if vs := (&Offer{Provider: "p", Frame: good}).Validate(); len(vs) != 0 {
		t.Fatalf("valid offer: %v", vs)
	}
	bad := *good
	bad.Title = ""
	vs := (&Offer{Provider: " \t", Frame: &bad}).Validate()
	if len(vs) < 2 {
		t.Fatalf("want the provider and the title, got %v", vs)
	}
	if vs[0].Rule != rule.Schema || vs[0].Field != "provider" || vs[0].Detail != "offer's provider id is blank" {
		t.Fatalf("first violation %+v", vs[0])
	}
	for _, v := range vs[1:] {
		if !strings.HasPrefix(v.Field, "frame.") {
			t.Fatalf("frame violation not under frame.: %+v", v)
		}
	}
	if vs := (&Offer{Provider: "p"}).Validate(); len(vs) == 0 {
		t.Fatal("a nil frame (an empty one) passed")
	}
}
