package server

import (
	"encoding/json"
	"reflect"
	"testing"
	"unicode/utf8"

	"github.com/ctxkit/ctxkit/compose"
	"github.com/ctxkit/ctxkit/internal/loadgen"
	"github.com/ctxkit/ctxkit/server/api"
)

// slowDecode decodes body the way the handler did before the fast decoder:
// encoding/json into b, then the offer conversion of its raw offers into
// *dst. It is false when either refuses the body.
func slowDecode(body []byte, b any, raw *[]wireOffer, dst *[]compose.Offer) bool {
	if json.Unmarshal(body, b) != nil {
		return false
	}
	offers, e := offersFrom(*raw)
	if e != nil {
		return false
	}
	*dst = offers
	return true
}

// checkFast fails t unless the fast decoder either declines body, leaving
// the body zero, or decodes exactly the request (req picks it out of the
// body) that encoding/json decodes. It reports whether the fast decoder
// accepted.
func checkFast[B any, R any](t *testing.T, body []byte, fastDecode, slowDecode func(*B, []byte) bool, req func(*B) R) bool {
	t.Helper()
	var fast, slow, zero B
	if !fastDecode(&fast, body) {
		if !reflect.DeepEqual(fast, zero) {
			t.Fatalf("declined but left %+v; input %q", fast, body)
		}
		return false
	}
	if !slowDecode(&slow, body) {
		t.Fatalf("fast decoder accepted what encoding/json refuses: %q", body)
	}
	if f, s := req(&fast), req(&slow); !reflect.DeepEqual(f, s) {
		t.Fatalf("decoders differ on %q:\nfast %+v\nslow %+v", body, f, s)
	}
	return true
}

func checkFastCompose(t *testing.T, body []byte) bool {
	t.Helper()
	return checkFast(t, body, (*composeBody).decodeFast,
		func(b *composeBody, body []byte) bool {
			return slowDecode(body, b, &b.Offers, &b.ComposeRequest.Offers)
		},
		func(b *composeBody) api.ComposeRequest { return b.ComposeRequest })
}

func checkFastContext(t *testing.T, body []byte) bool {
	t.Helper()
	return checkFast(t, body, (*contextBody).decodeFast,
		func(b *contextBody, body []byte) bool {
			return slowDecode(body, b, &b.Offers, &b.ContextRequest.Offers)
		},
		func(b *contextBody) api.ContextRequest { return b.ContextRequest })
}

// commonBodies are request shapes clients send: the load test's, the test
// bodies with every strategy and escapes, a Python json.dumps body (every
// non-ASCII character escaped, emoji as surrogate pairs), whitespace, and
// the cache-stable members.
func commonBodies(t testing.TB) [][]byte {
	bodies := [][]byte{loadgen.ComposeBody(20, 1024), loadgen.ComposeBody(3, 10)}
	bodies = append(bodies, encodeSeeds(t)...)
	bodies = append(bodies,
		[]byte(`{"offers": [{"provider": "p", "frame": {"id": "a", "kind": "doc", "title": "caf\u00e9 \ud83d\ude00", "content": "line\nnext \"q\" \\ \/ \t", "score": 0.5, "token_cost": 6, "citation_label": "a \u2028"}}], "budget": 100}`),
		[]byte(" {\n\t\"budget\" : 10 ,\r\n \"offers\" : [ ] } \n"),
		[]byte(`{"offers":[{"frame":{"id":"a","kind":"doc","title":"t","content":"abcd","score":1e-1,"token_cost":1,"canonical_token_cost":9,"uri":"file:///a","valid_from":"2026-01-01T00:00:00Z","provenance":[{"type":"file","uri":"file:///a"}],"relations":[{"rel":"documents","target_uri":"x"}],"embedding":{"fingerprint":"f","vector":[0.5,-1]}},"provider":"p"}],"budget":-0,"placement":"stable-first","previous":{"v":1,"frames":[]},"min_prefix_tokens":-1,"sticky_margin":0.1,"skip_invalid":true,"strategy":"trust-weighted","weights":{"p":3},"default_weight":2,"quota":4,"packer":"first-fit"}`),
	)
	return bodies
}

// TestFastDecoderTakesCommonBodies checks that the bodies clients send take
// the fast path (otherwise the speed-up is lost without a failure) and that
// it decodes them exactly as encoding/json does.
func TestFastDecoderTakesCommonBodies(t *testing.T) {
	for i, body := range commonBodies(t) {
		if !checkFastCompose(t, body) {
			t.Errorf("body %d: the fast decoder declined a common body: %.200s", i, body)
		}
	}
	if !checkFastContext(t, []byte(`{"offers":[{"provider":"p","frame":{"id":"a","kind":"doc","title":"t","score":1,"token_cost":0}}],"skip_invalid":false}`)) {
		t.Error("the fast decoder declined a common context body")
	}
}

// TestFastDecoderDeclines lists shapes the fast decoder leaves to
// encoding/json, so that their meaning (or error) stays encoding/json's.
func TestFastDecoderDeclines(t *testing.T) {
	frame := `{"id":"a","kind":"doc","title":"t","score":1,"token_cost":0}`
	for _, body := range []string{
		``, `null`, `[]`, `{"budget":1}`, `{"offers":null,"budget":1}`,
		`{"offers":[],"budget":1} x`, `{"offers":[],"budget":1,}`, `{"offers":[],"budget":01}`,
		`{"offers":[],"Budget":1}`, `{"offers":[],"budget":1,"extra":true}`, `{"offers":[],"budget":1,"budget":2}`,
		`{"offers":[],"budget":1.5}`, `{"offers":[],"budget":"1"}`, `{"offers":[],"budget":null}`,
		`{"offers":[{"provider":"p"}],"budget":1}`, `{"offers":[{"provider":"p","frame":null}],"budget":1}`,
		`{"offers":[{"provider":"p","frame":{"id":"a","kind":"doc","title":"t","score":1}}],"budget":1}`,
		`{"offers":[{"provider":"p","frame":{"id":"a","kind":"doc","title":null,"score":1,"token_cost":0}}],"budget":1}`,
		`{"offers":[{"provider":"p","frame":{"id":"a","kind":"doc","title":"t","score":1,"token_cost":-1}}],"budget":1}`,
		`{"offers":[{"provider":"p","frame":{"id":"a","kind":"doc","title":"t","score":1e39,"token_cost":0}}],"budget":1}`,
		`{"offers":[{"provider":"p","frame":{"id":"\ud800","kind":"doc","title":"t","score":1,"token_cost":0}}],"budget":1}`,
		`{"offers":[{"provider":"p","frame":{"id":"a","kind":"doc","title":"t","score":1,"token_cost":0,"provenance":[{}]}}],"budget":1}`,
		`{"offers":[{"provider":"p","frame":` + frame + `,"frame":` + frame + `}],"budget":1}`,
		`{"offers":[],"budget":1,"previous":` + deep(66) + `}`, // deeper than cgpjson.Reader walks (64)
		// A timestamp sent as "" is present (rule F4); the slow path marks it.
		`{"offers":[{"provider":"p","frame":{"id":"a","kind":"doc","title":"t","score":1,"token_cost":0,"valid_from":""}}],"budget":1}`,
		`{"offers":[{"provider":"p","frame":{"id":"a","kind":"doc","title":"t","score":1,"token_cost":0,"valid_to":""}}],"budget":1}`,
		`{"offers":[{"provider":"p","frame":{"id":"a","kind":"doc","title":"t","score":1,"token_cost":0,"recorded_at":""}}],"budget":1}`,
		// So is a digest sent as "" (rule D1).
		`{"offers":[{"provider":"p","frame":{"id":"a","kind":"doc","title":"t","content_digest":"","score":1,"token_cost":0}}],"budget":1}`,
		`{"offers":[{"provider":"p","frame":{"id":"a","kind":"doc","title":"t","canonical_content_hash":"","score":1,"token_cost":0}}],"budget":1}`,
		// And an enumeration sent as "" (it names no value).
		`{"offers":[{"provider":"p","frame":{"id":"a","kind":"doc","title":"t","representation":"","score":1,"token_cost":0}}],"budget":1}`,
		`{"offers":[{"provider":"p","frame":{"id":"a","kind":"doc","title":"t","inline_content_requirement":"","score":1,"token_cost":0}}],"budget":1}`,
	} {
		if checkFastCompose(t, []byte(body)) {
			t.Errorf("the fast decoder accepted %q", body)
		}
	}
}

func deep(n int) string {
	b := make([]byte, 0, 2*n)
	for range n {
		b = append(b, '[')
	}
	for range n {
		b = append(b, ']')
	}
	return string(b)
}

// FuzzFastComposeMatchesJSON holds the fast compose decoder to
// encoding/json on any valid UTF-8 body (the handler refuses other bodies
// before decoding).
func FuzzFastComposeMatchesJSON(f *testing.F) {
	for _, b := range commonBodies(f) {
		if len(b) < 4096 { // large seeds make the fuzzer's minimizing slow
			f.Add(b)
		}
	}
	f.Add([]byte(`{"offers":[{"provider":"p","frame":{"id":"a","kind":"doc","title":"t","score":1,"token_cost":0}}],"budget":1,"budget":2}`))
	f.Add([]byte(`{"offers":[{"provider":"p","frame":{"id":"a","kind":"doc","title":"\ud83d\u0041","score":0.25,"token_cost":4294967295}}],"budget":1}`))
	// Provenance members sent as "" are present-and-empty in both decoders.
	f.Add([]byte(`{"offers":[{"provider":"p","frame":{"id":"a","kind":"doc","title":"t","score":1,"token_cost":0,"provenance":[{"type":"file","uri":"","range":"","by":null}]}},{"provider":"q","frame":{"id":"b","kind":"doc","title":"t","score":1,"token_cost":0,"provenance":[{"type":"file","uri":""}]}}],"budget":1}`))
	// Timestamps and a display_name sent as "" are present-and-empty in
	// both decoders (the fast one declines the timestamps).
	f.Add([]byte(`{"offers":[{"provider":"p","frame":{"id":"a","kind":"doc","title":"t","score":1,"token_cost":0,"valid_from":"","valid_to":null,"recorded_at":"","relations":[{"rel":"r","target_uri":"x","display_name":""}]}}],"budget":1}`))
	f.Add([]byte(`{"offers":[{"provider":"p","frame":{"id":"a","kind":"doc","title":"t","score":1,"token_cost":0,"valid_from":"2026-01-01T00:00:00Z","valid_to":""}}],"budget":1}`))
	f.Add([]byte(`{"offers":[{"provider":"p","frame":{"id":"a","kind":"doc","title":"t","content_digest":"","canonical_content_hash":"","score":1,"token_cost":0}}],"budget":1}`))
	f.Add([]byte(`{"offers":[{"provider":"p","frame":{"id":"a","kind":"doc","title":"t","representation":"","content_fidelity":"exact","minimum_content_fidelity":"","score":1,"token_cost":0}}],"budget":1}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		if !utf8.Valid(body) {
			return
		}
		checkFastCompose(t, body)
	})
}

// FuzzFastContextMatchesJSON does the same for the context decoder.
func FuzzFastContextMatchesJSON(f *testing.F) {
	f.Add([]byte(`{"offers":[{"provider":"p","frame":{"id":"a","kind":"doc","title":"t","score":1,"token_cost":0}}],"skip_invalid":true}`))
	f.Add([]byte(`{"offers":[],"skip_invalid":null}`))
	for _, b := range commonBodies(f)[1:4] {
		f.Add(b)
	}
	f.Add([]byte(`{"offers":[{"provider":"p","frame":{"id":"a","kind":"doc","title":"t","score":1,"token_cost":0,"recorded_at":"","relations":[{"rel":"r","target_uri":"x","display_name":""}]}}],"skip_invalid":true}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		if !utf8.Valid(body) {
			return
		}
		checkFastContext(t, body)
	})
}

// TestFastDecoderAllocatesOneFramePerOffer: beyond the offers slice, the
// fast compose decoder allocates each offer's frame and nothing else per
// offer (its strings are substrings of one copy of the body), so a member
// read that moved a value to the heap shows here before it shows in the
// load test.
func TestFastDecoderAllocatesOneFramePerOffer(t *testing.T) {
	allocs := func(n int) float64 {
		body := loadgen.ComposeBody(n, 64)
		return testing.AllocsPerRun(20, func() {
			var b composeBody
			if !b.decodeFast(body) {
				t.Fatal("the fast decoder declined the load test's body")
			}
		})
	}
	small, large := allocs(100), allocs(200)
	if perOffer := (large - small) / 100; perOffer > 1.1 {
		t.Errorf("%.2f allocations per offer (%v for 100 offers, %v for 200), want about 1", perOffer, small, large)
	}
}
