//go:build !unix

package cputime

import "time"

// processCPU is unavailable here: 0.
func processCPU() time.Duration { return 0 }
