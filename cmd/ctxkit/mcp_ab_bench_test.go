package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ctxkit/ctxkit/internal/procstat"
)

// BenchmarkQueryContextAB compares this tree's ctxkit mcp with another
// build (CTXKIT_MCP_BASELINE names its binary, e.g. main's) call by call:
// each iteration runs the query in process, then as a query_context call to
// each child in turn (the order alternating), so all three see the same
// load on a shared machine.
// It reports each child's added-p50-ms and, from /proc, the CPU time each
// child spends per call (child-cpu-ms/op), beside the client's.
func BenchmarkQueryContextAB(b *testing.B) {
	base := os.Getenv("CTXKIT_MCP_BASELINE")
	if base == "" {
		b.Skip("set CTXKIT_MCP_BASELINE to the ctxkit binary to compare with")
	}
	eachBudget(b, func(b *testing.B, budget int) { benchAB(b, budget, base) })
}

// abChild is one ctxkit mcp child under comparison.
type abChild struct {
	name  string
	cmd   *exec.Cmd
	cs    *mcp.ClientSession
	added []time.Duration
	cpu0  time.Duration
	self  time.Duration // client CPU spent on this child's calls
}

func benchAB(b *testing.B, budget int, base string) {
	docs, _ := filepath.Abs(filepath.Join("..", "..", "docs"))
	query := inProcessQuery(b, docs, budget)
	children := []*abChild{{name: "baseline"}, {name: "this"}}
	for i, bin := range []string{base, sharedCtxkit(b)} {
		c := children[i]
		c.cmd = exec.Command(bin, "mcp", docs)
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil).Connect(context.Background(),
			&mcp.CommandTransport{Command: c.cmd}, nil)
		if err != nil {
			b.Fatal(err)
		}
		c.cs = cs
		defer cs.Close()
	}
	args := map[string]any{"goal": benchGoal, "budget": budget, "max_frames": 16}
	call := func(c *abChild) {
		if _, err := c.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "query_context", Arguments: args}); err != nil {
			b.Fatal(err)
		}
	}
	for _, c := range children { // warm up, then start counting CPU
		call(c)
		c.cpu0 = procCPU(b, c.cmd.Process.Pid)
	}
	order := [][]*abChild{children, {children[1], children[0]}}
	for i := 0; b.Loop(); i++ {
		t0 := time.Now()
		query()
		in := time.Since(t0)
		// Which child goes first alternates: the second call of an
		// iteration finds the client's caches warm.
		for _, c := range order[i%2] {
			s0, t1 := selfCPU(), time.Now()
			call(c)
			c.added = append(c.added, time.Since(t1)-in)
			c.self += selfCPU() - s0
		}
	}
	for _, c := range children {
		n := len(c.added)
		if n == 0 {
			return
		}
		slices.Sort(c.added)
		b.ReportMetric(float64(c.added[n/2].Microseconds())/1000, c.name+"-added-p50-ms")
		child := procCPU(b, c.cmd.Process.Pid) - c.cpu0
		b.ReportMetric(float64(child.Microseconds())/1000/float64(n), c.name+"-child-cpu-ms/op")
		b.ReportMetric(float64(c.self.Microseconds())/1000/float64(n), c.name+"-client-cpu-ms/op")
	}
}

// procCPU is a running process's user and system CPU time from /proc.
func procCPU(b *testing.B, pid int) time.Duration {
	st, err := procstat.Read(pid)
	if err != nil {
		b.Fatal(err)
	}
	return st.CPU()
}
