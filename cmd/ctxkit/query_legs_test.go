package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// writeDocs writes files (name → text) into a directory "docs" of a new
// temporary directory and returns its path.
func writeDocs(t *testing.T, files map[string]string) string {
	t.Helper()
	docs := filepath.Join(t.TempDir(), "docs")
	if err := os.Mkdir(docs, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(docs, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return docs
}

// retryDocs is a directory with one document on retries.
func retryDocs(t *testing.T) string {
	return writeDocs(t, map[string]string{"retry.md": "# Retry\n\nRetry at most three times.\n"})
}

// TestQueryMissingCommandFailsItsLeg: a --provider whose command does not
// exist is one failed leg of the audit, with its typed reason, while the
// other providers are served; the exit code is 1, as documented for a
// provider that could not be started.
func TestQueryMissingCommandFailsItsLeg(t *testing.T) {
	dir := retryDocs(t)
	code, out, errs := runCLI(t, "", "query", "--goal", "how often to retry", "--provider", "ghost=stdio:/no/such/cmd --flag", dir)
	if code != exitFailed {
		t.Fatalf("exit %d, want 1\n%s", code, errs)
	}
	if !strings.Contains(out, "Retry at most three times.") {
		t.Errorf("the files provider was not served:\n%s", out)
	}
	var leg string
	for _, line := range strings.Split(errs, "\n") {
		if strings.HasPrefix(line, "ghost ") {
			leg = line
		}
	}
	if !strings.Contains(leg, "not_started") || !strings.Contains(errs, "could not be started") || !strings.Contains(errs, "/no/such/cmd") {
		t.Errorf("audit has no not_started leg for ghost naming the command:\n%s", errs)
	}
	code, out, _ = runCLI(t, "", "query", "--goal", "how often to retry", "--format", "json", "--provider", "ghost=stdio:/no/such/cmd", dir)
	if code != exitFailed || !strings.Contains(out, `"status": "not_started"`) || !strings.Contains(out, "Retry at most three times.") {
		t.Errorf("json: exit %d\n%s", code, out)
	}
}

// TestQueryTimeoutBoundsHandshake: --timeout also bounds a provider that
// never answers its handshake.
func TestQueryTimeoutBoundsHandshake(t *testing.T) {
	dir := retryDocs(t)
	start := time.Now()
	code, out, errs := runCLI(t, "", "query", "--goal", "how often to retry", "--timeout", "500ms", "--provider", "mute=stdio:sleep 30", dir)
	if took := time.Since(start); took > 5*time.Second {
		t.Fatalf("query took %v with --timeout 500ms", took)
	}
	if code != exitFailed || !strings.Contains(out, "Retry at most three times.") {
		t.Fatalf("exit %d\n%s\n%s", code, out, errs)
	}
	if !strings.Contains(errs, "timeout") || !strings.Contains(errs, "handshake") {
		t.Errorf("audit does not show the handshake timeout:\n%s", errs)
	}
}
