//go:build unix

package trust

import (
	"syscall"
	"time"
)

// cpuTime returns the process's user+system CPU time, so a benchmark on a
// shared, loaded machine can report throughput per CPU-second rather than
// per wall-clock second.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
