package files

import (
	"context"
	"go/build"
	"os"
	"path/filepath"
	"sort"
	"testing"
	"time"

	"github.com/ctxkit/ctxkit/frame"
)

// benchTree is the tree the benchmarks index: $CTXKIT_BENCH_TREE, else the
// Go distribution's src directory.
func benchTree(b *testing.B) string {
	if d := os.Getenv("CTXKIT_BENCH_TREE"); d != "" {
		return d
	}
	d := filepath.Join(build.Default.GOROOT, "src")
	if _, err := os.Stat(d); err != nil {
		b.Fatalf("no tree to index: set CTXKIT_BENCH_TREE (%v)", err)
	}
	return d
}

// BenchmarkIndex builds the index of the whole tree once per iteration.
func BenchmarkIndex(b *testing.B) {
	dir := benchTree(b)
	var ix *Index
	for b.Loop() {
		var err error
		ix, err = Build(context.Background(), dir, nil)
		if err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(ix.Files()), "files")
	b.ReportMetric(float64(ix.Stats().Chunks), "chunks")
	b.ReportMetric(float64(ix.Stats().Bytes)/(1<<20), "MiB")
	sk := ix.Stats().Skipped
	b.ReportMetric(float64(sk.Binary+sk.TooLarge), "skipped")
}

// BenchmarkQuery runs a set of queries against the tree's index and reports
// latency percentiles. With $CTXKIT_BENCH_STORE the index is kept in that
// file and mapped from it, as the CLI does, rather than built in memory.
func BenchmarkQuery(b *testing.B) {
	ix, err := Build(context.Background(), benchTree(b), &IndexOptions{Store: os.Getenv("CTXKIT_BENCH_STORE")})
	if err != nil {
		b.Fatal(err)
	}
	p := New(ix)
	goals := []string{
		"how does the garbage collector mark objects",
		"http server graceful shutdown",
		"parse a duration string",
		"tls handshake certificate verification",
		"goroutine scheduler work stealing",
		"json decoder unknown fields",
		"sort stable slice",
		"context deadline exceeded cancel",
	}
	var lat []time.Duration
	i := 0
	for b.Loop() {
		q := &frame.Query{Goal: goals[i%len(goals)], MaxFrames: 8, MaxTokens: 4000}
		i++
		start := time.Now()
		res, err := p.Query(context.Background(), q)
		lat = append(lat, time.Since(start))
		if err != nil || len(res.Frames) == 0 {
			b.Fatalf("query %q: %v", q.Goal, err)
		}
	}
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(lat[(len(lat)-1)*99/100].Microseconds()), "p99-µs")
}

// BenchmarkWarmQuery opens the stored index of an unchanged tree and
// answers one query per iteration, as every CLI query does: the walk, one
// stat per file, the store's checks, the search. It needs
// $CTXKIT_BENCH_STORE (built on first use).
func BenchmarkWarmQuery(b *testing.B) {
	store := os.Getenv("CTXKIT_BENCH_STORE")
	if store == "" {
		b.Skip("set CTXKIT_BENCH_STORE to the index file to open")
	}
	dir := benchTree(b)
	opts := &IndexOptions{Store: store}
	if ix, err := Build(context.Background(), dir, opts); err != nil {
		b.Fatal(err)
	} else {
		ix.Close()
	}
	for b.Loop() {
		ix, err := Build(context.Background(), dir, opts)
		if err != nil {
			b.Fatal(err)
		}
		if st := ix.Stats().State; st != StateFresh {
			b.Fatalf("state %s, want fresh", st)
		}
		res, err := New(ix).Query(context.Background(), &frame.Query{Goal: "how does the http server shut down gracefully", MaxFrames: 32, MaxTokens: 2000})
		if err != nil || len(res.Frames) == 0 {
			b.Fatalf("query: %v", err)
		}
		ix.Close()
	}
}
