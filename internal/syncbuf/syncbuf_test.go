package syncbuf

import (
	"strings"
	"sync"
	"testing"
)

// Writers on many goroutines lose nothing and tear no line.
func TestConcurrentWritersKeepEveryLine(t *testing.T) {
	var b Buffer
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Go(func() {
			for j := 0; j < 100; j++ {
				if j%2 == 0 {
					b.Line("line")
				} else {
					b.Write([]byte("line\n"))
				}
			}
		})
	}
	wg.Wait()
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	if len(lines) != 800 {
		t.Fatalf("got %d lines, want 800", len(lines))
	}
	for _, l := range lines {
		if l != "line" {
			t.Fatalf("torn line %q", l)
		}
	}
}
