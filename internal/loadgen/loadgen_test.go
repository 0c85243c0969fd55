package loadgen

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func TestRunCountsAndStopsAtMaxRequests(t *testing.T) {
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
	rep, err := Run(context.Background(), Options{URL: ts.URL, Body: []byte(`{}`), Conns: 8, Duration: 20 * time.Second, MaxRequests: 200})
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
