package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"runtime/debug"
	"sync/atomic"
)

// workers runs one stdio session's tool bodies on goroutines that outlive
// a call. The SDK serves every request on a goroutine of its own, whose
// stack starts small and is grown (copied) two or three times under
// compose's sort and the schema check, on every call; a worker's stack,
// grown once, stays grown for the calls after. A call that finds no idle
// worker starts one, so calls still run concurrently; at most maxIdle
// workers wait for the next call, and they end with the session.
type workers struct {
	jobs chan func()
	done chan struct{}
	idle atomic.Int32
}

// maxIdleWorkers is how many workers wait for the next call.
const maxIdleWorkers = 4

func newWorkers() *workers {
	return &workers{jobs: make(chan func()), done: make(chan struct{})}
}

// call runs c on a worker and waits for it: c ends on its own when ctx
// is done, as it would on the SDK's goroutine. A panic in c, or c ending
// its goroutine, goes on in the caller as if c had run there: the
// process ends with c's panic (the SDK recovers none), not with whatever
// the caller would do with a result c never returned.
func (w *workers) call(ctx context.Context, c toolCall, args json.RawMessage) (*encodedResult, error) {
	var (
		res      *encodedResult
		err      error
		returned bool
		panicked *workerPanic
	)
	finished := make(chan struct{})
	w.run(func() {
		defer close(finished)
		defer func() {
			if !returned {
				if v := recover(); v != nil {
					panicked = &workerPanic{value: v, stack: debug.Stack()}
				}
			}
		}()
		res, err = c(ctx, args)
		returned = true
	})
	<-finished
	switch {
	case panicked != nil:
		panic(panicked)
	case !returned:
		runtime.Goexit()
	}
	return res, err
}

// workerPanic is a tool body's panic on a worker, raised again in the
// body's caller: the value and the worker's stack where it panicked.
type workerPanic struct {
	value any
	stack []byte
}

func (p *workerPanic) Error() string {
	return fmt.Sprintf("%v\n\ngoroutine of the tool body (a session worker):\n%s", p.value, p.stack)
}

// Unwrap returns the panic's value when it is an error.
func (p *workerPanic) Unwrap() error {
	err, _ := p.value.(error)
	return err
}

// run hands job to an idle worker, or to a new one.
func (w *workers) run(job func()) {
	select {
	case w.jobs <- job:
	default:
		go w.loop(job)
	}
}

func (w *workers) loop(job func()) {
	for {
		job()
		if w.idle.Add(1) > maxIdleWorkers {
			w.idle.Add(-1)
			return
		}
		select {
		case job = <-w.jobs:
			w.idle.Add(-1)
		case <-w.done:
			return
		}
	}
}

// stop ends the idle workers, and each busy one when its call returns.
func (w *workers) stop() { close(w.done) }
