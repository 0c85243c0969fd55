// Package tooltest finds the external tools a few of ctxkit's tests run
// beside Go. A test that needs one is skipped where the tool is missing, so
// `go test ./...` needs only Go, except under CI (CI true, as .ci/run sets
// it, having installed the tools), where a missing tool fails the test. It
// also asks the go command what a package links, for the tests that keep a
// package from depending on what it must not.
package tooltest

import (
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
)

// Missing skips t, or fails it under CI, because tool is not installed.
func Missing(t testing.TB, tool string, err error) {
	t.Helper()
	if ci, _ := strconv.ParseBool(os.Getenv("CI")); ci {
		t.Fatalf("%s, which .ci/run installs, is missing: %v", tool, err)
	}
	t.Skipf("%s is not installed (.ci/run installs it and runs this test; CI=true fails instead of skipping): %v", tool, err)
}

// Python returns the interpreter python3 resolves to, resolved once per
// call so a version manager's shim costs one shell start rather than one
// per run of a script.
func Python(t testing.TB) string {
	t.Helper()
	if _, err := exec.LookPath("python3"); err != nil {
		Missing(t, "python3", err)
	}
	out, err := exec.Command("python3", "-c", "import sys; print(sys.executable)").Output()
	if err != nil {
		t.Fatalf("python3: %v", err)
	}
	return strings.TrimSpace(string(out))
}

// Deps returns the import paths of the package in the working directory
// (a test's own package) and of every package it links, as
// `go list -deps .` prints them.
func Deps(t testing.TB) []string {
	t.Helper()
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	return strings.Fields(string(out))
}
