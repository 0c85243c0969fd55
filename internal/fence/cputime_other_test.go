//go:build !unix

package fence

import "time"

// processCPU is unavailable here: 0, and callers use wall time.
func processCPU() time.Duration { return 0 }
