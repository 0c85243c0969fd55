// Package doctest keeps ctxkit's user documentation honest. It has no API:
// its tests run every shell and Python block that README.md and docs/*.md
// mark as runnable, and send every example of docs/openapi.yaml to the HTTP
// handler, so the docs cannot rot.
//
// A fenced block is run when the line before its opening fence is
//
//	<!-- test -->            run it; it must exit 0
//	<!-- test exit=N -->     run it; it must exit N
//
// Shell blocks (sh, bash, shell) run with bash -e in a copy of the
// repository, with a freshly built ctxkit first on PATH ("go run
// ./cmd/ctxkit" is replaced by it, "go build -o X ./cmd/ctxkit" by a copy of
// it), the Go examples built likewise ("go run ./examples/X" becomes X),
// the part of curl the docs use (package curl here, so the HTTP examples
// need no curl installed) and a ctxkit server started by the test answering
// at the address written in the docs, http://127.0.0.1:8787 (rewritten to
// the test server's). Python blocks run with python3 and the standard
// library, with CTXKIT_URL set to the test server; they and the shell blocks
// piping into python3 are skipped where python3 is missing, except under CI
// (CI set), where .ci/run installs it. A block that shows a command which
// cannot run unattended (one that serves until stopped, or the test
// command itself) is marked <!-- no-test: REASON -->. Every shell block
// that runs ctxkit must carry one of the markers.
//
// A runnable block followed by a block marked <!-- output --> must print
// every non-empty line of that block, in order. A code block after
// <!-- include: PATH --> must appear verbatim in the file PATH (the
// README's Go example is examples/quickstart/main.go, which a shell block
// runs).
package doctest
