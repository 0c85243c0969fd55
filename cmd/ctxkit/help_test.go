package main

import (
	"regexp"
	"strings"
	"testing"
)

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
	// A negative limit is refused by name rather than quietly read as
	// "the default".
	for _, f := range []string{"max-body", "max-frames", "timeout", "max-body-in-flight", "max-conns", "shutdown-timeout"} {
		v := "-1"
		if strings.HasSuffix(f, "timeout") {
			v = "-1s"
		}
		if code, _, errs := runCLI(t, "", "serve", "--addr", "127.0.0.1:0", "--"+f, v); code != 2 || !strings.Contains(errs, "--"+f+" must not be negative") {
			t.Errorf("serve --%s %s: %d %q", f, v, code, errs)
		}
	}
}

// TestEveryCommandHelp holds every command to one help convention:
// `ctxkit CMD --help` and `ctxkit help CMD` print the same text on stdout
// (nothing on stderr) and exit 0; the text starts with the usage line,
// shows examples and documents the exit codes; an unknown flag exits 2
// with a message on stderr and nothing on stdout.
func TestEveryCommandHelp(t *testing.T) {
	examples := regexp.MustCompile(`(?mi)^examples?:`)
	exits := regexp.MustCompile(`(?i)exit (codes|status)`)
	for _, c := range commands() {
		t.Run(c.name, func(t *testing.T) {
			code, out, errs := runCLI(t, "", c.name, "--help")
			if code != 0 || errs != "" {
				t.Fatalf("--help: exit %d, stderr %q", code, errs)
			}
			if !strings.HasPrefix(out, "usage: ctxkit "+c.name) {
				t.Errorf("--help does not start with %q:\n%s", "usage: ctxkit "+c.name, out)
			}
			if !examples.MatchString(out) {
				t.Errorf("--help has no Examples: section:\n%s", out)
			}
			if !exits.MatchString(out) {
				t.Errorf("--help does not document the exit codes:\n%s", out)
			}
			code2, out2, _ := runCLI(t, "", "help", c.name)
			if code2 != 0 || out2 != out {
				t.Errorf("ctxkit help %s differs from %s --help", c.name, c.name)
			}
			code, out, errs = runCLI(t, "", c.name, "--no-such-flag")
			if code != 2 || out != "" || errs == "" {
				t.Errorf("--no-such-flag: exit %d, stdout %q, stderr %q; want 2, nothing, a message", code, out, errs)
			}
		})
	}
}

func TestValidateFormatFlag(t *testing.T) {
	in := "../../internal/fixtures/cgp/context-frame.valid.json"
	_, want, _ := runCLI(t, "", "validate", "--json", in)
	for _, args := range [][]string{{"--format", "json"}, {"--format=json"}} {
		code, got, errs := runCLI(t, "", append([]string{"validate"}, append(args, in)...)...)
		if code != 0 || got != want || want == "" {
			t.Fatalf("%v: exit %d, %q (%s); want the --json report", args, code, got, errs)
		}
	}
	_, text, _ := runCLI(t, "", "validate", in)
	if code, got, _ := runCLI(t, "", "validate", "--json", "--format", "text", in); code != 0 || got != text {
		t.Fatalf("--format text after --json: %d %q, want %q", code, got, text)
	}
	if code, _, errs := runCLI(t, "", "validate", "--format", "yaml", in); code != 2 || !strings.Contains(errs, "text or json") {
		t.Fatalf("--format yaml: %d %q", code, errs)
	}
}
