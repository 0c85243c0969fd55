//go:build unix

package prompt

import (
	"syscall"
	"time"
)

// processCPU returns the CPU time (user + system) the process has used. On
// a shared, overloaded machine it tracks work done better than wall time.
func processCPU() (time.Duration, bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}
