package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"time"

	"github.com/ctxkit/ctxkit/conformance"
)

func conformUsage(w io.Writer) {
	fmt.Fprintf(w, `usage: %[1]s conform provider [--json] [--timeout D] -- CMD [ARGS...]
       %[1]s conform provider --http URL [--json] [--timeout D]
       %[1]s conform host [--json]
       %[1]s conform composition [--json] [--timeout D] [--exec CMD [ARGS...] [--json]]

provider     drive a CGP provider over stdio (CMD) or HTTP (URL) through the 13
             provider checks of the CGP conformance suite and the unknown-envelope check
host         run the host scenarios against ctxkit's own host
composition  hold a composing host to the composition rules; --exec takes the rest of
             the line as the host's command (a final --json stays ctxkit's; end the
             command with -- to pass it --json); see docs/conformance.md for the
             protocol; without --exec, ctxkit's reference composing host is certified

--json prints the report as JSON on stdout and nothing else.
Exit status: 0 conformant, 1 a check failed, 2 the harness could not run.

examples:
  %[1]s conform provider -- %[1]s provider files ./docs
  %[1]s conform provider --json -- %[1]s fixture-provider --misbehave lying-costs
  %[1]s conform composition --exec python3 examples/composing-host/host.py
`, programName)
}

func runConform(ctx context.Context, args []string, s stdio) int {
	if len(args) == 0 {
		conformUsage(s.err)
		return exitUsage
	}
	switch args[0] {
	case "-h", "--help", "help":
		conformUsage(s.out)
		return exitOK
	case "provider":
		return conformProvider(ctx, args[1:], s)
	case "host":
		return conformHost(ctx, args[1:], s)
	case "composition":
		return conformComposition(ctx, args[1:], s)
	}
	fmt.Fprintf(s.err, "conform: unknown suite %q\n\n", args[0])
	conformUsage(s.err)
	return exitUsage
}

// conformFlags are the flags every suite shares.
func conformFlags(name string, s stdio) (*flag.FlagSet, *bool, *time.Duration) {
	fs := flag.NewFlagSet("conform "+name, flag.ContinueOnError)
	fs.SetOutput(s.err)
	fs.Usage = func() { conformUsage(fs.Output()) }
	asJSON := fs.Bool("json", false, "print the report as JSON on stdout, nothing else")
	timeout := fs.Duration("timeout", 0, "bound each exchange (provider) or scenario run (composition); 0 = default")
	return fs, asJSON, timeout
}

// parseConform parses args with fs; help prints the usage and exits 0. An
// argument left after the flags is refused unless positional, naming
// it; where, if set, says where such an argument belongs.
func parseConform(fs *flag.FlagSet, args []string, s stdio, positional bool, where string) (int, bool) {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			conformUsage(s.out)
			return exitOK, false
		}
		return exitUsage, false
	}
	if !positional && fs.NArg() > 0 {
		fmt.Fprintf(s.err, "%s: unexpected argument %q%s\n", fs.Name(), fs.Arg(0), where)
		return exitUsage, false
	}
	return 0, true
}

// writeReport prints rep and returns the exit status it implies.
func writeReport(rep *conformance.Report, asJSON bool, s stdio) int {
	var err error
	if asJSON {
		err = rep.WriteJSON(s.out)
	} else {
		err = rep.WriteText(s.out)
	}
	if err != nil {
		fmt.Fprintln(s.err, err)
		return exitUsage
	}
	if !rep.Passed() {
		return exitFailed
	}
	return exitOK
}

// checkProgram reports a harness error when a command cannot be run at all.
func checkProgram(what string, cmd []string, s stdio) bool {
	if _, err := exec.LookPath(cmd[0]); err != nil {
		fmt.Fprintf(s.err, "conform: cannot run %s %q: %v\n", what, cmd[0], err)
		return false
	}
	return true
}

func conformProvider(ctx context.Context, args []string, s stdio) int {
	fs, asJSON, timeout := conformFlags("provider", s)
	url := fs.String("http", "", "the provider's HTTP endpoint (instead of a command)")
	if code, ok := parseConform(fs, args, s, true, ""); !ok {
		return code
	}
	t := conformance.ProviderTarget{Command: fs.Args(), URL: *url}
	if (len(t.Command) == 0) == (t.URL == "") {
		fmt.Fprintln(s.err, "conform provider: give either a command after -- or --http URL")
		return exitUsage
	}
	if len(t.Command) > 0 && !checkProgram("provider", t.Command, s) {
		return exitUsage
	}
	rep, err := conformance.RunProvider(ctx, t, &conformance.ProviderOptions{Timeout: *timeout, Stderr: s.err})
	if err != nil {
		fmt.Fprintln(s.err, err)
		return exitUsage
	}
	return writeReport(&rep, *asJSON, s)
}

func conformHost(ctx context.Context, args []string, s stdio) int {
	fs, asJSON, _ := conformFlags("host", s)
	if code, ok := parseConform(fs, args, s, false, ""); !ok {
		return code
	}
	rep := conformance.RunHost(ctx, nil)
	return writeReport(&rep, *asJSON, s)
}

func conformComposition(ctx context.Context, args []string, s stdio) int {
	var hostCmd []string
	for i, a := range args {
		if a == "--exec" || a == "-exec" {
			hostCmd, args = splitExec(args[i+1:], args[:i])
			if len(hostCmd) == 0 {
				fmt.Fprintln(s.err, "conform composition: --exec needs the host's command")
				return exitUsage
			}
			break
		}
	}
	fs, asJSON, timeout := conformFlags("composition", s)
	if code, ok := parseConform(fs, args, s, false, " (the host's command goes after --exec)"); !ok {
		return code
	}
	self, err := os.Executable()
	if err != nil {
		fmt.Fprintf(s.err, "conform composition: %v\n", err)
		return exitUsage
	}
	fixture := []string{self, "fixture-provider"}
	var h conformance.ComposingHost
	var target string
	if hostCmd != nil {
		if !checkProgram("host", hostCmd, s) {
			return exitUsage
		}
		eh := &conformance.ExecComposingHost{Command: hostCmd, FixtureCommand: fixture, Timeout: *timeout, Stderr: s.err}
		h, target = eh, eh.Target()
	} else {
		rh := &conformance.ReferenceComposingHost{FixtureCommand: fixture}
		h, target = rh, rh.Target()
	}
	rep := conformance.RunComposition(ctx, h, &conformance.CompositionOptions{Target: target})
	return writeReport(&rep, *asJSON, s)
}

// splitExec separates the host command that follows --exec from ctxkit's
// own flags: a final "--json" after the command is ctxkit's (as in
// `conform composition --exec CMD ARGS --json`), unless the command ends
// with "--", which is dropped and keeps everything before it verbatim.
func splitExec(cmd, flags []string) (host, rest []string) {
	rest = append([]string(nil), flags...)
	switch {
	case len(cmd) > 0 && cmd[len(cmd)-1] == "--":
		cmd = cmd[:len(cmd)-1]
	case len(cmd) > 0 && (cmd[len(cmd)-1] == "--json" || cmd[len(cmd)-1] == "-json"):
		rest = append(rest, "--json")
		cmd = cmd[:len(cmd)-1]
	}
	return cmd, rest
}
