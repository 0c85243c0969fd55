package main

import (
	"regexp"
	"strings"
	"testing"
)

func TestCommandNamesAreUnique(t *testing.T) {
	seen := map[string]bool{}
	for _, c := range commands() {
		if seen[c.name] {
			t.Errorf("command %q is listed twice in commands()", c.name)
		}
		seen[c.name] = true
	}
	_, out, _ := runCLI(t, "", "help")
	for name := range seen {
		if n := len(regexp.MustCompile(`(?m)^  `+regexp.QuoteMeta(name)+`\s`).FindAllString(out, -1)); n != 1 {
			t.Errorf("ctxkit help lists %q %d times:\n%s", name, n, out)
		}
	}
}

func TestServeHelp(t *testing.T) {
	code, out, errs := runCLI(t, "", "serve", "--help")
	if code != 0 || errs != "" || !strings.HasPrefix(out, "usage: ctxkit serve") ||
		!strings.Contains(out, "Examples:") || !strings.Contains(out, "Exit codes:") || !strings.Contains(out, "-addr") {
		t.Fatalf("serve --help: %d %q %q", code, out, errs)
	}
	if code, out, errs := runCLI(t, "", "serve", "--bogus"); code != 2 || out != "" || !strings.Contains(errs, "bogus") {
		t.Fatalf("serve --bogus: %d %q %q", code, out, errs)
	}
	if code, _, errs := runCLI(t, "", "serve", "extra"); code != 2 || !strings.Contains(errs, "unexpected argument") {
		t.Fatalf("serve extra: %d %q", code, errs)
	}
	if code, _, errs := runCLI(t, "", "serve", "--log-format", "xml"); code != 2 || !strings.Contains(errs, "log-format") {
		t.Fatalf("serve --log-format xml: %d %q", code, errs)
	}
	if code, _, errs := runCLI(t, "", "serve", "--config", "/nonexistent/ctxkit.json"); code != 2 || !strings.Contains(errs, "config") {
		t.Fatalf("serve --config missing: %d %q", code, errs)
	}
}
