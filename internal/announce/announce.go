// Package announce holds the line `ctxkit serve` prints on stderr once it
// listens, and reads it back for the programs and tests that start the
// server on a free port. The line is a contract: scripts (wrk.sh, the
// docs' examples) find the URL by it.
package announce

import (
	"bufio"
	"fmt"
	"io"
	"strings"
)

// prefix starts the line; the server's base URL follows it.
const prefix = "ctxkit serve: listening on "

// Line is the whole line for a server listening on addr (host:port),
// without the newline.
func Line(addr string) string { return fmt.Sprintf("%shttp://%s", prefix, addr) }

// Watch reads r line by line until it ends, calling each (when not nil)
// with every line, and sends the first announced URL on urls. It keeps
// reading after the URL, so that a child process never blocks on a full
// stderr pipe, and closes done when r ends.
func Watch(r io.Reader, each func(line string)) (urls <-chan string, done <-chan struct{}) {
	found := make(chan string, 1)
	ended := make(chan struct{})
	go func() {
		defer close(ended)
		sent := false
		sc := bufio.NewScanner(r)
		for sc.Scan() {
			line := sc.Text()
			if each != nil {
				each(line)
			}
			if url, ok := strings.CutPrefix(line, prefix); ok && !sent {
				found <- url
				sent = true
			}
		}
	}()
	return found, ended
}
