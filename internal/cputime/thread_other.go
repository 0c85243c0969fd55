//go:build !linux

package cputime

import "time"

// threadCPU is unavailable here: 0.
func threadCPU() time.Duration { return 0 }
