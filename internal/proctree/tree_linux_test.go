//go:build linux

package proctree

import (
	"fmt"
	"testing"
)

// FuzzParseStat: parseStat never panics on any /proc/PID/stat content, and
// reads back ppid, start time and state whatever the command name holds
// (spaces, parentheses, newlines).
func FuzzParseStat(f *testing.F) {
	f.Add("bash", 1, uint64(12345), "S")
	f.Add("a) (b", 7, uint64(0), "Z")
	f.Add("x y\nz)", 123456, uint64(18446744073709551615), "R")
	f.Fuzz(func(t *testing.T, comm string, ppid int, start uint64, state string) {
		if ppid < 0 || len(state) != 1 || state[0] < 'A' || state[0] > 'Z' { // the kernel writes one letter
			_, _ = parseStat([]byte(comm)) // raw input: must not panic
			return
		}
		line := fmt.Sprintf("42 (%s) %s %d 42 42 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 %d 1000 100 18446744073709551615\n", comm, state, ppid, start)
		st, ok := parseStat([]byte(line))
		if !ok || st.ppid != ppid || st.start != start || st.zombie != (state == "Z") {
			t.Fatalf("parseStat(%q) = %+v, %v", line, st, ok)
		}
	})
}
