//go:build linux

package compose

import (
	"runtime"
	"syscall"
	"time"
	"unsafe"
)

// cpuTime runs fn on a locked OS thread and returns the CPU time that thread
// spent, so timing assertions hold on a loaded machine.
func cpuTime(fn func()) time.Duration {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	const rusageThread = 1 // RUSAGE_THREAD
	var before, after syscall.Rusage
	if syscall.Getrusage(rusageThread, &before) != nil {
		return wallTime(fn)
	}
	fn()
	if syscall.Getrusage(rusageThread, &after) != nil {
		return wallTime(fn)
	}
	return time.Duration(after.Utime.Nano()+after.Stime.Nano()-before.Utime.Nano()-before.Stime.Nano()) * time.Nanosecond
}

// threadCPU is the calling thread's CPU time from CLOCK_THREAD_CPUTIME_ID,
// which is exact (getrusage counts in scheduler ticks on some kernels); the
// caller must have locked its OS thread.
func threadCPU() time.Duration {
	const clockThreadCPUTime = 3
	var ts syscall.Timespec
	if _, _, e := syscall.Syscall(syscall.SYS_CLOCK_GETTIME, clockThreadCPUTime, uintptr(unsafe.Pointer(&ts)), 0); e != 0 {
		return 0
	}
	return time.Duration(ts.Nano())
}

// processCPU is the CPU time of the whole process so far.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
