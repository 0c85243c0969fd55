package server

import "testing"

// TestOffersFromNamesTheMember checks that a frame refused on the
// encoding/json path is named by offer index and member.
func TestOffersFromNamesTheMember(t *testing.T) {
	const ok = `{"id":"a","kind":"doc","title":"t","score":1,"token_cost":0}`
	for _, c := range []struct{ frame, field string }{
		{``, "offers[1].frame"},
		{`null`, "offers[1].frame"},
		{`{"id":"a","kind":"doc","title":"t","score":1}`, "offers[1].frame.token_cost"},
		{`{"kind":"doc","title":"t","score":1,"token_cost":0}`, "offers[1].frame.id"},
		{`{"id":"a","kind":"doc","title":null,"score":1,"token_cost":0}`, "offers[1].frame.title"},
		{`{"id":"a","kind":"doc","title":"t","score":"x","token_cost":0}`, "offers[1].frame.score"},
		{`{"id":"a","kind":"doc","title":"t","score":1,"token_cost":0,"content":5}`, "offers[1].frame.content"},
		{`{"id":"a","kind":"doc","title":"t","score":1,"token_cost":0,"provenance":[{"type":1}]}`, "offers[1].frame.provenance.type"},
		{`{"id":"a","kind":"doc","title":"t","score":1,"token_cost":4294967296}`, "offers[1].frame.token_cost"},
	} {
		_, e := offersFrom([]wireOffer{{Provider: "p", Frame: []byte(ok)}, {Provider: "p", Frame: []byte(c.frame)}})
		if e == nil || e.Field != c.field || e.Status != 400 {
			t.Errorf("frame %s: got %+v, want 400 naming %s", c.frame, e, c.field)
		}
	}
	offers, e := offersFrom([]wireOffer{{Provider: "p", Frame: []byte(ok)}})
	if e != nil || len(offers) != 1 || offers[0].Frame.ID != "a" || offers[0].Provider != "p" {
		t.Fatalf("valid offer: %+v, %v", offers, e)
	}
}
