package main

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ctxkit/ctxkit/compose"
	"github.com/ctxkit/ctxkit/frame"
	"github.com/ctxkit/ctxkit/host"
	"github.com/ctxkit/ctxkit/host/files"
	"github.com/ctxkit/ctxkit/mcpserver"
)

const benchGoal = "how is the budget split between providers"

// BenchmarkQueryContext compares one query over the repository's docs run
// in process (fan-out and composition, as ctxkit query does) with the same
// query as a query_context call to a ctxkit mcp child over stdio. It
// reports the median latency of each as p50-ms.
func BenchmarkQueryContext(b *testing.B) {
	for _, budget := range []int{200, 2000} {
		b.Run(fmt.Sprintf("budget=%d", budget), func(b *testing.B) { benchQueryContext(b, budget) })
	}
}

func benchQueryContext(b *testing.B, benchBudget int) {
	docs, _ := filepath.Abs(filepath.Join("..", "..", "docs"))
	b.Run("in-process", func(b *testing.B) {
		query := inProcessQuery(b, docs, benchBudget)
		lat := make([]time.Duration, 0, b.N)
		cpu0 := selfCPU()
		for b.Loop() {
			t := time.Now()
			query()
			lat = append(lat, time.Since(t))
		}
		reportP50(b, lat)
		b.ReportMetric(float64((selfCPU()-cpu0).Microseconds())/1000/float64(len(lat)), "cpu-ms/op")
	})
	b.Run("in-memory", func(b *testing.B) {
		ctx := context.Background()
		ix, err := files.Build(ctx, docs, nil)
		if err != nil {
			b.Fatal(err)
		}
		h := host.New(nil)
		defer h.Close(ctx)
		if err := h.AddInProcess("files", files.New(ix)); err != nil {
			b.Fatal(err)
		}
		srv, err := mcpserver.NewServer(h, nil)
		if err != nil {
			b.Fatal(err)
		}
		ct, st := mcp.NewInMemoryTransports()
		ss, err := srv.Connect(ctx, st, nil)
		if err != nil {
			b.Fatal(err)
		}
		defer ss.Close()
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil).Connect(ctx, ct, nil)
		if err != nil {
			b.Fatal(err)
		}
		defer cs.Close()
		args := map[string]any{"goal": benchGoal, "budget": benchBudget, "max_frames": 16}
		lat := make([]time.Duration, 0, b.N)
		cpu0 := selfCPU()
		for b.Loop() {
			t := time.Now()
			r, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "query_context", Arguments: args})
			if err != nil || r.IsError {
				b.Fatal(err, r)
			}
			lat = append(lat, time.Since(t))
		}
		reportP50(b, lat)
		b.ReportMetric(float64((selfCPU()-cpu0).Microseconds())/1000/float64(len(lat)), "cpu-ms/op")
	})
	b.Run("stdio", func(b *testing.B) {
		bin := sharedCtxkit(b)
		cmd := exec.Command(bin, "mcp", docs)
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil).Connect(context.Background(),
			&mcp.CommandTransport{Command: cmd}, nil)
		if err != nil {
			b.Fatal(err)
		}
		// The child's CPU time includes building its index once; measure
		// that with a session making no call, and subtract it.
		idle := childCPU(b, bin, docs)
		cpu0 := selfCPU()
		args := map[string]any{"goal": benchGoal, "budget": benchBudget, "max_frames": 16}
		lat := make([]time.Duration, 0, b.N)
		for b.Loop() {
			t := time.Now()
			r, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "query_context", Arguments: args})
			if err != nil || r.IsError {
				b.Fatal(err, r)
			}
			lat = append(lat, time.Since(t))
		}
		reportP50(b, lat)
		_ = cs.Close()
		parent := selfCPU() - cpu0
		if cmd.ProcessState != nil && len(lat) > 0 {
			child := cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime() - idle
			b.ReportMetric(float64((parent+child).Microseconds())/1000/float64(len(lat)), "cpu-ms/op")
		}
	})
}

// BenchmarkQueryContextAdded measures what stdio adds to the same query
// run in process, call by call: each iteration runs the query in process
// and then as a query_context call to a ctxkit mcp child, so both see the
// same load on a shared machine, and reports the median of the per-call
// differences as added-p50-ms (the "adds ≤ 2 ms, p50").
func BenchmarkQueryContextAdded(b *testing.B) {
	for _, budget := range []int{200, 2000} {
		b.Run(fmt.Sprintf("budget=%d", budget), func(b *testing.B) {
			docs, _ := filepath.Abs(filepath.Join("..", "..", "docs"))
			query := inProcessQuery(b, docs, budget)
			cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil).Connect(context.Background(),
				&mcp.CommandTransport{Command: exec.Command(sharedCtxkit(b), "mcp", docs)}, nil)
			if err != nil {
				b.Fatal(err)
			}
			defer cs.Close()
			args := map[string]any{"goal": benchGoal, "budget": budget, "max_frames": 16}
			added := make([]time.Duration, 0, b.N)
			for b.Loop() {
				t0 := time.Now()
				query()
				t1 := time.Now()
				r, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "query_context", Arguments: args})
				if err != nil || r.IsError {
					b.Fatal(err, r)
				}
				added = append(added, time.Since(t1)-t1.Sub(t0))
			}
			if len(added) > 0 {
				slices.Sort(added)
				b.ReportMetric(float64(added[len(added)/2].Microseconds())/1000, "added-p50-ms")
			}
		})
	}
}

// inProcessQuery returns one run of the benchmark's query in process:
// fan-out to a files provider over docs and composition, as ctxkit query
// does.
func inProcessQuery(b *testing.B, docs string, budget int) func() {
	ctx := context.Background()
	ix, err := files.Build(ctx, docs, nil)
	if err != nil {
		b.Fatal(err)
	}
	h := host.New(nil)
	b.Cleanup(func() { h.Close(ctx) })
	if err := h.AddInProcess("files", files.New(ix)); err != nil {
		b.Fatal(err)
	}
	q := &frame.Query{Goal: benchGoal, MaxFrames: 16, MaxTokens: uint32(budget)}
	return func() {
		fo := h.QueryAllBudgeted(ctx, q, uint32(budget))
		if res := fo.Compose(budget, &compose.Options{}); len(res.Citations) == 0 {
			b.Fatal("nothing composed")
		}
	}
}

// selfCPU is the user and system CPU time of this process so far.
func selfCPU() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// childCPU is the CPU time of a ctxkit mcp session that starts, indexes
// and ends without a call.
func childCPU(b *testing.B, bin, docs string) time.Duration {
	cmd := exec.Command(bin, "mcp", docs)
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil).Connect(context.Background(),
		&mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		b.Fatal(err)
	}
	_ = cs.Close()
	if cmd.ProcessState == nil {
		return 0
	}
	return cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
}

func reportP50(b *testing.B, lat []time.Duration) {
	if len(lat) == 0 {
		return
	}
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
}
