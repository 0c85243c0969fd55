package main

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// echo answers with the method, the content type and the body it received.
func echo(t *testing.T) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		if r.URL.Path == "/missing" {
			w.WriteHeader(http.StatusNotFound)
		}
		io.WriteString(w, r.Method+" "+r.Header.Get("Content-Type")+" "+string(b))
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestCurlAsTheDocsUseIt(t *testing.T) {
	srv := echo(t)
	file := filepath.Join(t.TempDir(), "body.json")
	if err := os.WriteFile(file, []byte("{\r\n  \"a\": 1\n}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-s", srv.URL}, "GET  "},
		{[]string{"-s", "-H", "Content-Type: application/json", "--data", `{"x": 1}`, srv.URL}, `POST application/json {"x": 1}`},
		{[]string{"-s", "--data", "@" + file, srv.URL}, `POST application/x-www-form-urlencoded {  "a": 1}`},
		{[]string{"-s", srv.URL + "/missing", "-d", "q"}, "POST application/x-www-form-urlencoded q"},
	} {
		var out, errb bytes.Buffer
		if code := run(tc.args, &out, &errb); code != 0 || out.String() != tc.want {
			t.Errorf("curl %q: exit %d, stdout %q, stderr %q; want %q", tc.args, code, out.String(), errb.String(), tc.want)
		}
	}
}

func TestCurlRefusesWhatItDoesNotDo(t *testing.T) {
	for _, args := range [][]string{{"-f", "http://x"}, {"-X", "PUT", "http://x"}, {"-H", "novalue", "http://x"}, {"-s"}, {"http://a", "http://b"}, {"--data"}} {
		var out, errb bytes.Buffer
		if code := run(args, &out, &errb); code != 2 || !strings.Contains(errb.String(), "curl (doctest):") {
			t.Errorf("curl %q: exit %d, stderr %q; want exit 2 naming the problem", args, code, errb.String())
		}
	}
}
