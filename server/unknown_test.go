package server_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/ctxkit/ctxkit/server"
	"github.com/ctxkit/ctxkit/server/api"
)

const okFrame = `{"id":"a","kind":"doc","title":"a","content":"abcd","score":0.5,"token_cost":1,"citation_label":"a"}`

// A misspelt request member used to be ignored, so "placment" composed
// with the default placement and answered 200. Every route now refuses a
// member its request does not define, with 400 naming it; the CGP frames
// inside a request keep ignoring unknown members (U1).
func TestUnknownRequestMembersAreRefused(t *testing.T) {
	ts := httptest.NewServer(server.New(nil))
	defer ts.Close()
	offers := `"offers":[{"provider":"p","frame":` + okFrame + `}]`
	cases := []struct{ path, body, member string }{
		{api.PathCompose, `{` + offers + `,"budget":100,"placment":"canonical"}`, "placment"},
		{api.PathCompose, `{"offers":[{"provider":"p","provder":"q","frame":` + okFrame + `}],"budget":100}`, "provder"},
		{api.PathContext, `{` + offers + `,"skip_invalids":true}`, "skip_invalids"},
		{api.PathAssess, `{"request":{"model":"gpt-4o","messages":[]},"windw":1000}`, "windw"},
		{api.PathPrompt, `{"parts":[{"text":"a"}],"instructions":"x"}`, "instructions"},
		{api.PathPrompt, `{"parts":[{"txt":"a"}]}`, "txt"},
		{api.PathQuery, `{"goal":"g","budgt":100}`, "budgt"},
	}
	for _, c := range cases {
		status, e := post(t, ts.URL+c.path, c.body)
		if status != http.StatusBadRequest || e.Field != c.member || !strings.Contains(e.Message, `"`+c.member+`"`) {
			t.Errorf("%s %s: status %d, error %+v", c.path, c.body, status, e)
		}
	}
	// Members of a frame are CGP's: an unknown one is ignored (U1).
	withExtra := strings.Replace(okFrame, `"id":"a"`, `"id":"a","x_vendor":{"k":1}`, 1)
	for path, tail := range map[string]string{api.PathCompose: `,"budget":100}`, api.PathContext: `}`} {
		status, e := post(t, ts.URL+path, `{"offers":[{"provider":"p","frame":`+withExtra+`}]`+tail)
		if status != http.StatusOK {
			t.Errorf("%s: a frame's unknown member refused: %d %+v", path, status, e)
		}
	}
}

// post posts body and returns the status and the error object of the
// answer (zero when there is none).
func post(t *testing.T, url, body string) (int, api.Error) {
	t.Helper()
	status, b := postRaw(t, url, []byte(body))
	var env struct {
		Error api.Error `json:"error"`
	}
	_ = json.Unmarshal(b, &env)
	return status, env.Error
}
