package conformance

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"os"
	"testing"
)

// TestMain lets the test binary stand in for `ctxkit fixture-provider`: when
// re-executed with "fixture-provider" as its first argument it serves the
// fixture provider over stdio (or HTTP with --http) and exits, so the tests
// drive real child processes without building the command.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == "fixture-provider" {
		os.Exit(fixtureProviderMain(os.Args[2:]))
	}
	os.Exit(m.Run())
}

func fixtureProviderMain(args []string) int {
	fs := flag.NewFlagSet("fixture-provider", flag.ContinueOnError)
	var o FixtureOptions
	fs.StringVar(&o.Misbehave, "misbehave", "", "")
	fs.StringVar(&o.Scenario, "scenario", "", "")
	fs.StringVar(&o.Provider, "provider", "", "")
	addr := fs.String("http", "", "")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	p, err := NewFixtureProvider(&o)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	defer p.Close()
	if *addr != "" {
		fmt.Fprintln(os.Stderr, http.ListenAndServe(*addr, p))
		return 1
	}
	err = p.ServeStdio(context.Background(), os.Stdin, os.Stdout)
	if errors.Is(err, ErrFixtureCrash) {
		p.Close()
		os.Exit(3)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// fixtureCommand is the command line that starts the fixture provider.
func fixtureCommand(args ...string) []string {
	return append([]string{os.Args[0], "fixture-provider"}, args...)
}
