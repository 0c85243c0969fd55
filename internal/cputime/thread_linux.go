package cputime

import (
	"syscall"
	"time"
	"unsafe"
)

// Thread is the calling thread's CPU time from CLOCK_THREAD_CPUTIME_ID,
// which is exact (getrusage counts scheduler ticks on some kernels), or 0
// where it cannot be read. The caller locks its OS thread.
func Thread() time.Duration {
	const clockThreadCPUTime = 3
	var ts syscall.Timespec
	if _, _, e := syscall.Syscall(syscall.SYS_CLOCK_GETTIME, clockThreadCPUTime, uintptr(unsafe.Pointer(&ts)), 0); e != 0 {
		return 0
	}
	return time.Duration(ts.Nano())
}
