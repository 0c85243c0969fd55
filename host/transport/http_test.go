package transport

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/ctxkit/ctxkit/wire"
)

// TestHTTPExchange: Read returns the response envelope once, a status
// outside 2xx as a *StatusError with its body, an empty body as io.EOF, and
// a body over MaxBody as a *wire.TooLongError; Prepare sees every request.
func TestHTTPExchange(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		switch string(body) {
		case "teapot":
			w.WriteHeader(http.StatusTeapot)
			_, _ = w.Write([]byte(`{"type":"error","code":"internal","message":"short"}`))
		case "empty":
			w.WriteHeader(http.StatusNoContent)
		case "big":
			_, _ = w.Write([]byte(strings.Repeat("x", 65)))
		default:
			_, _ = w.Write([]byte(" " + r.Header.Get("Authorization") + "\n"))
		}
	}))
	defer srv.Close()
	tr := HTTP{URL: srv.URL, MaxBody: 64, Prepare: func(r *http.Request) { r.Header.Set("Authorization", "Bearer t") }}
	ask := func(body string) ([]byte, error) {
		c, _ := tr.Dial(context.Background())
		if err := c.Write(context.Background(), []byte(body)); err != nil {
			t.Fatal(err)
		}
		b, err := c.Read()
		if _, again := c.Read(); !errors.Is(again, io.EOF) {
			t.Errorf("%s: a second Read gave %v, want io.EOF", body, again)
		}
		return b, err
	}
	if b, err := ask("hello"); err != nil || string(b) != "Bearer t" {
		t.Errorf("hello: %q %v", b, err)
	}
	var se *StatusError
	if _, err := ask("teapot"); !errors.As(err, &se) || se.Code != http.StatusTeapot || !strings.Contains(string(se.Body), "short") {
		t.Errorf("teapot: %v", err)
	}
	if _, err := ask("empty"); !errors.Is(err, io.EOF) {
		t.Errorf("empty: %v", err)
	}
	var tl *wire.TooLongError
	if _, err := ask("big"); !errors.As(err, &tl) || tl.Limit != 64 {
		t.Errorf("big: %v", err)
	}
}
