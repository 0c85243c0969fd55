package server

import (
	"encoding/json"
	"errors"
	"reflect"
	"testing"

	"github.com/ctxkit/ctxkit/frame"
)

// FuzzWireFrameMatchesFrame checks that the handler's one-pass frame
// decoder accepts exactly what frame.Frame.UnmarshalJSON accepts and yields
// the same frame, or the same missing member.
func FuzzWireFrameMatchesFrame(f *testing.F) {
	for _, s := range []string{
		`{"id":"frame:policy:retry","kind":"doc","title":"Retry policy — café","content":"Use \"exponential\" backoff.\nRetry at most 3 times.","uri":"file:///repo/docs/retry%20policy.md","score":0.875,"token_cost":13,"valid_from":"2026-01-01T00:00:00Z","provenance":[{"type":"file","uri":"file:///repo/docs/retry%20policy.md","range":"L10-18","digest":"sha256:4f2dcbad0f03f6e1c61f9e2d76d7392b4590f40dc13f5413c6f501d6f9844938"}],"citation_label":"retry policy.md L10-18","embedding":{"fingerprint":"text-embedding-v1:sha256:67f8e7","vector":[0.125,-0.5,1.0]},"relations":[{"rel":"documents","target_uri":"symbol:///repo/src/retry.rs#RetryPolicy"}]}`,
		`{"id":"frame:minimal","kind":"fact","title":"Minimal","content":"x","score":1.0,"token_cost":1,"citation_label":"m"}`,
		`{"id":"a","kind":"doc","title":"t","score":1}`,
		`{"id":"a","kind":"doc","title":null,"score":1,"token_cost":0}`,
		`{"kind":"doc","title":"t","score":1,"token_cost":0}`,
		`{"id":"a","kind":"doc","title":"t","score":1e40,"token_cost":0}`,
		`{"id":"a","kind":"doc","title":"t","score":0.5,"token_cost":4294967296}`,
		`{"id":"a","kind":"doc","title":"t","score":0.5,"token_cost":-1}`,
		`{"ID":"a","KIND":"doc","Title":"t","Score":0.5,"Token_Cost":2,"extra":[1,{"b":2}]}`,
		`{"id":"a","kind":"x","title":"t","score":0.5,"token_cost":2,"provenance":[{"uri":"u"}]}`,
		`{"id":"a","kind":"x","title":"t","score":0.5,"token_cost":2,"provenance":[{"type":"file","uri":"","range":"","digest":"","method":"","by":""},{"type":"x","method":null}]}`,
		`{"id":"a","kind":"x","title":"t","score":0.5,"token_cost":2,"content_ref":{"provider_id":"p"}}`,
		`{"id":"a","id":"b","kind":"x","title":"t","score":0.5,"token_cost":2}`,
		`{"id":"a","kind":"x","title":"t","score":0.5,"token_cost":2,"valid_from":"","valid_to":"","recorded_at":"","relations":[{"rel":"r","target_uri":"x","display_name":""}]}`,
		`{"id":"a","kind":"x","title":"t","score":0.5,"token_cost":2,"valid_from":"","valid_from":"2026-01-01T00:00:00Z","valid_to":null,"recorded_at":"x","recorded_at":""}`,
		`null`, `[]`, `"frame"`, `{"id":1}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var want frame.Frame
		wantErr := json.Unmarshal(b, &want)
		var w wireFrame
		gotErr := json.Unmarshal(b, &w)
		var got *frame.Frame
		if gotErr == nil {
			var mm *frame.MissingMemberError
			got, mm = w.frame()
			if mm != nil {
				gotErr = mm
			}
		}
		if (wantErr == nil) != (gotErr == nil) {
			t.Fatalf("frame.Frame: %v; wireFrame: %v; input %q", wantErr, gotErr, b)
		}
		if wantErr != nil {
			var a, c *frame.MissingMemberError
			if errors.As(wantErr, &a) != errors.As(gotErr, &c) || (a != nil && *a != *c) {
				t.Fatalf("different errors: %v vs %v; input %q", wantErr, gotErr, b)
			}
			return
		}
		if string(b) == "null" { // both leave the value alone; the handler treats a null frame as missing
			return
		}
		if !reflect.DeepEqual(&want, got) {
			t.Fatalf("decoded frames differ:\n%#v\n%#v\ninput %q", want, *got, b)
		}
	})
}
