package conformance

import (
	"context"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/ctxkit/ctxkit/host/files"
	"github.com/ctxkit/ctxkit/host/serve"
)

// TestFilesProviderPassesOverHTTP: ctxkit's built-in files provider, served
// over HTTP on the project's docs, fails no provider check. (Over stdio it
// is certified through the CLI in cmd/ctxkit.)
func TestFilesProviderPassesOverHTTP(t *testing.T) {
	ix, err := files.Build(context.Background(), "../docs", nil)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(serve.HTTP(files.New(ix)))
	defer srv.Close()
	rep, err := RunProvider(context.Background(), ProviderTarget{URL: srv.URL}, &ProviderOptions{Timeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range rep.Checks {
		if c.Status == Fail {
			t.Errorf("%s: %s", c.Name, c.Evidence)
		}
	}
	for _, name := range []string{checkFrameValidity, checkBudgetHonesty, checkVerifyHonesty, checkProvenanceConsistency} {
		if c, _ := rep.Check(name); c.Status != Pass {
			t.Errorf("%s is %s, want pass (the docs give it frames to judge): %s", name, c.Status, c.Evidence)
		}
	}
}
