package server

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// latencyBuckets are the upper bounds, in seconds, of the request-duration
// histogram.
var latencyBuckets = [...]float64{0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10}

// metrics counts what the handler does, for GET /metrics. It belongs to one
// Handler (there is no global registry); all methods are safe for concurrent
// use.
type metrics struct {
	routes map[string]*routeMetrics // fixed at construction; read-only after

	framesComposed atomic.Uint64

	mu        sync.Mutex
	excluded  map[string]uint64 // by exclusion reason
	providers map[string]uint64 // by provider outcome kind
}

type routeMetrics struct {
	mu    sync.Mutex
	codes map[int]uint64

	buckets [len(latencyBuckets)]atomic.Uint64
	count   atomic.Uint64
	sumNs   atomic.Uint64
}

func newMetrics(routes []string) *metrics {
	m := &metrics{
		routes:    make(map[string]*routeMetrics, len(routes)),
		excluded:  map[string]uint64{},
		providers: map[string]uint64{},
	}
	for _, r := range routes {
		m.routes[r] = &routeMetrics{codes: map[int]uint64{}}
	}
	return m
}

// observe records one finished request. Unknown routes are counted under
// "other" so that arbitrary paths cannot grow the label set.
func (m *metrics) observe(route string, code int, d time.Duration) {
	rm, ok := m.routes[route]
	if !ok {
		rm = m.routes[routeOther]
	}
	rm.mu.Lock()
	rm.codes[code]++
	rm.mu.Unlock()
	s := d.Seconds()
	for i, le := range latencyBuckets {
		if s <= le {
			rm.buckets[i].Add(1)
		}
	}
	rm.count.Add(1)
	rm.sumNs.Add(uint64(max(d, 0)))
}

// addComposed counts frames included in a composed prompt.
func (m *metrics) addComposed(n int) { m.framesComposed.Add(uint64(n)) }

// addExcluded counts n frames excluded for reason.
func (m *metrics) addExcluded(reason string, n int) {
	if n == 0 {
		return
	}
	m.mu.Lock()
	m.excluded[reason] += uint64(n)
	m.mu.Unlock()
}

// addProviderOutcome counts one provider leg that ended with kind.
func (m *metrics) addProviderOutcome(kind string) {
	m.mu.Lock()
	m.providers[kind]++
	m.mu.Unlock()
}

// writeTo writes every metric in the Prometheus text exposition format
// (version 0.0.4), in a stable order.
func (m *metrics) writeTo(w io.Writer) (int64, error) {
	cw := &countWriter{w: bufio.NewWriter(w)}
	routes := make([]string, 0, len(m.routes))
	for r := range m.routes {
		routes = append(routes, r)
	}
	sort.Strings(routes)

	fmt.Fprintln(cw, "# HELP ctxkit_http_requests_total HTTP requests answered, by route and status code.")
	fmt.Fprintln(cw, "# TYPE ctxkit_http_requests_total counter")
	for _, r := range routes {
		rm := m.routes[r]
		rm.mu.Lock()
		codes := make([]int, 0, len(rm.codes))
		for c := range rm.codes {
			codes = append(codes, c)
		}
		sort.Ints(codes)
		for _, c := range codes {
			fmt.Fprintf(cw, "ctxkit_http_requests_total{route=\"%s\",code=\"%d\"} %d\n", lv(r), c, rm.codes[c])
		}
		rm.mu.Unlock()
	}

	fmt.Fprintln(cw, "# HELP ctxkit_http_request_duration_seconds Time from routing a request to its last byte written, by route.")
	fmt.Fprintln(cw, "# TYPE ctxkit_http_request_duration_seconds histogram")
	for _, r := range routes {
		rm := m.routes[r]
		count := rm.count.Load()
		for i, le := range latencyBuckets {
			fmt.Fprintf(cw, "ctxkit_http_request_duration_seconds_bucket{route=\"%s\",le=\"%s\"} %d\n", lv(r), formatFloat(le), min(rm.buckets[i].Load(), count))
		}
		fmt.Fprintf(cw, "ctxkit_http_request_duration_seconds_bucket{route=\"%s\",le=\"+Inf\"} %d\n", lv(r), count)
		fmt.Fprintf(cw, "ctxkit_http_request_duration_seconds_sum{route=\"%s\"} %s\n", lv(r), formatFloat(float64(rm.sumNs.Load())/1e9))
		fmt.Fprintf(cw, "ctxkit_http_request_duration_seconds_count{route=\"%s\"} %d\n", lv(r), count)
	}

	fmt.Fprintln(cw, "# HELP ctxkit_frames_composed_total Frames included in composed prompts.")
	fmt.Fprintln(cw, "# TYPE ctxkit_frames_composed_total counter")
	fmt.Fprintf(cw, "ctxkit_frames_composed_total %d\n", m.framesComposed.Load())

	m.mu.Lock()
	writeLabelled(cw, "ctxkit_frames_excluded_total", "Frames excluded from composed prompts, by reason.", "reason", m.excluded)
	writeLabelled(cw, "ctxkit_provider_outcomes_total", "Provider legs of /v1/query fan-outs, by outcome kind.", "kind", m.providers)
	m.mu.Unlock()

	if err := cw.w.Flush(); err != nil && cw.err == nil {
		cw.err = err
	}
	return cw.n, cw.err
}

func writeLabelled(w io.Writer, name, help, label string, vals map[string]uint64) {
	fmt.Fprintf(w, "# HELP %s %s\n# TYPE %s counter\n", name, help, name)
	keys := make([]string, 0, len(vals))
	for k := range vals {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(w, "%s{%s=\"%s\"} %d\n", name, label, lv(k), vals[k])
	}
}

func formatFloat(f float64) string {
	if math.IsInf(f, 1) {
		return "+Inf"
	}
	return strconv.FormatFloat(f, 'g', -1, 64)
}

type countWriter struct {
	w   *bufio.Writer
	n   int64
	err error
}

// Write counts bytes and keeps the first error.
func (c *countWriter) Write(p []byte) (int, error) {
	if c.err != nil {
		return 0, c.err
	}
	n, err := c.w.Write(p)
	c.n += int64(n)
	c.err = err
	return n, err
}

// lv escapes a label value as the exposition format requires.
func lv(s string) string { return labelEscaper.Replace(s) }

var labelEscaper = strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`)
