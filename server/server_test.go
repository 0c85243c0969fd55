package server

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/ctxkit/ctxkit/internal/tooltest"
	"github.com/ctxkit/ctxkit/server/api"
)

// echoReq is a request shape used to exercise the decoding path directly.
type echoReq struct {
	Name   string   `json:"name"`
	Budget uint32   `json:"budget"`
	Tags   []string `json:"tags"`
	Nested any      `json:"nested"`
}

func echoHandler(h *Handler) func(http.ResponseWriter, *http.Request) {
	return jsonHandler(h, func(_ context.Context, r *echoReq) (any, error) { return r, nil })
}

func do(t *testing.T, hf http.HandlerFunc, method, path, ct string, body io.Reader) (*httptest.ResponseRecorder, *api.Error) {
	t.Helper()
	req := httptest.NewRequest(method, path, body)
	if ct != "" {
		req.Header.Set("Content-Type", ct)
	}
	rec := httptest.NewRecorder()
	hf(rec, req)
	if rec.Code < 300 {
		return rec, nil
	}
	return rec, decodeErrorBody(t, rec)
}

func decodeErrorBody(t *testing.T, rec *httptest.ResponseRecorder) *api.Error {
	t.Helper()
	if ct := rec.Header().Get("Content-Type"); ct != "application/json" {
		t.Fatalf("error content type %q, want application/json", ct)
	}
	var env struct {
		Error *api.Error `json:"error"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &env); err != nil || env.Error == nil {
		t.Fatalf("error body %q is not the envelope: %v", rec.Body.String(), err)
	}
	if env.Error.Code == "" || env.Error.Message == "" {
		t.Fatalf("error envelope lacks code or message: %s", rec.Body.String())
	}
	return env.Error
}

func TestDecodeErrors(t *testing.T) {
	h := New(&Options{MaxBodyBytes: 1024})
	deep := strings.Repeat("[", 20000) + strings.Repeat("]", 20000)
	cases := []struct {
		name, ct, body string
		status         int
		code, field    string
	}{
		{"ok", "application/json", `{"name":"a","budget":3}`, 200, "", ""},
		{"ok with charset", "application/json; charset=UTF-8", `{"name":"a"}`, 200, "", ""},
		{"unknown member refused", "application/json", `{"name":"a","zzz":{"q":1}}`, 400, api.CodeBadRequest, "zzz"},
		{"no content type", "", `{}`, 415, api.CodeUnsupportedMedia, ""},
		{"form content type", "application/x-www-form-urlencoded", `{}`, 415, api.CodeUnsupportedMedia, ""},
		{"latin1", "application/json; charset=latin1", `{}`, 415, api.CodeUnsupportedMedia, ""},
		{"garbled content type", "application/json; ;;", `{}`, 415, api.CodeUnsupportedMedia, ""},
		{"empty body", "application/json", ``, 400, api.CodeBadRequest, ""},
		{"truncated", "application/json", `{"name":"a"`, 400, api.CodeBadRequest, ""},
		{"syntax", "application/json", `{"name":}`, 400, api.CodeBadRequest, ""},
		{"trailing data", "application/json", `{"name":"a"} {}`, 400, api.CodeBadRequest, ""},
		{"wrong type names the member", "application/json", `{"budget":"ten"}`, 400, api.CodeBadRequest, "budget"},
		{"negative u32", "application/json", `{"budget":-1}`, 400, api.CodeBadRequest, "budget"},
		{"u32 overflow", "application/json", `{"budget":4294967296}`, 400, api.CodeBadRequest, "budget"},
		{"invalid utf-8", "application/json", "{\"name\":\"a\xff\xfe\"}", 400, api.CodeInvalidUTF8, ""},
		{"deep nesting", "application/json", `{"nested":` + deep + `}`, 413, api.CodeBodyTooLarge, ""},
		{"over the limit", "application/json", `{"name":"` + strings.Repeat("x", 2000) + `"}`, 413, api.CodeBodyTooLarge, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rec, e := do(t, echoHandler(h), "POST", "/x", c.ct, strings.NewReader(c.body))
			if rec.Code != c.status {
				t.Fatalf("status %d, want %d: %s", rec.Code, c.status, rec.Body)
			}
			if e == nil {
				return
			}
			if e.Code != c.code || e.Field != c.field {
				t.Fatalf("code %q field %q, want %q %q: %s", e.Code, e.Field, c.code, c.field, rec.Body)
			}
		})
	}
}

func TestDeepNestingWithinTheLimit(t *testing.T) {
	// Within the body limit, encoding/json's depth limit answers 400.
	h := New(nil)
	deep := strings.Repeat("[", 100000) + strings.Repeat("]", 100000)
	rec, e := do(t, echoHandler(h), "POST", "/x", "application/json", strings.NewReader(`{"nested":`+deep+`}`))
	if rec.Code != 400 || e.Code != api.CodeBadRequest || !strings.Contains(e.Message, "depth") {
		t.Fatalf("status %d %+v, want 400 naming the depth", rec.Code, e)
	}
}

func TestBodyLimitWithoutContentLength(t *testing.T) {
	h := New(&Options{MaxBodyBytes: 100})
	src := &countingReader{limit: 1 << 30}
	req := httptest.NewRequest("POST", "/x", src)
	req.ContentLength = -1
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	echoHandler(h)(rec, req)
	if rec.Code != http.StatusRequestEntityTooLarge {
		t.Fatalf("status %d, want 413", rec.Code)
	}
	if src.n > 64<<10 {
		t.Fatalf("read %d bytes of a 1 GiB body with a 100-byte limit", src.n)
	}
}

func TestDeclaredLengthOverLimitReadsNothing(t *testing.T) {
	h := New(&Options{MaxBodyBytes: 100})
	src := &countingReader{limit: 1 << 30}
	req := httptest.NewRequest("POST", "/x", src)
	req.ContentLength = 1 << 30
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	echoHandler(h)(rec, req)
	if rec.Code != http.StatusRequestEntityTooLarge || src.n != 0 {
		t.Fatalf("status %d after reading %d bytes, want 413 after 0", rec.Code, src.n)
	}
}

// countingReader yields limit bytes of JSON-ish filler, counting reads.
type countingReader struct{ n, limit int64 }

func (c *countingReader) Read(p []byte) (int, error) {
	if c.n >= c.limit {
		return 0, io.EOF
	}
	if int64(len(p)) > c.limit-c.n {
		p = p[:c.limit-c.n]
	}
	for i := range p {
		p[i] = ' '
	}
	if c.n == 0 && len(p) > 0 {
		p[0] = '['
	}
	c.n += int64(len(p))
	return len(p), nil
}

func TestRoutingErrors(t *testing.T) {
	h := New(nil)
	rec, e := do(t, h.ServeHTTP, "GET", "/nope", "", nil)
	if rec.Code != 404 || e.Code != api.CodeNotFound {
		t.Fatalf("unknown path: %d %+v", rec.Code, e)
	}
	if rec, _ := do(t, h.ServeHTTP, "HEAD", api.PathHealth, "", nil); rec.Code != 200 {
		t.Fatalf("HEAD /healthz: %d", rec.Code)
	}
	rec, e = do(t, h.ServeHTTP, "POST", api.PathHealth, "application/json", strings.NewReader("{}"))
	if rec.Code != 405 || e.Code != api.CodeMethodNotAllowed || rec.Header().Get("Allow") != "GET" {
		t.Fatalf("wrong method: %d %+v allow %q", rec.Code, e, rec.Header().Get("Allow"))
	}
}

func TestHealthAndDrain(t *testing.T) {
	h := New(nil)
	rec, _ := do(t, h.ServeHTTP, "GET", api.PathHealth, "", nil)
	if rec.Code != 200 || !strings.Contains(rec.Body.String(), `"ok"`) {
		t.Fatalf("healthz: %d %s", rec.Code, rec.Body)
	}
	h.Drain()
	rec = httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", api.PathHealth, nil))
	if rec.Code != 503 || !strings.Contains(rec.Body.String(), `"draining"`) {
		t.Fatalf("healthz while draining: %d %s", rec.Code, rec.Body)
	}
}

func TestPanicIsAnInternalError(t *testing.T) {
	h := New(nil)
	h.routes["/boom"] = route{http.MethodPost, jsonHandler(h, func(context.Context, *echoReq) (any, error) { panic("bug") })}
	rec, e := do(t, h.ServeHTTP, "POST", "/boom", "application/json", strings.NewReader("{}"))
	if rec.Code != 500 || e.Code != api.CodeInternal || strings.Contains(rec.Body.String(), "bug") {
		t.Fatalf("panic: %d %s", rec.Code, rec.Body)
	}
}

func TestTimeoutErrorIs504(t *testing.T) {
	h := New(&Options{Timeout: 20 * time.Millisecond})
	h.routes["/slow"] = route{http.MethodPost, jsonHandler(h, func(ctx context.Context, _ *echoReq) (any, error) {
		<-ctx.Done()
		return nil, ctx.Err()
	})}
	rec, e := do(t, h.ServeHTTP, "POST", "/slow", "application/json", strings.NewReader("{}"))
	if rec.Code != 504 || e.Code != api.CodeTimeout {
		t.Fatalf("slow work: %d %s", rec.Code, rec.Body)
	}
}

func TestResponsesDoNotEscapeHTML(t *testing.T) {
	h := New(nil)
	rec, _ := do(t, echoHandler(h), "POST", "/x", "application/json", strings.NewReader(`{"name":"<frame a=\"&\">"}`))
	if !bytes.Contains(rec.Body.Bytes(), []byte(`<frame a=\"&\">`)) {
		t.Fatalf("body %s escapes HTML", rec.Body)
	}
}

func FuzzDecodeBody(f *testing.F) {
	f.Add([]byte(`{"name":"a","budget":3,"tags":["x"]}`))
	f.Add([]byte(`{"budget":-1}`))
	f.Add([]byte("{\"name\":\"\xff\"}"))
	f.Add([]byte(`[[[[[[[[`))
	f.Add([]byte(`{"nested":{"a":[1,2,{"b":null}]}} `))
	h := New(&Options{MaxBodyBytes: 4096})
	f.Fuzz(func(t *testing.T, body []byte) {
		req := httptest.NewRequest("POST", "/x", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		echoHandler(h)(rec, req)
		switch rec.Code {
		case 200:
			if !json.Valid(rec.Body.Bytes()) {
				t.Fatalf("200 with invalid JSON %q", rec.Body)
			}
		case 400, 413:
			decodeErrorBody(t, rec)
		default:
			t.Fatalf("status %d for body %q", rec.Code, body)
		}
	})
}

// A program mounting the handler links the API, the core and the host's
// session, not the providers a config file can name: the files indexer and
// the MCP bridge are the serve command's (cmd/ctxkit) to link.
func TestHandlerDoesNotLinkTheProviders(t *testing.T) {
	for _, dep := range tooltest.Deps(t) {
		switch {
		case dep == "github.com/ctxkit/ctxkit/host/files", dep == "github.com/ctxkit/ctxkit/mcpbridge",
			strings.HasPrefix(dep, "github.com/modelcontextprotocol/"):
			t.Errorf("server depends on %s", dep)
		}
	}
}

// TestOptionsWithDefaults: the zero Options get the documented defaults
// (`ctxkit serve --help` prints them from here), and set fields are kept.
func TestOptionsWithDefaults(t *testing.T) {
	d := Options{}.WithDefaults()
	if d.MaxBodyBytes != 8<<20 || d.MaxBodyBytesInFlight != 128<<20 || d.MaxFrames != 5000 ||
		d.Timeout != 30*time.Second || d.ShutdownTimeout != 30*time.Second || d.DrainDelay != time.Second || d.MaxConnections != 1024 {
		t.Fatalf("defaults %+v", d)
	}
	set := Options{MaxBodyBytes: 1, MaxBodyBytesInFlight: 2, MaxFrames: 3, Timeout: 4, ShutdownTimeout: 5, DrainDelay: -1, MaxConnections: -1}
	if got := set.WithDefaults(); got.MaxBodyBytes != 1 || got.MaxBodyBytesInFlight != 2 || got.MaxFrames != 3 ||
		got.Timeout != 4 || got.ShutdownTimeout != 5 || got.DrainDelay != -1 || got.MaxConnections != -1 {
		t.Fatalf("set fields changed: %+v", got)
	}
}
