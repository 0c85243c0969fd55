package prompt

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The README's "Quoting untrusted text" example must be the code that
// Example_quotingUntrustedText runs (between its README markers).
func TestReadmeExampleIsTheTestedExample(t *testing.T) {
	root, err := moduleRoot()
	if err != nil {
		t.Fatal(err)
	}
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(readme), "## Quoting untrusted text\n")
	if !ok {
		t.Fatal("README has no \"## Quoting untrusted text\" section")
	}
	code := between(t, section, "```go\n", "```", "the section's Go code block")

	example, err := os.ReadFile("example_test.go")
	if err != nil {
		t.Fatal(err)
	}
	body := between(t, string(example), "\t// README begin\n", "\t// README end\n", "example_test.go's README markers")
	var lines []string
	for _, line := range strings.SplitAfter(body, "\n") {
		lines = append(lines, strings.TrimPrefix(line, "\t"))
	}
	if got := strings.Join(lines, ""); got != code {
		t.Errorf("README example and Example_quotingUntrustedText differ.\nREADME:\n%s\nexample:\n%s", code, got)
	}
	if n := strings.Count(strings.TrimSpace(code), "\n") + 1; n > 14 {
		t.Errorf("the README example has %d lines; keep it short", n)
	}
}

// between returns the text of s after the first open and before the close
// that follows it, failing t, which names the span as what, when either is
// missing.
func between(t *testing.T, s, open, close, what string) string {
	t.Helper()
	_, rest, ok := strings.Cut(s, open)
	if !ok {
		t.Fatalf("%s: no %q", what, open)
	}
	rest, _, ok = strings.Cut(rest, close)
	if !ok {
		t.Fatalf("%s: %q is not closed by %q", what, open, close)
	}
	return rest
}
