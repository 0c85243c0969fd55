package procstat

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"testing"
	"time"
)

// FuzzParse: parse never panics on any content, and reads back state,
// ppid, CPU times and start time whatever the command name holds (spaces,
// parentheses, newlines).
func FuzzParse(f *testing.F) {
	f.Add("bash", 1, uint64(3), uint64(4), uint64(12345), "S")
	f.Add("a) (b", 7, uint64(0), uint64(0), uint64(0), "Z")
	f.Add("x y\nz)", 123456, uint64(99), uint64(1), uint64(18446744073709551615), "R")
	f.Fuzz(func(t *testing.T, comm string, ppid int, ut, st, start uint64, state string) {
		if ppid < 0 || len(state) != 1 || state[0] < 'A' || state[0] > 'Z' { // the kernel writes one letter
			_, _ = parse([]byte(comm)) // raw input: must not panic
			return
		}
		line := fmt.Sprintf("42 (%s) %s %d 42 42 0 -1 4194560 100 0 0 0 %d %d 0 0 20 0 1 0 %d 1000 100 18446744073709551615\n", comm, state, ppid, ut, st, start)
		s, err := parse([]byte(line))
		want := Stat{State: state, PPID: ppid, UTime: ut, STime: st, Start: start}
		if err != nil || s != want || s.Zombie() != (state == "Z") {
			t.Fatalf("parse(%q) = %+v, %v; want %+v", line, s, err, want)
		}
	})
}

func TestParseMalformed(t *testing.T) {
	for _, in := range []string{"", "42 bash S 1", "42 (bash) S 1 2 3", "42 (bash) S x 42 42 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 5"} {
		if _, err := parse([]byte(in)); !errors.Is(err, errMalformed) {
			t.Errorf("parse(%q): %v, want errMalformed", in, err)
		}
	}
}

func TestCPU(t *testing.T) {
	if got := (Stat{UTime: 150, STime: 50}).CPU(); got != 2*time.Second {
		t.Fatalf("CPU() = %v, want 2s", got)
	}
}

// TestReadSelf reads this test's own process: its parent is the one the
// OS reports and it is running, not a zombie.
func TestReadSelf(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("/proc/PID/stat is Linux's")
	}
	s, err := Read(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if s.PPID != os.Getppid() || s.Zombie() || s.Start == 0 {
		t.Fatalf("Read(self) = %+v, parent %d", s, os.Getppid())
	}
	if _, err := Read(-1); err == nil || errors.Is(err, errMalformed) {
		t.Fatalf("Read(-1): %v, want the file's error", err)
	}
}
