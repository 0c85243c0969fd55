// Package procstat reads what the tree needs of a process's /proc/PID/stat
// line (Linux): its state, its parent, its CPU time and its start time. It
// is the one parser of that line for the host's process-tree cleanup, the
// load generator and the tests that watch processes.
package procstat

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// Stat is the part of /proc/PID/stat the tree reads.
type Stat struct {
	// State is the process's one-letter state: R, S, D, Z (zombie), …
	State string
	// PPID is the parent's process id.
	PPID int
	// UTime and STime are the user and system CPU time, in clock ticks.
	UTime, STime uint64
	// Start is the start time, in clock ticks after boot; with the pid it
	// names one process (a pid is reused, a start time with it is not).
	Start uint64
}

// errMalformed reports a stat line this package cannot read.
var errMalformed = errors.New("procstat: malformed stat line")

// Zombie reports whether the process has exited and waits to be reaped.
func (s Stat) Zombie() bool { return s.State == "Z" }

// CPU returns the user and system CPU time together. Linux reports ticks of
// USER_HZ, which is 100 on every architecture it exposes to user space.
func (s Stat) CPU() time.Duration {
	return time.Duration(s.UTime+s.STime) * (time.Second / 100)
}

// Read reads and parses /proc/PID/stat. An error wraps the file's (the
// process is gone) or errMalformed.
func Read(pid int) (Stat, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return Stat{}, fmt.Errorf("procstat: %w", err)
	}
	return parse(b)
}

// parse reads a stat line. The command name in parentheses may hold spaces,
// parentheses and newlines, so the fields are counted from the last ')'.
func parse(b []byte) (Stat, error) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return Stat{}, errMalformed
	}
	// After the name: state(3) ppid(4) … utime(14) stime(15) … starttime(22),
	// numbered as in proc(5).
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 20 {
		return Stat{}, errMalformed
	}
	ppid, err1 := strconv.Atoi(f[1])
	ut, err2 := strconv.ParseUint(f[11], 10, 64)
	st, err3 := strconv.ParseUint(f[12], 10, 64)
	start, err4 := strconv.ParseUint(f[19], 10, 64)
	if err := errors.Join(err1, err2, err3, err4); err != nil {
		return Stat{}, fmt.Errorf("%w: %w", errMalformed, err)
	}
	return Stat{State: f[0], PPID: ppid, UTime: ut, STime: st, Start: start}, nil
}
