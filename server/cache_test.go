package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/ctxkit/ctxkit/compose"
	"github.com/ctxkit/ctxkit/server"
)

// TestComposeRouteStableFirstAcrossTurns drives two turns through the HTTP
// client: the second sends back the first answer's layout, and its stable
// prefix must be byte-identical to the start of the first prompt, exactly
// as compose.ForPrompt reports it in-process.
func TestComposeRouteStableFirstAcrossTurns(t *testing.T) {
	c, _ := newTestClient(t, nil)
	ctx := context.Background()
	offers := mkOffers(30, 3, 512)
	first, err := c.Compose(ctx, &server.ComposeRequest{Offers: offers, Budget: intp(2500), Placement: "stable-first"})
	if err != nil {
		t.Fatal(err)
	}
	if first.Cache == nil || first.Cache.Placement != "stable-first" || len(first.Cache.Layout) == 0 {
		t.Fatalf("first turn has no cache report: %+v", first.Cache)
	}
	// Turn two: one frame's score moves to the top, another frame leaves.
	offers[3].Frame.Score = 0.99
	next := append(append([]compose.Offer{}, offers[:20]...), offers[21:]...)
	second, err := c.Compose(ctx, &server.ComposeRequest{Offers: next, Budget: intp(2500),
		Placement: "stable-first", Previous: first.Cache.Layout, MinPrefixTokens: intp(-1)})
	if err != nil {
		t.Fatal(err)
	}
	if second.Cache == nil || second.Cache.StableFrames == 0 {
		t.Fatalf("second turn kept no stable frames: %+v", second.Cache)
	}
	if !strings.HasPrefix(first.Prompt, second.Stable()) {
		t.Fatalf("stable prefix (%d bytes) is not a prefix of the previous prompt", len(second.Stable()))
	}
	if second.Stable()+second.Volatile() != second.Prompt {
		t.Fatal("stable + volatile is not the prompt")
	}
	if b := second.Blocks(); len(b) != 1+len(second.Citations) || strings.Join(b[:1+second.Cache.StableFrames], "") != second.Stable() {
		t.Fatalf("%d blocks for %d citations, or the stable ones are not Stable()", len(b), len(second.Citations))
	}
	if second.Cache.Warning != "" {
		t.Fatalf("min_prefix_tokens -1 should turn the warning off, got %q", second.Cache.Warning)
	}
	prev, err := compose.ParseLayout(first.Cache.Layout)
	if err != nil {
		t.Fatal(err)
	}
	want := compose.ForPrompt(toCompose(next), 2500, &compose.Options{Placement: compose.StableFirst, Previous: prev,
		Cache: &compose.CacheOptions{MinPrefixTokens: -1}})
	if second.Prompt != want.Prompt || second.Stable() != want.Stable() ||
		second.Cache.StablePrefixHash != want.Cache.StablePrefixHash {
		t.Fatalf("route and composer disagree: stable %d vs %d bytes", len(second.Stable()), len(want.Stable()))
	}
}

func TestComposeRouteCacheMemberOnlyWhenAsked(t *testing.T) {
	c, _ := newTestClient(t, nil)
	ctx := context.Background()
	offers := mkOffers(5, 2, 256)
	plain, err := c.Compose(ctx, &server.ComposeRequest{Offers: offers, Budget: intp(2000)})
	if err != nil {
		t.Fatal(err)
	}
	if plain.Cache != nil {
		t.Fatalf("a default request got a cache member: %+v", plain.Cache)
	}
	if plain.Stable() != plain.Prompt || plain.Volatile() != "" {
		t.Fatal("without a report the whole prompt should read as stable")
	}
	named, err := c.Compose(ctx, &server.ComposeRequest{Offers: offers, Budget: intp(2000), Placement: "edges-by-rank"})
	if err != nil {
		t.Fatal(err)
	}
	if named.Cache == nil || named.Cache.MinPrefixTokens != compose.DefaultMinPrefixTokens {
		t.Fatalf("naming the default placement should report the cache split: %+v", named.Cache)
	}
	if named.Prompt != plain.Prompt {
		t.Fatal("naming the default placement changed the prompt")
	}
}

func TestComposeRouteRejectsBadPlacement(t *testing.T) {
	c, _ := newTestClient(t, nil)
	ctx := context.Background()
	offers := mkOffers(3, 1, 64)
	_, err := c.Compose(ctx, &server.ComposeRequest{Offers: offers, Budget: intp(100), Placement: "middle-out"})
	wantError(t, err, http.StatusBadRequest, "bad_request", "placement", "")
	_, err = c.Compose(ctx, &server.ComposeRequest{Offers: offers, Budget: intp(100), Placement: "stable-first",
		Previous: []byte(`{"version":99,"frames":"nope"}`)})
	wantError(t, err, http.StatusBadRequest, "bad_request", "previous", "")
}

// A sticky margin through the route: the answer is compose.ForPrompt's with
// the same margin, byte for byte, and its audit shows what the margin held
// in and displaced.
func TestComposeRouteStickyMargin(t *testing.T) {
	h := server.New(nil)
	ts := httptest.NewServer(h)
	defer ts.Close()
	offers := mkOffers(3, 1, 200)
	budget := 2 * compose.RenderedCost(offers[0].Provider, offers[0].Frame)
	offers[0].Frame.Score, offers[1].Frame.Score, offers[2].Frame.Score = 0.9, 0.6, 0.5
	first := compose.ForPrompt(toCompose(offers), budget, &compose.Options{Placement: compose.StableFirst})
	layout, err := json.Marshal(first.Layout)
	if err != nil {
		t.Fatal(err)
	}
	// Jitter lifts f2 just above f1, the second frame of the last turn.
	offers[1].Frame.Score, offers[2].Frame.Score = 0.55, 0.58
	for _, margin := range []float64{0, 0.1} {
		req := server.ComposeRequest{Offers: offers, Budget: intp(budget), Placement: "stable-first",
			Previous: layout, StickyMargin: margin}
		body, _ := json.Marshal(&req)
		status, got := postRaw(t, ts.URL+server.PathCompose, body)
		if status != http.StatusOK {
			t.Fatalf("status %d: %s", status, got)
		}
		want, err := compose.ForPrompt(toCompose(offers), budget, &compose.Options{Placement: compose.StableFirst,
			Previous: first.Layout, Cache: &compose.CacheOptions{}, StickyMargin: float32(margin)}).MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(bytes.TrimSuffix(got, []byte("\n")), want) {
			t.Fatalf("margin %g: answer differs from compose.ForPrompt:\n%s\n---\n%s", margin, got, want)
		}
		var res server.ComposeResult
		if err := json.Unmarshal(got, &res); err != nil {
			t.Fatal(err)
		}
		held := res.Prompt == first.Prompt
		marked := bytes.Contains(got, []byte(`"sticky_margin":0.1,`)) && bytes.Contains(got, []byte(`"sticky":"held"`)) &&
			bytes.Contains(got, []byte(`"sticky":"displaced"`))
		if held != (margin > 0) || marked != (margin > 0) {
			t.Fatalf("margin %g: prompt kept %v, audit marked %v:\n%s", margin, held, marked, got)
		}
		// The Go client's types carry the margin and the marks.
		marks := map[string]int{}
		for _, e := range res.Audit.Entries {
			marks[e.Sticky]++
		}
		if res.Audit.StickyMargin != margin || (margin > 0) != (marks["held"] > 0 && marks["displaced"] > 0) {
			t.Fatalf("margin %g: decoded audit has margin %g and marks %v", margin, res.Audit.StickyMargin, marks)
		}
	}
	c, _ := newTestClient(t, nil)
	for _, bad := range []float64{-0.1, 1e39} {
		_, err := c.Compose(context.Background(), &server.ComposeRequest{Offers: offers, Budget: intp(budget), StickyMargin: bad})
		wantError(t, err, http.StatusBadRequest, "bad_request", "sticky_margin", "")
	}
}
