// Command ctxkit builds the evidence part of an LLM prompt that a host can
// trust: it validates CGP frames, composes them under a budget, assesses the
// model window, quotes untrusted text and certifies hosts.
//
// Exit codes, for every subcommand: 0 success, 1 the input was read but
// violates a rule (or a check failed), 2 usage error or unreadable input.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sort"
	"syscall"

	"github.com/ctxkit/ctxkit/host/transport"
)

// Exit codes shared by every subcommand.
const (
	exitOK      = 0
	exitFailed  = 1
	exitUsage   = 2
	programName = "ctxkit"
)

// stdio carries the process streams so commands can be tested in-process.
type stdio struct {
	in       io.Reader
	out, err io.Writer
}

// command is one ctxkit subcommand. run returns the process exit code.
type command struct {
	name    string
	summary string
	run     func(ctx context.Context, args []string, io stdio) int
}

// commands lists every subcommand. Each is implemented in its own file.
func commands() []command {
	return []command{
		{name: "validate", summary: "check CGP frames and envelopes against the protocol rules", run: runValidate},
		{name: "serve", summary: "serve the HTTP API (compose, context, assess, prompt, query)", run: runServe},
		{name: "trust", summary: "manage the attestation trust store (add, list, revoke, keygen)", run: runTrust},
		{name: "compose", summary: "compose offered frames into a fenced, budgeted, audited prompt", run: runCompose},
		{name: "query", summary: "fan a goal out to providers (local dirs, stdio, https) and print the composed prompt", run: runQuery},
		mcpCommand(),
		{name: "assess", summary: "assess a provider request against the model's context window", run: runAssess},
		{name: "provider", summary: "serve a built-in CGP provider over stdio or HTTP (files DIR)", run: runProvider},
		{name: "consent", summary: "grant, list and revoke consent for egress providers", run: runConsent},
		{name: "store", summary: "manage the shared PostgreSQL store (migrate)", run: runStore},
		{name: "conform", summary: "certify a provider, our host, or a composing host in any language", run: runConform},
		{name: "fixture-provider", summary: "a CGP provider for conformance runs: honest, misbehaving on purpose, or serving a composition scenario", run: runFixtureProvider},
	}
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], stdio{in: os.Stdin, out: os.Stdout, err: os.Stderr})
	stop()
	// The hosts have closed their providers; what a provider's tree left
	// behind and this process adopted goes too (ctxkit starts no children
	// of its own that should outlive it).
	transport.EndAdopted()
	os.Exit(code)
}

// run dispatches args to a subcommand and returns the exit code.
func run(ctx context.Context, args []string, s stdio) int {
	if len(args) == 0 {
		usage(s.err)
		return exitUsage
	}
	name := args[0]
	if name == "help" || name == "-h" || name == "--help" {
		if len(args) > 1 {
			return run(ctx, []string{args[1], "--help"}, s)
		}
		usage(s.out)
		return exitOK
	}
	if code, ok := dispatchRemote(ctx, args, s); ok {
		return code
	}
	for _, c := range commands() {
		if c.name == name {
			return c.run(ctx, args[1:], s)
		}
	}
	fmt.Fprintf(s.err, "%s: unknown command %q\n\n", programName, name)
	usage(s.err)
	return exitUsage
}

func usage(w io.Writer) {
	fmt.Fprintf(w, "usage: %s COMMAND [ARGS]\n\ncommands:\n", programName)
	cs := commands()
	sort.Slice(cs, func(i, j int) bool { return cs[i].name < cs[j].name })
	width := 0
	for _, c := range cs {
		width = max(width, len(c.name))
	}
	for _, c := range cs {
		fmt.Fprintf(w, "  %-*s  %s\n", width, c.name, c.summary)
	}
	fmt.Fprintf(w, "\nRun '%s help COMMAND' for a command's flags and examples.\n"+
		"Exit codes: 0 ok, 1 rule violated or check failed, 2 usage or unreadable input.\n", programName)
}

// subcommand is a store-backed command's subcommand (consent, trust,
// store) as splitSubcommand reads it.
type subcommand struct {
	name  string        // the subcommand: grant, list, migrate, ...
	store string        // --store, given before the subcommand or among its flags
	flags *flag.FlagSet // the subcommand's flags, "--store" defined on store
	args  []string      // the words after the subcommand, for flags to parse
}

// splitSubcommand reads the flags a store-backed command takes before its
// subcommand — only --store — and returns the subcommand with a flag set
// of its own on which --store may be given again. When ok is false the
// caller returns code: help was asked for (printed to stdout) or the
// words were wrong.
func splitSubcommand(name string, args []string, usage func(io.Writer), s stdio) (sc *subcommand, code int, ok bool) {
	sc = &subcommand{}
	top := flag.NewFlagSet(name, flag.ContinueOnError)
	top.SetOutput(io.Discard)
	top.StringVar(&sc.store, "store", "", "")
	if err := top.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			usage(s.out)
			return nil, exitOK, false
		}
		fmt.Fprintf(s.err, "%s: %v\n\n", name, err)
		usage(s.err)
		return nil, exitUsage, false
	}
	if top.NArg() == 0 {
		usage(s.err)
		return nil, exitUsage, false
	}
	sc.name, sc.args = top.Arg(0), top.Args()[1:]
	sc.flags = flag.NewFlagSet(name+" "+sc.name, flag.ContinueOnError)
	sc.flags.SetOutput(io.Discard)
	sc.flags.StringVar(&sc.store, "store", sc.store, "")
	return sc, exitOK, true
}

// parseInterleaved parses flags that may appear before, between or after
// positional arguments.
func parseInterleaved(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return pos, nil
		}
		if rest[0] == "--" {
			return append(pos, rest[1:]...), nil
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}

// parseCommand parses a command's flags and positional arguments, in any
// order, and returns the positional ones. Help prints usage on stdout (exit
// 0); a bad flag prints the error and usage on stderr (exit 2). When ok is
// false the caller returns code.
func parseCommand(fs *flag.FlagSet, args []string, s stdio, usage func(io.Writer)) (pos []string, code int, ok bool) {
	pos, err := parseInterleaved(fs, args)
	switch {
	case err == nil:
		return pos, exitOK, true
	case errors.Is(err, flag.ErrHelp):
		usage(s.out)
		return nil, exitOK, false
	}
	fmt.Fprintf(s.err, "%s: %v\n\n", fs.Name(), err)
	usage(s.err)
	return nil, exitUsage, false
}

// openInput opens a command's FILE argument, "" or "-" meaning in (standard
// input), and returns the name to report it by ("-" for standard input).
func openInput(path string, in io.Reader) (string, io.ReadCloser, error) {
	if path == "" || path == "-" {
		return "-", io.NopCloser(in), nil
	}
	f, err := os.Open(path)
	if err != nil {
		return "", nil, err
	}
	return path, f, nil
}
