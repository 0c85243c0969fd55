package frame

import (
	"encoding/json"
	"reflect"
	"slices"
	"testing"
	"unicode/utf8"

	"github.com/ctxkit/ctxkit/internal/cgpjson"
)

// readFast runs ReadJSON over the whole of b, as the service's decoders
// do: a trailing value or byte declines.
func readFast(b []byte) (Frame, bool) {
	var f Frame
	r := cgpjson.NewReader(b)
	ok := f.ReadJSON(r) && r.End()
	return f, ok
}

// checkReadJSON fails t if ReadJSON accepts b and decodes anything other
// than what UnmarshalJSON decodes. It reports whether ReadJSON accepted.
func checkReadJSON(t *testing.T, b []byte) bool {
	t.Helper()
	fast, ok := readFast(b)
	if !ok {
		return false
	}
	var slow Frame
	if err := json.Unmarshal(b, &slow); err != nil {
		t.Fatalf("ReadJSON accepted what UnmarshalJSON refuses (%v): %q", err, b)
	}
	if !reflect.DeepEqual(fast, slow) {
		t.Fatalf("decoders differ on %q:\nfast %+v\nslow %+v", b, fast, slow)
	}
	return true
}

var fastSeeds = []string{
	`{"id":"a","kind":"doc","title":"t","score":1,"token_cost":0}`,
	`{"id":"a","kind":"doc","title":"caf\u00e9 \ud83d\ude00","content":"line\nnext \"q\" \\ \/ \t","score":0.5,"token_cost":6,"citation_label":"a \u2028"}`,
	`{"id":"a","kind":"doc","title":"t","content":"abcd","score":1e-1,"token_cost":1,"canonical_token_cost":9,"uri":"file:///a","valid_from":"2026-01-01T00:00:00Z","provenance":[{"type":"file","uri":""}],"relations":[{"rel":"documents","target_uri":"x","display_name":""}],"embedding":{"fingerprint":"f","vector":[0.5,-1]}}`,
	` { "token_cost" : 4294967295 , "score" : -0 , "title" : "" , "kind" : "x:y" , "id" : "" } `,
}

// TestReadJSONTakesCommonFrames checks that frames as providers send them
// take the fast path and decode as UnmarshalJSON decodes them.
func TestReadJSONTakesCommonFrames(t *testing.T) {
	for _, s := range fastSeeds {
		if !checkReadJSON(t, []byte(s)) {
			t.Errorf("ReadJSON declined a common frame: %s", s)
		}
	}
}

// TestReadJSONDeclines lists frames ReadJSON leaves to UnmarshalJSON, so
// that their meaning (or error) stays UnmarshalJSON's.
func TestReadJSONDeclines(t *testing.T) {
	for _, s := range []string{
		``, `null`, `[]`, `{"id":"a","kind":"doc","title":"t","score":1}`,
		`{"id":"a","kind":"doc","title":null,"score":1,"token_cost":0}`,
		`{"id":"a","kind":"doc","title":"t","score":1,"token_cost":-1}`,
		`{"id":"a","kind":"doc","title":"t","score":1e39,"token_cost":0}`,
		`{"id":"\ud800","kind":"doc","title":"t","score":1,"token_cost":0}`,
		`{"id":"a","id":"b","kind":"doc","title":"t","score":1,"token_cost":0}`,
		`{"ID":"a","kind":"doc","title":"t","score":1,"token_cost":0}`,
		`{"id":"a","kind":"doc","title":"t","score":1,"token_cost":0,"extra":1}`,
		`{"id":"a","kind":"doc","title":"t","score":1,"token_cost":0} x`,
		`{"id":"a","kind":"doc","title":"t","score":1,"token_cost":0,"valid_from":""}`,
		`{"id":"a","kind":"doc","title":"t","score":1,"token_cost":0,"content":""}`,
		`{"id":"a","kind":"doc","title":"t","score":1,"token_cost":0,"representation":""}`,
		`{"id":"a","kind":"doc","title":"t","score":1,"token_cost":0,"provenance":[{}]}`,
	} {
		if checkReadJSON(t, []byte(s)) {
			t.Errorf("ReadJSON accepted %q", s)
		}
	}
}

// FuzzReadJSONMatchesUnmarshal holds the fast frame decoder to
// UnmarshalJSON on any valid UTF-8 input: it declines, or it decodes the
// same frame.
func FuzzReadJSONMatchesUnmarshal(f *testing.F) {
	for _, s := range fastSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if utf8.Valid(b) {
			checkReadJSON(t, b)
		}
	})
}

// TestRequiredFastNamesTheRequiredMembers keeps requiredFast's bits on the
// five required members wherever fastMembers lists them.
func TestRequiredFastNamesTheRequiredMembers(t *testing.T) {
	var got []string
	for k, n := range fastMembers {
		if requiredFast&(1<<k) != 0 {
			got = append(got, n)
		}
	}
	if want := []string{"id", "kind", "title", "score", "token_cost"}; !slices.Equal(got, want) {
		t.Errorf("requiredFast names %q, want %q", got, want)
	}
}
