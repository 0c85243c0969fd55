package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"strings"
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
			wg.Go(func() {
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
			})
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

// panickyTool is a tool body that panics with a value of its own.
func panickyTool(context.Context, json.RawMessage) (*encodedResult, error) {
	panic("the tool's own panic")
}

// TestWorkersPanicIsTheCallers: a tool body that panics on a worker
// panics in its caller, the SDK's request goroutine, as it did when the
// body ran there: the panic names the body's value and its stack, the
// caller never reads a result that was not returned, and the worker
// serves the next call. (The worker used to panic on its own goroutine
// and close the call's channel on the way, so the caller could read a nil
// result and panic first, with a nil dereference hiding the tool's
// panic.)
func TestWorkersPanicIsTheCallers(t *testing.T) {
	w := newWorkers()
	defer w.stop()
	for range 3 {
		var got any
		func() {
			defer func() { got = recover() }()
			res, err := w.call(context.Background(), panickyTool, nil)
			t.Errorf("a panicking body returned %v, %v to its caller", res, err)
		}()
		if got == nil {
			t.Fatal("the body's panic did not reach its caller")
		}
		msg := fmt.Sprint(got)
		if !strings.Contains(msg, "the tool's own panic") || !strings.Contains(msg, "panickyTool") {
			t.Errorf("the caller's panic is %q, want the body's value and its stack", msg)
		}
		res, err := w.call(context.Background(), func(context.Context, json.RawMessage) (*encodedResult, error) {
			return &encodedResult{text: json.RawMessage(`"ok"`)}, nil
		}, nil)
		if err != nil || string(res.text) != `"ok"` {
			t.Errorf("after a panic, the next call got %v, %v", res, err)
		}
	}
}

// TestWorkersGoexitIsTheCallers: a body that ends its goroutine (as
// t.FailNow does) ends its caller's the same way, instead of leaving the
// caller with a result that was never returned.
func TestWorkersGoexitIsTheCallers(t *testing.T) {
	w := newWorkers()
	defer w.stop()
	exited := make(chan bool, 1)
	go func() {
		normal := false
		defer func() { exited <- !normal && recover() == nil }()
		_, _ = w.call(context.Background(), func(context.Context, json.RawMessage) (*encodedResult, error) {
			runtime.Goexit()
			return nil, nil
		}, nil)
		normal = true
	}()
	select {
	case ok := <-exited:
		if !ok {
			t.Error("the caller of a body that called runtime.Goexit returned or panicked, want it ended by Goexit too")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the caller of a body that called runtime.Goexit never ended")
	}
}
