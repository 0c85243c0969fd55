package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/ctxkit/ctxkit/host/files"
	"github.com/ctxkit/ctxkit/host/serve"
)

const providerUsage = `usage: ctxkit provider files [flags] DIR...

Serves the built-in files provider (BM25F over chunks that follow each
file's structure) over one or more DIRs so that any CGP host can use it:

  (default)     NDJSON on stdin/stdout, one envelope per line
  --http ADDR   one envelope per POST at http://ADDR/ (e.g. 127.0.0.1:7700)

` + "%s" + `
Index progress goes to stderr when stderr is a terminal; one line per DIR
saying what was indexed and skipped (by reason) goes to stderr always.

examples:
  ctxkit provider files ./docs
  ctxkit provider files ./docs --http 127.0.0.1:7700
  ctxkit conform provider -- ctxkit provider files ./docs

exit codes: 0 clean shutdown; 1 serving failed; 2 usage error or unreadable DIR.
`

func runProvider(ctx context.Context, args []string, s stdio) int {
	providerUsage := fmt.Sprintf(providerUsage, fmt.Sprintf(filesFlagsUsage, files.DefaultMaxFileSize))
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" {
		if len(args) == 0 {
			fmt.Fprint(s.err, providerUsage)
			return exitUsage
		}
		fmt.Fprint(s.out, providerUsage)
		return exitOK
	}
	if args[0] != "files" {
		fmt.Fprintf(s.err, "provider: unknown provider %q (only files)\n\n%s", args[0], providerUsage)
		return exitUsage
	}
	fs := flag.NewFlagSet("provider files", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	addr := fs.String("http", "", "")
	var ff filesFlags
	ff.register(fs)
	pos, code, ok := parseCommand(fs, args[1:], s, func(w io.Writer) { fmt.Fprint(w, providerUsage) })
	if !ok {
		return code
	}
	if len(pos) == 0 {
		fmt.Fprintf(s.err, "provider files: want at least one DIR\n\n%s", providerUsage)
		return exitUsage
	}
	if err := ff.check(); err != nil {
		fmt.Fprintf(s.err, "provider files: %v\n", err)
		return exitUsage
	}
	var progress io.Writer
	if isTerminal(s.err) {
		progress = s.err
	}
	p, err := ff.build(ctx, pos, progress, s.err)
	if err != nil {
		fmt.Fprintf(s.err, "provider: %v\n", err)
		return exitUsage
	}
	if progress == nil {
		writeIndexReport(s.err, p)
	}
	if *addr == "" {
		if err := serve.Stdio(ctx, p, s.in, s.out); err != nil {
			fmt.Fprintf(s.err, "provider: %v\n", err)
			return exitFailed
		}
		return exitOK
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		fmt.Fprintf(s.err, "provider: %v\n", err)
		return exitFailed
	}
	srv := &http.Server{Handler: serve.HTTP(p), ReadHeaderTimeout: 10 * time.Second}
	fmt.Fprintf(s.err, "provider: %s serving on http://%s/\n", p, ln.Addr())
	if err := serveUntilDone(ctx, srv, ln, 5*time.Second); err != nil {
		fmt.Fprintf(s.err, "provider: %v\n", err)
		return exitFailed
	}
	return exitOK
}
