package announce

import (
	"io"
	"strings"
	"testing"
	"time"
)

func TestWatchFindsTheFirstURLAndKeepsReading(t *testing.T) {
	pr, pw := io.Pipe()
	var seen []string
	urls, done := Watch(pr, func(line string) { seen = append(seen, line) })
	go func() {
		_, _ = io.WriteString(pw, "starting\n"+Line("127.0.0.1:8787")+"\n"+Line("127.0.0.1:9")+"\nlast\n")
		_ = pw.Close()
	}()
	select {
	case u := <-urls:
		if u != "http://127.0.0.1:8787" {
			t.Fatalf("url %q", u)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no url")
	}
	<-done // every line was read, the second announcement included, without blocking on the channel
	if strings.Join(seen, "|") != "starting|"+Line("127.0.0.1:8787")+"|"+Line("127.0.0.1:9")+"|last" {
		t.Fatalf("lines %q", seen)
	}
}
