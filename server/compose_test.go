package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/ctxkit/ctxkit/compose"
	"github.com/ctxkit/ctxkit/frame"
	"github.com/ctxkit/ctxkit/internal/httpcall"
	"github.com/ctxkit/ctxkit/server"
	"github.com/ctxkit/ctxkit/server/api"
)

// mkFrame returns a valid frame with the given id, content and score.
func mkFrame(id, content string, score float32) *frame.Frame {
	return &frame.Frame{ID: id, Kind: frame.KindDoc, Title: "title " + id, Content: content,
		Score: score, TokenCost: uint32(frame.BudgetTokens(content)), CitationLabel: "doc " + id}
}

// mkOffers returns n valid offers spread over providers p0..p(np-1).
func mkOffers(n, np, size int) []compose.Offer {
	out := make([]compose.Offer, n)
	for i := range out {
		content := fmt.Sprintf("frame %d: ", i) + strings.Repeat("evidence ", size/9+1)[:size]
		out[i] = compose.Offer{Provider: fmt.Sprintf("p%d", i%np), Frame: mkFrame(fmt.Sprintf("f%d", i), content, float32(i%10)/10)}
	}
	return out
}

func toCompose(offers []compose.Offer) []compose.Offer {
	out := make([]compose.Offer, len(offers))
	for i, o := range offers {
		out[i] = compose.Offer{Provider: o.Provider, Frame: o.Frame}
	}
	return out
}

func intp(n int) *int { return &n }

// postRaw posts body and returns the status and the raw answer.
func postRaw(t *testing.T, url string, body []byte) (int, []byte) {
	t.Helper()
	resp, b := httpcall.Do(t, http.MethodPost, url, body)
	return resp.StatusCode, b
}

func TestComposeRouteMatchesTheComposer(t *testing.T) {
	h := server.New(nil)
	ts := httptest.NewServer(h)
	defer ts.Close()
	offers := mkOffers(20, 3, 1024)
	offers[7].Frame.Score = 0.95 // a clear winner
	for _, tc := range []struct {
		req  api.ComposeRequest
		opts *compose.Options
	}{
		{api.ComposeRequest{Budget: intp(3000)}, nil},
		{api.ComposeRequest{Budget: intp(3000), Strategy: "round-robin-by-rank", Packer: "stop-at-first-miss"},
			&compose.Options{Strategy: compose.RoundRobinByRank{}, Packer: compose.StopAtFirstMiss}},
		{api.ComposeRequest{Budget: intp(5000), Strategy: "per-provider-quota", Quota: 2},
			&compose.Options{Strategy: compose.PerProviderQuota{K: 2}}},
		{api.ComposeRequest{Budget: intp(5000), Strategy: "trust-weighted", Weights: map[string]uint32{"p1": 3}},
			&compose.Options{Strategy: compose.TrustWeighted{Weights: map[string]uint32{"p1": 3}, Default: 1}}},
		{api.ComposeRequest{Budget: intp(0)}, nil},
	} {
		tc.req.Offers = offers
		body, _ := json.Marshal(&tc.req)
		status, got := postRaw(t, ts.URL+api.PathCompose, body)
		if status != 200 {
			t.Fatalf("status %d: %s", status, got)
		}
		want, err := compose.ForPrompt(toCompose(offers), *tc.req.Budget, tc.opts).MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(bytes.TrimSuffix(got, []byte("\n")), want) {
			t.Fatalf("strategy %q: answer differs from compose.ForPrompt:\n%s\n---\n%s", tc.req.Strategy, got, want)
		}
		// The Go client's mirror types read back exactly what was sent.
		var res api.ComposeResponse
		if err := json.Unmarshal(got, &res); err != nil {
			t.Fatal(err)
		}
		var again bytes.Buffer
		enc := json.NewEncoder(&again)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(&res); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(again.Bytes(), got) {
			t.Fatalf("ComposeResult does not round-trip the answer:\n%s\n---\n%s", again.Bytes(), got)
		}
		if len(res.Audit.Entries) != len(offers) || res.Audit.TokensUsed > *tc.req.Budget {
			t.Fatalf("audit: %d entries for %d offers, %d tokens for budget %d", len(res.Audit.Entries), len(offers), res.Audit.TokensUsed, *tc.req.Budget)
		}
	}
}

func TestComposeRouteCountsFrames(t *testing.T) {
	c, h := newTestClient(t, nil)
	offers := mkOffers(10, 2, 400)
	offers[3].Frame = mkFrame("dup", offers[2].Frame.Content, 0.1) // same content as offer 2
	offers[3].Frame.ContentDigest = "sha256:" + strings.Repeat("ab", 32)
	offers[2].Frame.ContentDigest = offers[3].Frame.ContentDigest
	res, err := c.Compose(context.Background(), &api.ComposeRequest{Offers: offers, Budget: intp(500)})
	if err != nil {
		t.Fatal(err)
	}
	reasons := map[string]int{}
	inc := 0
	for _, e := range res.Audit.Entries {
		if e.Disposition == compose.Included {
			inc++
		} else {
			reasons[e.Reason.Kind.String()]++
		}
	}
	if reasons["duplicate"] != 1 || reasons["over_budget"] == 0 || inc == 0 {
		t.Fatalf("audit reasons %v, %d included", reasons, inc)
	}
	m := metricsOf(h)
	for _, want := range []string{
		fmt.Sprintf("ctxkit_frames_composed_total %d\n", inc),
		"ctxkit_frames_excluded_total{reason=\"duplicate\"} 1\n",
		fmt.Sprintf("ctxkit_frames_excluded_total{reason=\"over_budget\"} %d\n", reasons["over_budget"]),
		`ctxkit_http_requests_total{route="/v1/compose",code="200"} 1` + "\n",
	} {
		if !strings.Contains(m, want) {
			t.Errorf("metrics lack %q:\n%s", want, m)
		}
	}
	_ = h
}

func TestComposeRouteRejectsBadInput(t *testing.T) {
	c, _ := newTestClient(t, &server.Options{MaxFrames: 5})
	ctx := context.Background()
	ok := mkOffers(3, 2, 50)

	blankLabel := mkOffers(3, 2, 50)
	blankLabel[1].Frame.CitationLabel = " "
	_, err := c.Compose(ctx, &api.ComposeRequest{Offers: blankLabel, Budget: intp(100)})
	wantError(t, err, 422, api.CodeRuleViolation, "offers[1].frame.citation_label", "F3")

	lying := mkOffers(3, 2, 50)
	lying[2].Frame.TokenCost = 1
	_, err = c.Compose(ctx, &api.ComposeRequest{Offers: lying, Budget: intp(100)})
	wantError(t, err, 422, api.CodeRuleViolation, "offers[2].frame.token_cost", "B3")

	blankProvider := mkOffers(1, 1, 50)
	blankProvider[0].Provider = ""
	_, err = c.Compose(ctx, &api.ComposeRequest{Offers: blankProvider, Budget: intp(100)})
	wantError(t, err, 422, api.CodeRuleViolation, "offers[0].provider", "schema")

	_, err = c.Compose(ctx, &api.ComposeRequest{Offers: ok})
	wantError(t, err, 400, api.CodeBadRequest, "budget", "")
	_, err = c.Compose(ctx, &api.ComposeRequest{Offers: ok, Budget: intp(-1)})
	wantError(t, err, 400, api.CodeBadRequest, "budget", "")
	_, err = c.Compose(ctx, &api.ComposeRequest{Offers: ok, Budget: intp(9), Strategy: "best-first"})
	wantError(t, err, 400, api.CodeBadRequest, "strategy", "")
	_, err = c.Compose(ctx, &api.ComposeRequest{Offers: ok, Budget: intp(9), Strategy: "per-provider-quota", Quota: -2})
	wantError(t, err, 400, api.CodeBadRequest, "quota", "")
	_, err = c.Compose(ctx, &api.ComposeRequest{Offers: ok, Budget: intp(9), Packer: "best-fit"})
	wantError(t, err, 400, api.CodeBadRequest, "packer", "")
	_, err = c.Compose(ctx, &api.ComposeRequest{Offers: mkOffers(6, 2, 10), Budget: intp(9)})
	wantError(t, err, 413, api.CodeTooManyFrames, "offers", "")
	_, err = c.Context(ctx, &api.ContextRequest{Offers: mkOffers(6, 2, 10)})
	wantError(t, err, 413, api.CodeTooManyFrames, "offers", "")

	// Raw JSON the Go types could not produce.
	for _, tc := range []struct {
		body              string
		status            int
		code, field, rule string
	}{
		{`{"budget":10,"offers":[{"provider":"p","frame":{"id":"a","kind":"doc","title":"t","score":1}}]}`, 400, api.CodeBadRequest, "offers[0].frame.token_cost", ""},
		{`{"budget":10,"offers":[{"provider":"p"}]}`, 400, api.CodeBadRequest, "offers[0].frame", ""},
		{`{"budget":10,"offers":[{"provider":"p","frame":{"id":"a","kind":"doc","title":"t","score":1.5,"token_cost":0,"citation_label":"c"}}]}`, 422, api.CodeRuleViolation, "offers[0].frame.score", "F1"},
		{`{"budget":10,"offers":[{"provider":"p","frame":{"id":"a","kind":"doc","title":"t","score":1,"token_cost":-3,"citation_label":"c"}}]}`, 400, api.CodeBadRequest, "", ""},
		{`{"budget":"ten","offers":[]}`, 400, api.CodeBadRequest, "budget", ""},
		{`{"budget":10,"offers":{}}`, 400, api.CodeBadRequest, "offers", ""},
	} {
		err := c.Do(ctx, api.PathCompose, json.RawMessage(tc.body), nil)
		e := wantErrorLoose(t, err, tc.status, tc.code, tc.rule)
		if tc.field != "" && e.Field != tc.field {
			t.Errorf("%s: field %q, want %q (%s)", tc.body, e.Field, tc.field, e.Message)
		}
	}
}

// wantErrorLoose checks status, code and rule but not the field.
func wantErrorLoose(t *testing.T, err error, status int, code, rule string) *api.Error {
	t.Helper()
	var e *api.Error
	if !errors.As(err, &e) || e.Status != status || e.Code != code || string(e.Rule) != rule {
		t.Fatalf("error %v, want %d %s rule %q", err, status, code, rule)
	}
	return e
}

func TestComposeSkipInvalid(t *testing.T) {
	c, _ := newTestClient(t, nil)
	offers := mkOffers(4, 2, 50)
	offers[1].Frame.CitationLabel = ""
	offers[3].Frame.Score = -1
	res, err := c.Compose(context.Background(), &api.ComposeRequest{Offers: offers, Budget: intp(1000), SkipInvalid: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Skipped) != 2 || res.Skipped[0].Index != 1 || res.Skipped[0].Rule != "F3" || res.Skipped[1].Index != 3 || res.Skipped[1].Rule != "F1" {
		t.Fatalf("skipped %+v", res.Skipped)
	}
	if len(res.Audit.Entries) != 2 {
		t.Fatalf("%d audit entries, want the 2 valid offers", len(res.Audit.Entries))
	}
	ctxRes, err := c.Context(context.Background(), &api.ContextRequest{Offers: offers, SkipInvalid: true})
	if err != nil || len(ctxRes.Skipped) != 2 {
		t.Fatalf("context skip: %+v %v", ctxRes, err)
	}
}

func TestContextRouteIsTheDeterminismFloor(t *testing.T) {
	c, _ := newTestClient(t, nil)
	offers := mkOffers(12, 3, 200)
	want := compose.Context(toCompose(offers))
	r := rand.New(rand.NewPCG(1, 2))
	for range 5 {
		shuffled := append([]compose.Offer(nil), offers...)
		r.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
		for _, o := range shuffled {
			o.Frame.Score = r.Float32() // scores never reach the floor
		}
		got, err := c.Context(context.Background(), &api.ContextRequest{Offers: shuffled})
		if err != nil {
			t.Fatal(err)
		}
		if got.Context != want {
			t.Fatalf("context depends on order or scores")
		}
	}
}

// TestComposeRefusesEmptyMembers: a frame timestamp, digest, enumeration or
// relation display_name sent as "" is present, so rules F4, D1, the schema
// and G1 refuse it (the fast decoder declines it to the slow path, which
// marks it); with skip_invalid the offer is skipped. Absent members stay
// valid.
func TestComposeRefusesEmptyMembers(t *testing.T) {
	c, _ := newTestClient(t, nil)
	ctx := context.Background()
	good := mkOffers(1, 1, 20)[0]
	b, err := json.Marshal(good.Frame)
	if err != nil {
		t.Fatal(err)
	}
	// with returns the good frame's JSON with member m added.
	with := func(m string) string { return string(b[:len(b)-1]) + "," + m + "}" }
	for _, tc := range []struct{ member, field, rule string }{
		{`"valid_from":""`, "offers[1].frame.valid_from", "F4"},
		{`"valid_to":""`, "offers[1].frame.valid_to", "F4"},
		{`"recorded_at":""`, "offers[1].frame.recorded_at", "F4"},
		{`"relations":[{"rel":"r","target_uri":"x","display_name":""}]`, "offers[1].frame.relations[0].display_name", "G1"},
		{`"relations":[{"rel":"r","target_uri":"x"}]`, "offers[1].frame.relations[0].display_name", "G1"},
		{`"relations":[{"rel":"r","target_uri":"x","display_name":null}]`, "offers[1].frame.relations[0].display_name", "G1"},
		{`"content_digest":""`, "offers[1].frame.content_digest", "D1"},
		{`"canonical_content_hash":""`, "offers[1].frame.canonical_content_hash", "D1"},
		{`"representation":""`, "offers[1].frame.representation", "schema"},
		{`"content_fidelity":""`, "offers[1].frame.content_fidelity", "schema"},
	} {
		body := `{"budget":100,"offers":[{"provider":"p","frame":` + string(b) + `},{"provider":"q","frame":` + with(tc.member) + `}]}`
		err := c.Do(ctx, api.PathCompose, json.RawMessage(body), nil)
		wantError(t, err, 422, api.CodeRuleViolation, tc.field, tc.rule)
		err = c.Do(ctx, api.PathContext, json.RawMessage(`{"offers":[{"provider":"q","frame":`+with(tc.member)+`}]}`), nil)
		wantError(t, err, 422, api.CodeRuleViolation, "offers[0"+tc.field[len("offers[1"):], tc.rule)

		skip := `{"budget":100,"skip_invalid":true,"offers":[{"provider":"p","frame":` + string(b) + `},{"provider":"q","frame":` + with(tc.member) + `}]}`
		var res api.ComposeResponse
		if err := c.Do(ctx, api.PathCompose, json.RawMessage(skip), &res); err != nil {
			t.Fatal(err)
		}
		if len(res.Audit.Entries) != 1 {
			t.Errorf("%s: %d audit entries, want the valid offer", tc.member, len(res.Audit.Entries))
		}
		if len(res.Skipped) != 1 || res.Skipped[0].Index != 1 || string(res.Skipped[0].Rule) != tc.rule || res.Skipped[0].Field != tc.field {
			t.Errorf("%s: skipped %+v", tc.member, res.Skipped)
		}
	}
	// Absent and null members are fine.
	for _, m := range []string{`"valid_from":null`, `"relations":[{"rel":"r","target_uri":"x","display_name":"X"}]`, `"valid_to":"2026-01-01T00:00:00Z"`} {
		body := `{"budget":100,"offers":[{"provider":"q","frame":` + with(m) + `}]}`
		if err := c.Do(ctx, api.PathCompose, json.RawMessage(body), nil); err != nil {
			t.Errorf("%s: %v", m, err)
		}
	}
	// A Go client marks the member with Set; the request carries "" and
	// is refused the same way.
	marked := mkOffers(1, 1, 20)
	marked[0].Frame.Set(frame.MemberValidFrom, "")
	_, err = c.Compose(ctx, &api.ComposeRequest{Offers: marked, Budget: intp(100)})
	wantError(t, err, 422, api.CodeRuleViolation, "offers[0].frame.valid_from", "F4")
}

// TestComposeContentPresence: P1 and P3 read whether content was sent, not
// whether it is empty, on the fast decoder's path and the slow one alike: a
// full frame with no content member is refused (P1), one with "content": ""
// is accepted, and a reference frame carrying "content": "" is refused (P3).
func TestComposeContentPresence(t *testing.T) {
	c, _ := newTestClient(t, nil)
	ctx := context.Background()
	const head = `{"id":"f","kind":"doc","title":"t","score":0.5,"token_cost":0,"citation_label":"c"`
	const ref = `,"representation":"reference","canonical_content_hash":"sha256:` +
		"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa" + `","content_ref":{"provider_id":"p","uri":"u"}`
	for _, tc := range []struct{ frame, rule string }{
		{head + `}`, "P1"},
		{head + `,"content":null}`, "P1"},
		{head + ref + `,"content":""}`, "P3"},
	} {
		body := `{"budget":100,"offers":[{"provider":"q","frame":` + tc.frame + `}]}`
		err := c.Do(ctx, api.PathCompose, json.RawMessage(body), nil)
		wantError(t, err, 422, api.CodeRuleViolation, "offers[0].frame.content", tc.rule)
	}
	body := `{"budget":100,"offers":[{"provider":"q","frame":` + head + `,"content":""}}]}`
	if err := c.Do(ctx, api.PathCompose, json.RawMessage(body), nil); err != nil {
		t.Errorf("a full frame with empty content: %v", err)
	}
}
