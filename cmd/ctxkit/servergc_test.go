package main

import (
	"math"
	"os"
	rtdebug "runtime/debug"
	"testing"
)

// The servers run at GOGC=400 with a soft heap limit unless the
// environment sets either; what the environment sets is left alone.
func TestServerGCSetsPercentAndLimitUnlessSet(t *testing.T) {
	oldPercent := rtdebug.SetGCPercent(100)
	oldLimit := rtdebug.SetMemoryLimit(math.MaxInt64)
	t.Cleanup(func() {
		rtdebug.SetGCPercent(oldPercent)
		rtdebug.SetMemoryLimit(oldLimit)
	})

	// t.Setenv restores each variable when the test ends; Unsetenv then
	// leaves it unset for serverGC.
	for _, name := range []string{"GOGC", "GOMEMLIMIT"} {
		t.Setenv(name, "")
		os.Unsetenv(name)
	}
	serverGC()
	if got := rtdebug.SetGCPercent(100); got != 400 {
		t.Errorf("GOGC unset: percent %d, want 400", got)
	}
	if got := rtdebug.SetMemoryLimit(math.MaxInt64); got != serverMemoryLimit {
		t.Errorf("GOMEMLIMIT unset: limit %d, want %d", got, serverMemoryLimit)
	}

	t.Setenv("GOGC", "100")
	t.Setenv("GOMEMLIMIT", "off")
	serverGC()
	if got := rtdebug.SetGCPercent(100); got != 100 {
		t.Errorf("GOGC set: percent changed to %d", got)
	}
	if got := rtdebug.SetMemoryLimit(math.MaxInt64); got != math.MaxInt64 {
		t.Errorf("GOMEMLIMIT set: limit changed to %d", got)
	}
}
