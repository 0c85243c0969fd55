package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"runtime"
	"sync"
	"testing"
	"time"
)

// TestWorkersRunCallsConcurrently: calls that wait for each other all
// start (none waits for a busy worker), their results come back to their
// own callers, at most maxIdleWorkers stay, and stop ends them all.
func TestWorkersRunCallsConcurrently(t *testing.T) {
	before := runtime.NumGoroutine()
	w := newWorkers()
	const n = 3 * maxIdleWorkers
	for round := 0; round < 2; round++ {
		var started sync.WaitGroup
		started.Add(n)
		call := func(_ context.Context, args json.RawMessage) (*encodedResult, error) {
			started.Done()
			started.Wait() // returns only once all n calls run at once
			if string(args) == `"fail"` {
				return nil, errors.New("failed")
			}
			return &encodedResult{text: args}, nil
		}
		var wg sync.WaitGroup
		errs := make(chan error, n)
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				args := json.RawMessage(`"` + string(rune('a'+i)) + `"`)
				if i == 0 {
					args = json.RawMessage(`"fail"`)
				}
				res, err := w.call(context.Background(), call, args)
				switch {
				case i == 0 && (err == nil || err.Error() != "failed"):
					errs <- errors.New("the failing call's error did not come back")
				case i != 0 && (err != nil || string(res.text) != string(args)):
					errs <- errors.New("a call got another call's result")
				}
			}()
		}
		done := make(chan struct{})
		go func() { wg.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatalf("round %d: %d calls waiting for each other did not all run at once", round, n)
		}
		close(errs)
		for err := range errs {
			t.Error(err)
		}
		if idle := waitFor(func() bool { return w.idle.Load() == maxIdleWorkers }); !idle {
			t.Errorf("round %d: %d idle workers, want %d", round, w.idle.Load(), maxIdleWorkers)
		}
	}
	w.stop()
	if !waitFor(func() bool { return runtime.NumGoroutine() <= before }) {
		t.Errorf("%d goroutines after stop, %d before the workers", runtime.NumGoroutine(), before)
	}
}

// waitFor polls cond for up to ten seconds.
func waitFor(cond func() bool) bool {
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		if cond() {
			return true
		}
	}
	return cond()
}
