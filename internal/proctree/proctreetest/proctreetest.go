// Package proctreetest finds, in tests, the processes a child left behind:
// those whose argv[0] carries a marker the test gave them.
package proctreetest

import (
	"bytes"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Marked returns "PID argv..." for every live (non-zombie) process whose
// argv[0] starts with prefix, from /proc.
func Marked(prefix string) []string {
	ents, _ := os.ReadDir("/proc")
	var out []string
	for _, e := range ents {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		cmd, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err != nil || !bytes.HasPrefix(cmd, []byte(prefix)) || zombie(e.Name()) {
			continue
		}
		out = append(out, e.Name()+" "+string(bytes.ReplaceAll(cmd, []byte{0}, []byte{' '})))
	}
	return out
}

// zombie reports whether process pid is a zombie (or gone).
func zombie(pid string) bool {
	b, err := os.ReadFile("/proc/" + pid + "/stat")
	if err != nil {
		return true
	}
	i := bytes.LastIndexByte(b, ')')
	return i < 0 || i+2 >= len(b) || b[i+2] == 'Z'
}

// WaitMarked waits up to five seconds for n marked processes.
func WaitMarked(t testing.TB, prefix string, n int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for len(Marked(prefix)) < n {
		if time.Now().After(deadline) {
			t.Fatalf("the child's marked processes did not start: %v", Marked(prefix))
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// AssertNoneLeft fails t unless every marked process is gone within three
// seconds; those still alive then are killed, so they do not outlive the
// test.
func AssertNoneLeft(t testing.TB, prefix string) {
	t.Helper()
	deadline := time.Now().Add(3 * time.Second)
	for {
		left := Marked(prefix)
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			for _, l := range left {
				if pid, err := strconv.Atoi(strings.Fields(l)[0]); err == nil {
					if p, err := os.FindProcess(pid); err == nil {
						_ = p.Kill()
					}
				}
			}
			t.Fatalf("processes of the child outlived its end: %v", left)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
