package doctest

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/ctxkit/ctxkit/host"
	"github.com/ctxkit/ctxkit/host/files"
	"github.com/ctxkit/ctxkit/internal/httpcall"
	"github.com/ctxkit/ctxkit/server"
	"github.com/ctxkit/ctxkit/server/api"
	"go.yaml.in/yaml/v3"
)

func loadSpec(t *testing.T) map[string]any {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot, "docs", "openapi.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var spec map[string]any
	if err := yaml.Unmarshal(b, &spec); err != nil {
		t.Fatalf("openapi.yaml: %v", err)
	}
	if v, _ := spec["openapi"].(string); !strings.HasPrefix(v, "3.1") {
		t.Fatalf("openapi version %q, want 3.1.x", v)
	}
	return spec
}

// asJSON turns a YAML-decoded value into what encoding/json would decode
// from the same JSON (float64 numbers, map[string]any objects).
func asJSON(t *testing.T, v any) any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("example is not JSON-encodable: %v", err)
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func m(v any) map[string]any { x, _ := v.(map[string]any); return x }

// sameShape reports where got lacks a member of want or has another JSON
// type; values themselves are not compared.
func sameShape(want, got any, path string) error {
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return fmt.Errorf("%s: want an object, got %T", path, got)
		}
		for k, wv := range w {
			gv, ok := g[k]
			if !ok {
				return fmt.Errorf("%s.%s: missing", path, k)
			}
			if err := sameShape(wv, gv, path+"."+k); err != nil {
				return err
			}
		}
	case []any:
		g, ok := got.([]any)
		if !ok {
			return fmt.Errorf("%s: want an array, got %T", path, got)
		}
		if len(w) > 0 {
			if len(g) == 0 {
				return fmt.Errorf("%s: empty", path)
			}
			return sameShape(w[0], g[0], path+"[0]")
		}
	default:
		if reflect.TypeOf(want) != reflect.TypeOf(got) {
			return fmt.Errorf("%s: want %T, got %T", path, want, got)
		}
	}
	return nil
}

// testHandler serves the routes with a files provider over a directory
// holding fences.md, the setting of the /v1/query example.
func testHandler(t *testing.T) http.Handler {
	t.Helper()
	dir := t.TempDir()
	docs := filepath.Join(dir, "docs")
	if err := os.MkdirAll(docs, 0o755); err != nil {
		t.Fatal(err)
	}
	text := "# Fences\n\nEvery frame renders inside one fence;\nuntrusted content cannot close it.\n"
	if err := os.WriteFile(filepath.Join(docs, "fences.md"), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	ix, err := files.Build(context.Background(), docs, nil)
	if err != nil {
		t.Fatal(err)
	}
	h := host.New(nil)
	t.Cleanup(func() { h.Close(context.Background()) })
	if err := h.AddInProcess("docs", files.New(ix)); err != nil {
		t.Fatal(err)
	}
	return server.New(&server.Options{Query: h})
}

func TestOpenAPICoversEveryRoute(t *testing.T) {
	paths := m(loadSpec(t)["paths"])
	routes := map[string]string{
		api.PathCompose: "post", api.PathContext: "post", api.PathAssess: "post", api.PathPrompt: "post",
		api.PathQuery: "post", api.PathHealth: "get", api.PathMetrics: "get", api.PathUsage: "get",
	}
	h := server.New(nil)
	for p, method := range routes {
		// A route is served when it does not answer 404.
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(strings.ToUpper(method), p, strings.NewReader("{}")))
		served := rec.Code != http.StatusNotFound
		op := m(m(paths[p])[method])
		if served != (op != nil) {
			t.Errorf("%s %s: served %v, documented %v", method, p, served, op != nil)
		}
	}
	for p := range paths {
		if _, ok := routes[p]; !ok {
			t.Errorf("openapi.yaml documents %s, which the handler does not serve", p)
		}
	}
}

// TestOpenAPIExamples sends every request example to the handler and checks
// the answer against the response example of the same name.
func TestOpenAPIExamples(t *testing.T) {
	spec := loadSpec(t)
	ts := httptest.NewServer(testHandler(t))
	defer ts.Close()
	paths := m(spec["paths"])
	names := make([]string, 0, len(paths))
	for p := range paths {
		names = append(names, p)
	}
	sort.Strings(names)
	checked := 0
	for _, p := range names {
		for method, opv := range m(paths[p]) {
			op := m(opv)
			// Response examples by name: status, media type, value, match mode.
			type respEx struct {
				status int
				media  string
				value  any
				schema map[string]any
				shape  bool
				used   bool
			}
			resp := map[string]*respEx{}
			for st, rv := range m(op["responses"]) {
				var status int
				fmt.Sscan(st, &status)
				for media, cv := range m(m(rv)["content"]) {
					for name, ev := range m(m(cv)["examples"]) {
						e := m(ev)
						if _, dup := resp[name]; dup {
							t.Fatalf("%s %s: response example %q appears twice", method, p, name)
						}
						resp[name] = &respEx{status: status, media: media, value: e["value"], schema: m(m(cv)["schema"]), shape: e["x-ctxkit-match"] == "shape"}
					}
				}
			}
			var reqs map[string]any
			var reqSchema map[string]any
			if rb := m(op["requestBody"]); rb != nil {
				reqs = m(m(m(rb["content"])["application/json"])["examples"])
				reqSchema = m(m(m(rb["content"])["application/json"])["schema"])
			}
			if method == "get" {
				for name, want := range resp {
					t.Run(p+"/"+name, func(t *testing.T) {
						status, ct, body := call(t, http.MethodGet, ts.URL+p, nil)
						checkAnswer(t, want.status, want.media, want.value, want.shape, status, ct, body)
					})
					want.used = true
					checked++
				}
				continue
			}
			if len(reqs) == 0 {
				t.Errorf("%s %s has no request examples", method, p)
			}
			for name, ev := range reqs {
				want, ok := resp[name]
				if !ok {
					t.Errorf("%s %s: request example %q has no response example of the same name", method, p, name)
					continue
				}
				want.used = true
				reqBody, err := json.Marshal(m(ev)["value"])
				if err != nil {
					t.Fatal(err)
				}
				t.Run(p+"/"+name, func(t *testing.T) {
					// Examples of valid input conform to the request schema.
					if want.status < 400 {
						if err := validate(spec, reqSchema, asJSON(t, m(ev)["value"]), "request"); err != nil {
							t.Fatalf("request example does not match its schema: %v", err)
						}
					}
					status, ct, body := call(t, strings.ToUpper(method), ts.URL+p, reqBody)
					checkAnswer(t, want.status, want.media, want.value, want.shape, status, ct, body)
					// The real answer conforms to the documented schema.
					var got any
					if err := json.Unmarshal(body, &got); err != nil {
						t.Fatal(err)
					}
					if err := validate(spec, want.schema, got, "answer"); err != nil {
						t.Fatalf("answer does not match the schema of %d: %v\n%s", want.status, err, body)
					}
				})
				checked++
			}
			for name, r := range resp {
				if !r.used {
					t.Errorf("%s %s: response example %q is never produced by a request example", method, p, name)
				}
			}
		}
	}
	if checked < 10 {
		t.Fatalf("only %d examples checked", checked)
	}
}

func call(t *testing.T, method, url string, body []byte) (int, string, []byte) {
	t.Helper()
	resp, b := httpcall.Do(t, method, url, body)
	return resp.StatusCode, resp.Header.Get("Content-Type"), b
}

func checkAnswer(t *testing.T, wantStatus int, media string, want any, shape bool, status int, ct string, body []byte) {
	t.Helper()
	if status != wantStatus {
		t.Fatalf("status %d, want %d: %s", status, wantStatus, body)
	}
	if !strings.HasPrefix(ct, media) {
		t.Fatalf("content type %q, want %s", ct, media)
	}
	if media == "text/plain" {
		for _, l := range strings.Split(strings.TrimSpace(want.(string)), "\n") {
			if !strings.Contains(string(body), l) {
				t.Fatalf("answer lacks %q:\n%s", l, body)
			}
		}
		return
	}
	var got any
	if err := json.Unmarshal(body, &got); err != nil {
		t.Fatalf("answer is not JSON: %v: %s", err, body)
	}
	w := asJSON(t, want)
	switch {
	case shape:
		if err := sameShape(w, got, "$"); err != nil {
			t.Fatalf("answer does not have the example's shape: %v\n%s", err, body)
		}
	case status >= 400:
		// Errors: code, rule and field exactly; the message is prose.
		we, ge := m(m(w)["error"]), m(m(got)["error"])
		for _, k := range []string{"code", "rule", "field"} {
			if we[k] != ge[k] {
				t.Fatalf("error %s = %v, example says %v: %s", k, ge[k], we[k], body)
			}
		}
		if s, _ := ge["message"].(string); s == "" {
			t.Fatalf("error without a message: %s", body)
		}
	default:
		if !reflect.DeepEqual(w, got) {
			wb, _ := json.MarshalIndent(w, "", "  ")
			gb, _ := json.MarshalIndent(got, "", "  ")
			t.Fatalf("answer differs from the example:\n--- example\n%s\n--- answer\n%s", wb, gb)
		}
	}
}
