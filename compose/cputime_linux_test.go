//go:build linux

package compose

import (
	"runtime"
	"syscall"
	"time"
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
