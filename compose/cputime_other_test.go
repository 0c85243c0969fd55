//go:build !linux

package compose

import "time"

// cpuTime falls back to wall-clock time where thread CPU time is not
// available.
func cpuTime(fn func()) time.Duration { return wallTime(fn) }

// threadCPU is unavailable here: 0, and callers fall back to wall time.
func threadCPU() time.Duration { return 0 }

// processCPU is unavailable here: 0.
func processCPU() time.Duration { return 0 }
