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
	_, code, ok := strings.Cut(section, "```go\n")
	if !ok {
		t.Fatal("the section has no Go code block")
	}
	code, _, ok = strings.Cut(code, "```")
	if !ok {
		t.Fatal("the Go code block is not closed")
	}

	example, err := os.ReadFile("example_test.go")
	if err != nil {
		t.Fatal(err)
	}
	_, body, ok := strings.Cut(string(example), "\t// README begin\n")
	if !ok {
		t.Fatal("example_test.go has no README begin marker")
	}
	body, _, ok = strings.Cut(body, "\t// README end\n")
	if !ok {
		t.Fatal("example_test.go has no README end marker")
	}
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
