//go:build !unix

package cputime

import "time"

// Process is unavailable here: 0.
func Process() time.Duration { return 0 }
