//go:build !unix

package trust

import "time"

// cpuTime is unavailable here; benchmarks then omit the per-CPU metric.
func cpuTime() time.Duration { return 0 }
