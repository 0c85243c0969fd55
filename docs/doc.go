// Package docs holds ctxkit's user documentation (the Markdown files and
// openapi.yaml beside this file). It has no API: its tests run every shell
// and Python block the pages mark as runnable, so the docs cannot rot.
//
// A fenced block is run when the line before its opening fence is
//
//	<!-- test -->            run it; it must exit 0
//	<!-- test exit=N -->     run it; it must exit N
//
// Shell blocks (sh, bash, shell) run with bash -e in the repository root,
// with a freshly built ctxkit first on PATH ("go run ./cmd/ctxkit" is
// replaced by it) and a ctxkit server started by the test answering at
// the address written in the docs, http://127.0.0.1:8787 (rewritten to the
// test server's). Python blocks run with python3 and the standard library,
// with CTXKIT_URL set to the test server. A block that shows a command which
// cannot run unattended (one that serves until stopped, or the test
// command itself) is marked <!-- no-test: REASON -->. Every shell block
// that runs ctxkit must carry one of the markers.
//
// A runnable block followed by a block marked <!-- output --> must print
// every non-empty line of that block, in order.
package docs
