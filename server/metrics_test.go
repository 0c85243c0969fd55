package server

import (
	"bufio"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ctxkit/ctxkit/server/api"
)

// sampleLine is the exposition grammar for one sample with optional labels.
var sampleLine = regexp.MustCompile(`^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{([a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\n]|\\.)*")(,[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\n]|\\.)*")*\})? ([0-9.e+-]+|\+Inf)$`)

// parseExposition checks every line of a Prometheus text document and
// returns the samples keyed by "name{labels}".
func parseExposition(t *testing.T, text string) map[string]float64 {
	t.Helper()
	out := map[string]float64{}
	typed := map[string]bool{}
	sc := bufio.NewScanner(strings.NewReader(text))
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "# HELP "):
		case strings.HasPrefix(line, "# TYPE "):
			f := strings.Fields(line)
			if len(f) != 4 || (f[3] != "counter" && f[3] != "histogram" && f[3] != "gauge") {
				t.Fatalf("bad TYPE line %q", line)
			}
			typed[f[2]] = true
		default:
			m := sampleLine.FindStringSubmatch(line)
			if m == nil {
				t.Fatalf("line %q is not a sample", line)
			}
			base := strings.TrimSuffix(strings.TrimSuffix(strings.TrimSuffix(m[1], "_bucket"), "_sum"), "_count")
			if !typed[m[1]] && !typed[base] {
				t.Fatalf("sample %q before its TYPE line", line)
			}
			v, err := strconv.ParseFloat(m[len(m)-1], 64)
			if err != nil {
				t.Fatalf("value in %q: %v", line, err)
			}
			key := line[:strings.LastIndexByte(line, ' ')]
			if _, dup := out[key]; dup {
				t.Fatalf("duplicate sample %q", key)
			}
			out[key] = v
		}
	}
	return out
}

func TestMetricsExposition(t *testing.T) {
	h := New(nil)
	for range 3 {
		h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", api.PathHealth, nil))
	}
	h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/nope/\"x\"", nil))
	h.metrics.addComposed(7)
	h.metrics.addExcluded("over_budget", 2)
	h.metrics.addExcluded("duplicate", 1)
	h.metrics.addExcluded("duplicate", 0)
	h.metrics.addProviderOutcome("frames")
	h.metrics.addProviderOutcome("timeout")
	h.metrics.addProviderOutcome("frames")

	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", api.PathMetrics, nil))
	if ct := rec.Header().Get("Content-Type"); !strings.HasPrefix(ct, "text/plain; version=0.0.4") {
		t.Fatalf("content type %q", ct)
	}
	s := parseExposition(t, rec.Body.String())
	want := map[string]float64{
		`ctxkit_http_requests_total{route="/healthz",code="200"}`:                 3,
		`ctxkit_http_requests_total{route="other",code="404"}`:                    1,
		`ctxkit_http_request_duration_seconds_count{route="/healthz"}`:            3,
		`ctxkit_http_request_duration_seconds_bucket{route="/healthz",le="+Inf"}`: 3,
		`ctxkit_frames_composed_total`:                                            7,
		`ctxkit_frames_excluded_total{reason="over_budget"}`:                      2,
		`ctxkit_frames_excluded_total{reason="duplicate"}`:                        1,
		`ctxkit_provider_outcomes_total{kind="frames"}`:                           2,
		`ctxkit_provider_outcomes_total{kind="timeout"}`:                          1,
	}
	for k, v := range want {
		if got, ok := s[k]; !ok || got != v {
			t.Errorf("%s = %v (present %v), want %v", k, got, ok, v)
		}
	}
	// Buckets are cumulative and end at the count.
	prev := -1.0
	for _, le := range latencyBuckets {
		v := s[`ctxkit_http_request_duration_seconds_bucket{route="/healthz",le="`+formatFloat(le)+`"}`]
		if v < prev || v > 3 {
			t.Fatalf("bucket le=%v is %v after %v", le, v, prev)
		}
		prev = v
	}
}

func TestMetricsObserveBuckets(t *testing.T) {
	m := newMetrics([]string{"r", routeOther})
	m.observe("r", 200, 3*time.Millisecond)
	m.observe("r", 200, 2*time.Second)
	m.observe("unknown", 500, time.Millisecond)
	var b strings.Builder
	if _, err := m.writeTo(&b); err != nil {
		t.Fatal(err)
	}
	s := parseExposition(t, b.String())
	for le, want := range map[string]float64{"0.0025": 0, "0.005": 1, "1": 1, "2.5": 2, "+Inf": 2} {
		if got := s[`ctxkit_http_request_duration_seconds_bucket{route="r",le="`+le+`"}`]; got != want {
			t.Errorf("le=%s: %v, want %v", le, got, want)
		}
	}
	if got := s[`ctxkit_http_request_duration_seconds_sum{route="r"}`]; got < 2.003 || got > 2.0031 {
		t.Errorf("sum %v, want 2.003", got)
	}
	if s[`ctxkit_http_requests_total{route="other",code="500"}`] != 1 {
		t.Errorf("unknown route not counted under other")
	}
}

func TestLabelEscaping(t *testing.T) {
	if got := lv("a\"b\\c\nd"); got != `a\"b\\c\nd` {
		t.Fatalf("lv = %q", got)
	}
}
