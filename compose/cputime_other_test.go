//go:build !linux

package compose

import "time"

// cpuTime falls back to wall-clock time where thread CPU time is not
// available.
func cpuTime(fn func()) time.Duration { return wallTime(fn) }
