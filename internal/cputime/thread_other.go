//go:build !linux

package cputime

import "time"

// Thread is unavailable here: 0, and Func falls back to wall time.
func Thread() time.Duration { return 0 }
