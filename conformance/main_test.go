package conformance

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// fixtureBinary is the ctxkit command built once for this test run, without
// the race detector whatever the test binary uses: the suites start it (as
// `ctxkit fixture-provider`) a few hundred times, and a race-instrumented
// child costs about a second of start-up on a busy machine.
var fixtureBinary string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "ctxkit-conformance-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fixtureBinary = filepath.Join(dir, "ctxkit")
	build := exec.Command("go", "build", "-o", fixtureBinary, "github.com/ctxkit/ctxkit/cmd/ctxkit")
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "building ctxkit for the fixture provider: %v\n%s", err, out)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// fixtureCommand is the command line that starts the fixture provider.
func fixtureCommand(args ...string) []string {
	return append([]string{fixtureBinary, "fixture-provider"}, args...)
}
