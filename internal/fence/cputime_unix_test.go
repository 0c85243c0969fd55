//go:build unix

package fence

import (
	"syscall"
	"time"
)

// processCPU is the CPU time the process has used, or 0.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
