// Package httpcall is the one request-and-read step that ctxkit's HTTP
// tests share: send a request to a test server, read its whole answer and
// fail the test if either step fails, so each test states only what it
// sends and what it expects back.
package httpcall

import (
	"bytes"
	"io"
	"net/http"
	"testing"
)

// Do sends method to url with http.DefaultClient and returns the response
// with its body already read and closed. A non-nil body goes as
// application/json. A request that cannot be made, sent or read fails t.
func Do(t testing.TB, method, url string, body []byte) (*http.Response, []byte) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		t.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, b
}
