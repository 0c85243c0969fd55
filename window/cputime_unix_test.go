//go:build unix

package window

import (
	"syscall"
	"time"
)

// cpuTime is the process's user+system CPU time. Benchmarks report it per
// operation next to wall time because the shared benchmark machine is
// often oversubscribed, which inflates wall time but not CPU time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
