package cputime

import (
	"runtime"
	"testing"
	"time"
)

// sink keeps spin's loop from being optimised away.
var sink uint64

// spin does a fixed amount of work, tens of milliseconds of CPU on any
// machine, however loaded (a wall-clock spin would get little CPU there).
func spin() {
	x := uint64(1)
	for i := 0; i < 50_000_000; i++ {
		x = x*6364136223846793005 + 1442695040888963407
	}
	sink = x
}

// Func counts the work fn does and not the time it sleeps: a sleep costs
// almost no CPU, a spin costs some. A clock that returned wall time where
// CPU time is readable would charge the sleep.
func TestFuncCountsWorkNotSleep(t *testing.T) {
	if Thread() == 0 {
		t.Skip("no thread CPU clock on " + runtime.GOOS + "; Func is wall time here")
	}
	slept := Func(func() { time.Sleep(50 * time.Millisecond) })
	worked := Func(spin)
	if slept >= 10*time.Millisecond {
		t.Errorf("a 50 ms sleep cost %v of CPU", slept)
	}
	if worked <= slept {
		t.Errorf("a spin cost %v of CPU", worked)
	}
}

// Process grows as the process works and never goes back.
func TestProcessGrows(t *testing.T) {
	p0 := Process()
	if p0 == 0 && runtime.GOOS != "windows" && runtime.GOOS != "plan9" && runtime.GOOS != "js" && runtime.GOOS != "wasip1" {
		t.Fatal("Process is 0 on a unix system")
	}
	spin()
	if p1 := Process(); p1 < p0 || (p0 > 0 && p1 == p0) {
		t.Errorf("Process went from %v to %v over a spin", p0, p1)
	}
}
