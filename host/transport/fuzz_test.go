package transport

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/ctxkit/ctxkit/wire"
)

// FuzzStreamRead: the one bounded reader returns exactly the input's
// non-blank lines (trailing white space trimmed) while they fit, a
// *wire.TooLongError naming the limit in the place of each longer line, and
// never a line over the limit.
func FuzzStreamRead(f *testing.F) {
	f.Add([]byte("a\nbb\n"), 4)
	f.Add([]byte("no newline"), 3)
	f.Add([]byte("\n\n\n"), 1)
	f.Add([]byte(strings.Repeat("x", 100)+"\nok\n"), 16)
	f.Fuzz(func(t *testing.T, data []byte, max int) {
		if max <= 0 || max > 1<<16 {
			max = 16
		}
		var want []string // "" marks an over-long line
		for _, l := range strings.SplitAfter(string(data), "\n") {
			raw := strings.TrimSuffix(l, "\n")
			switch {
			case len(raw) > max:
				want = append(want, "")
			case strings.TrimRight(raw, " \t\r\n") != "":
				want = append(want, strings.TrimRight(raw, " \t\r\n"))
			}
		}
		c := Stream(bytes.NewReader(data), io.Discard, max, nil)
		for i := 0; ; i++ {
			line, err := c.Read()
			if errors.Is(err, io.EOF) {
				if i != len(want) {
					t.Fatalf("EOF after %d lines, want %d", i, len(want))
				}
				return
			}
			if i >= len(want) {
				t.Fatalf("line %d (%q, %v) beyond the input's %d", i, line, err, len(want))
			}
			var tl *wire.TooLongError
			if errors.As(err, &tl) {
				if want[i] != "" || tl.Limit != int64(max) {
					t.Fatalf("limit error for line %d (%q): %v", i, want[i], err)
				}
				continue
			}
			if err != nil || string(line) != want[i] || len(line) > max {
				t.Fatalf("line %d = %q, %v; want %q", i, line, err, want[i])
			}
		}
	})
}
