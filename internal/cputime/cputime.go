// Package cputime measures CPU time for the tests and benchmarks of ctxkit's
// packages. On a shared, oversubscribed machine wall time counts the time
// other processes ran; CPU time counts the work done, so speed figures and
// cost comparisons use it.
package cputime

import (
	"runtime"
	"time"
)

// Func runs fn on a locked OS thread and returns the CPU time that thread
// spent in it, or the wall time where thread CPU time is unavailable.
func Func(fn func()) time.Duration {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	t0, w0 := Thread(), time.Now()
	fn()
	if t0 == 0 {
		return time.Since(w0)
	}
	return Thread() - t0
}

// Process is the user and system CPU time the process has used so far, or 0
// where it cannot be read.
func Process() time.Duration { return processCPU() }

// Thread is the calling thread's CPU time, or 0 where it cannot be read (then
// Func falls back to wall time). On Linux it is CLOCK_THREAD_CPUTIME_ID,
// which is exact (getrusage counts scheduler ticks on some kernels). The
// caller locks its OS thread.
func Thread() time.Duration { return threadCPU() }
