package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/ctxkit/ctxkit/conformance"
)

// exitCrash is the status a crash-mode fixture provider exits with.
const exitCrash = 3

func fixtureProviderUsage(fs *flag.FlagSet) func() {
	return func() {
		w := fs.Output()
		fmt.Fprintf(w, "usage: %s fixture-provider [--misbehave MODE] [--docs DIR] [--http ADDR]\n", programName)
		fmt.Fprintf(w, "       %s fixture-provider --scenario NAME --provider ID [--http ADDR]\n\n", programName)
		fmt.Fprintln(w, "Serves CGP over stdio (one envelope per line) or, with --http, one envelope per POST.")
		fmt.Fprintln(w, "Honest by default: two documents with file provenance, verify, correlation, graph.")
		fmt.Fprintln(w, "\nflags:")
		fs.PrintDefaults()
		fmt.Fprintln(w, "\nmisbehave modes (each trips the provider checks in brackets):")
		for _, m := range conformance.MisbehaveModes() {
			fmt.Fprintf(w, "  %-24s %s [%s]\n", m.Name, m.Summary, strings.Join(m.Targets, ", "))
		}
		fmt.Fprintln(w, "\ncomposition scenarios:")
		for _, s := range conformance.Scenarios() {
			ids := make([]string, len(s.Providers))
			for i, p := range s.Providers {
				ids[i] = p.ID
			}
			fmt.Fprintf(w, "  %-22s providers %s\n", s.Name, strings.Join(ids, ", "))
		}
		fmt.Fprintln(w, "\nexamples:")
		fmt.Fprintf(w, "  %s conform provider -- %s fixture-provider\n", programName, programName)
		fmt.Fprintf(w, "  %s conform provider -- %s fixture-provider --misbehave lying-costs\n", programName, programName)
		fmt.Fprintln(w, "\nexit codes: 0 clean shutdown; 1 serving failed; 2 usage error; 3 a crash mode crashed on purpose.")
	}
}

func runFixtureProvider(ctx context.Context, args []string, s stdio) int {
	fs := flag.NewFlagSet("fixture-provider", flag.ContinueOnError)
	fs.SetOutput(s.err)
	var o conformance.FixtureOptions
	fs.StringVar(&o.Misbehave, "misbehave", "", "break one protocol rule on purpose (see the modes below)")
	fs.StringVar(&o.Scenario, "scenario", "", "serve a composition scenario's provider (with --provider)")
	fs.StringVar(&o.Provider, "provider", "", "the scenario provider id to serve")
	fs.StringVar(&o.DocsDir, "docs", "", "write the fixture documents here (default: a temporary directory, removed on exit)")
	addr := fs.String("http", "", "serve HTTP on `ADDR` (e.g. 127.0.0.1:0; the chosen address is printed on stderr)")
	fs.Usage = fixtureProviderUsage(fs)
	if wantsHelp(args) {
		fs.SetOutput(s.out)
		fs.Usage()
		return exitOK
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fs.SetOutput(s.out)
			fs.Usage()
			return exitOK
		}
		return exitUsage
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(s.err, "fixture-provider: unexpected argument %q\n", fs.Arg(0))
		return exitUsage
	}
	if (o.Scenario == "") != (o.Provider == "") {
		fmt.Fprintln(s.err, "fixture-provider: --scenario and --provider go together")
		return exitUsage
	}
	p, err := conformance.NewFixtureProvider(&o)
	if err != nil {
		fmt.Fprintln(s.err, err)
		return exitUsage
	}
	defer p.Close()
	if *addr != "" {
		return serveFixtureHTTP(ctx, p, *addr, s)
	}
	err = p.ServeStdio(ctx, s.in, s.out)
	switch {
	case errors.Is(err, conformance.ErrFixtureCrash):
		return exitCrash
	case err != nil && ctx.Err() == nil:
		fmt.Fprintln(s.err, err)
		return exitFailed
	}
	return exitOK
}

func serveFixtureHTTP(ctx context.Context, p *conformance.FixtureProvider, addr string, s stdio) int {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		fmt.Fprintf(s.err, "fixture-provider: %v\n", err)
		return exitUsage
	}
	fmt.Fprintf(s.err, "fixture-provider: serving http://%s\n", ln.Addr())
	srv := &http.Server{Handler: p, ReadHeaderTimeout: 10 * time.Second}
	if err := serveUntilDone(ctx, srv, ln, 2*time.Second); err != nil {
		fmt.Fprintf(s.err, "fixture-provider: %v\n", err)
		return exitFailed
	}
	return exitOK
}
