package loadgen

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestRunCountsAndStopsAtMaxRequests(t *testing.T) {
	for _, raw := range []bool{false, true} {
		t.Run(map[bool]string{false: "net/http", true: "raw"}[raw], func(t *testing.T) { testCountsAndStops(t, raw) })
	}
}

func testCountsAndStops(t *testing.T, raw bool) {
	var served atomic.Int64
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := served.Add(1)
		if r.Header.Get("Content-Type") != "application/json" {
			w.WriteHeader(415)
			return
		}
		if n%10 == 0 {
			w.WriteHeader(400)
			return
		}
		_, _ = w.Write([]byte(`{"ok":true}`))
	}))
	defer ts.Close()
	rep, err := Run(context.Background(), Options{URL: ts.URL, Body: []byte(`{}`), Conns: 8, Duration: 20 * time.Second, MaxRequests: 200, Raw: raw})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Requests != 200 || served.Load() != 200 {
		t.Fatalf("requests %d served %d, want 200", rep.Requests, served.Load())
	}
	if rep.Statuses[400] != 20 || rep.Statuses[200] != 180 || rep.OK != 180 || rep.Broken != 0 {
		t.Fatalf("report %v", rep)
	}
	if rep.P50 <= 0 || rep.P50 > rep.P99 || rep.P99 > rep.Max || rep.RPS() <= 0 {
		t.Fatalf("percentiles %v", rep)
	}
	if !strings.Contains(rep.String(), "requests=200") {
		t.Fatalf("String() = %q", rep)
	}
}

func TestRunStopsAtDurationAndChecksBodies(t *testing.T) {
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte(`not json`))
	}))
	defer ts.Close()
	start := time.Now()
	rep, err := Run(context.Background(), Options{URL: ts.URL, Conns: 4, Duration: 200 * time.Millisecond,
		Check: func(b []byte) error {
			if string(b) != `{"ok":true}` {
				return errors.New("unexpected body")
			}
			return nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	if el := time.Since(start); el > 3*time.Second {
		t.Fatalf("a 200 ms run took %v", el)
	}
	if rep.Broken == 0 || rep.OK != 0 || rep.FirstErr == nil {
		t.Fatalf("bodies failing Check not counted as broken: %v", rep)
	}
}

func TestRunRefusesNonLoopbackAndBadOptions(t *testing.T) {
	for _, u := range []string{"http://example.com/", "http://10.0.0.1:80/", "://bad"} {
		if _, err := Run(context.Background(), Options{URL: u}); err == nil {
			t.Errorf("%s accepted", u)
		}
	}
	if _, err := Run(context.Background(), Options{URL: "http://127.0.0.1:1/", Duration: time.Hour}); err == nil {
		t.Error("an hour-long run accepted")
	}
}

func TestRunCountsRefusedConnections(t *testing.T) {
	ts := httptest.NewServer(http.NotFoundHandler())
	u := ts.URL
	ts.Close()
	rep, err := Run(context.Background(), Options{URL: u, Conns: 2, Duration: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Refused == 0 || rep.Broken != 0 || rep.Requests != 0 {
		t.Fatalf("refused connections: %v", rep)
	}
}

func TestPercentile(t *testing.T) {
	var d []time.Duration
	for i := 1; i <= 100; i++ {
		d = append(d, time.Duration(i))
	}
	if pct(d, 50) != 50 || pct(d, 99) != 99 || pct(d, 100) != 100 || pct(nil, 50) != 0 || pct(d[:1], 99) != 1 {
		t.Fatalf("pct: %v %v %v", pct(d, 50), pct(d, 99), pct(d, 100))
	}
}

// TestRunOpenLoopKeepsTheSchedule checks that with a rate the run sends no
// more than the schedule allows, however fast the server is.
func TestRunOpenLoopKeepsTheSchedule(t *testing.T) {
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte(`{}`))
	}))
	defer ts.Close()
	rep, err := Run(context.Background(), Options{URL: ts.URL, Conns: 4, Duration: 300 * time.Millisecond, Rate: 200})
	if err != nil {
		t.Fatal(err)
	}
	// Due times k/200 s fall inside 300 ms for k < 60.
	if rep.Requests > 60 || rep.Requests < 20 || rep.Broken != 0 {
		t.Fatalf("open loop at 200/s for 300 ms: %v", rep)
	}
}

// TestRunOpenLoopChargesTheBacklog checks that a server too slow for the
// rate is charged for the queue it causes: latency is timed from each
// request's due time, so it grows well past the server's own 20 ms.
func TestRunOpenLoopChargesTheBacklog(t *testing.T) {
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(20 * time.Millisecond)
		_, _ = w.Write([]byte(`{}`))
	}))
	defer ts.Close()
	rep, err := Run(context.Background(), Options{URL: ts.URL, Conns: 1, Duration: 400 * time.Millisecond, Rate: 200})
	if err != nil {
		t.Fatal(err)
	}
	// One connection serves at most 50/s against 200/s offered: by the
	// tenth request the backlog alone is 10×20 ms - 10×5 ms = 150 ms.
	if rep.Requests < 5 || rep.Max < 100*time.Millisecond {
		t.Fatalf("slow server at 200/s offered: %v", rep)
	}
}

// TestRawClientReadsEveryResponseShape checks the raw client against a
// net/http server: bodies of several sizes, a server that closes the
// connection after some responses, and one that answers without
// Content-Length (a broken response for this client).
func TestRawClientReadsEveryResponseShape(t *testing.T) {
	var served atomic.Int64
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := served.Add(1)
		if n%7 == 0 {
			w.Header().Set("Connection", "close")
		}
		body := strings.Repeat("x", int(n%5)*10000)
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		_, _ = io.WriteString(w, body)
	}))
	defer ts.Close()
	var sizes sync.Map
	rep, err := Run(context.Background(), Options{URL: ts.URL, Conns: 3, Duration: 20 * time.Second, MaxRequests: 100, Raw: true,
		Check: func(b []byte) error {
			if strings.Trim(string(b), "x") != "" {
				return errors.New("not all x")
			}
			sizes.Store(len(b), true)
			return nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Requests != 100 || rep.OK != 100 || rep.Broken+rep.Dropped+rep.Refused != 0 {
		t.Fatalf("report %v (first error %v, first dropped %v)", rep, rep.FirstErr, rep.FirstDropped)
	}
	for _, n := range []int{0, 10000, 40000} {
		if _, ok := sizes.Load(n); !ok {
			t.Errorf("no body of %d bytes was read", n)
		}
	}

	chunked := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.(http.Flusher).Flush() // no Content-Length: chunked
		_, _ = io.WriteString(w, "late")
	}))
	defer chunked.Close()
	rep, err = Run(context.Background(), Options{URL: chunked.URL, Conns: 1, Duration: 20 * time.Second, MaxRequests: 3, Raw: true})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Broken != 3 || rep.FirstErr == nil || !strings.Contains(rep.FirstErr.Error(), "Content-Length") {
		t.Fatalf("chunked answers: %v (first error %v)", rep, rep.FirstErr)
	}
}
