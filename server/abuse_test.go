package server_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ctxkit/ctxkit/internal/loadgen"
	"github.com/ctxkit/ctxkit/server"
	"github.com/ctxkit/ctxkit/server/api"
)

// startServe runs server.Serve for h on a loopback port and returns its
// base URL and a function that shuts it down (like SIGTERM in ctxkit serve)
// and returns Serve's error.
func startServe(t *testing.T, h *server.Handler) (string, func() error) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- server.Serve(ctx, ln, h) }()
	var stopped atomic.Bool
	var serr error
	stop := func() error {
		if stopped.CompareAndSwap(false, true) {
			cancel()
			serr = <-done
		}
		return serr
	}
	t.Cleanup(func() { _ = stop() })
	return "http://" + ln.Addr().String(), stop
}

// TestAbuseHugeBody sends a 1 GiB body, declared and chunked, and checks
// that the server answers 413 after reading at most about the limit.
func TestAbuseHugeBody(t *testing.T) {
	const limit = 1 << 20
	base, _ := startServe(t, server.New(&server.Options{MaxBodyBytes: limit}))
	for _, declared := range []bool{true, false} {
		t.Run(fmt.Sprintf("content-length=%v", declared), func(t *testing.T) {
			c, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			hdr := "POST /v1/compose HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
			if declared {
				hdr += "Content-Length: 1073741824\r\n\r\n"
			} else {
				hdr += "Transfer-Encoding: chunked\r\n\r\n"
			}
			if _, err := c.Write([]byte(hdr)); err != nil {
				t.Fatal(err)
			}
			var sent atomic.Int64
			go func() {
				chunk := make([]byte, 64<<10)
				for i := range chunk {
					chunk[i] = ' '
				}
				chunk[0] = '['
				frame := chunk
				if !declared {
					frame = append([]byte(fmt.Sprintf("%x\r\n", len(chunk))), append(chunk, "\r\n"...)...)
				}
				for sent.Load() < 1<<30 {
					_ = c.SetWriteDeadline(time.Now().Add(5 * time.Second))
					n, err := c.Write(frame)
					sent.Add(int64(n))
					if err != nil {
						return
					}
				}
			}()
			_ = c.SetReadDeadline(time.Now().Add(20 * time.Second))
			resp, err := http.ReadResponse(bufio.NewReader(c), nil)
			if err != nil {
				t.Fatalf("no response after sending %d bytes: %v", sent.Load(), err)
			}
			defer resp.Body.Close()
			var env struct {
				Error api.Error `json:"error"`
			}
			if err := json.NewDecoder(resp.Body).Decode(&env); err != nil {
				t.Fatal(err)
			}
			if resp.StatusCode != 413 || env.Error.Code != api.CodeBodyTooLarge {
				t.Fatalf("status %d %+v, want 413 body_too_large", resp.StatusCode, env.Error)
			}
			// The answer came long before 1 GiB could have been sent; what
			// was sent is bounded by the limit plus socket buffers.
			if n := sent.Load(); n > 64<<20 {
				t.Fatalf("client pushed %d bytes before the 413", n)
			}
			t.Logf("413 after the client pushed %d bytes of a 1 GiB body (limit %d)", sent.Load(), limit)
		})
	}
}

func TestAbuseTenThousandFrames(t *testing.T) {
	base, _ := startServe(t, server.New(nil))
	body := loadgen.ComposeBody(10000, 8)
	if len(body) >= 8<<20 { // the default MaxBodyBytes
		t.Fatalf("body of %d bytes would hit the size limit first", len(body))
	}
	start := time.Now()
	status, b := postRaw(t, base+api.PathCompose, body)
	t.Logf("10,000 offers (%d bytes): %d in %v", len(body), status, time.Since(start).Round(time.Millisecond))
	if status != 413 || !strings.Contains(string(b), `"code":"too_many_frames"`) || !strings.Contains(string(b), `"field":"offers"`) {
		t.Fatalf("10,000 frames: %d %s", status, b)
	}
}

func TestAbuseInvalidUTF8AndDeepNesting(t *testing.T) {
	base, _ := startServe(t, server.New(nil))
	good := string(loadgen.ComposeBody(2, 64))
	bad := strings.Replace(good, "chunk 1 of", "chunk \xff\xfe of", 1)
	if status, b := postRaw(t, base+api.PathCompose, []byte(bad)); status != 400 || !strings.Contains(string(b), `"code":"invalid_utf8"`) {
		t.Fatalf("invalid UTF-8: %d %s", status, b)
	}
	deep := `{"budget":1,"offers":[],"x":` + strings.Repeat("[", 200000) + strings.Repeat("]", 200000) + `}`
	if status, b := postRaw(t, base+api.PathCompose, []byte(deep)); status != 400 || !strings.Contains(string(b), "depth") {
		t.Fatalf("deep nesting: %d %s", status, b)
	}
	deepFrame := strings.Replace(good, `"citation_label"`, `"relations":`+strings.Repeat(`[`, 20000)+strings.Repeat(`]`, 20000)+`,"citation_label"`, 1)
	if status, b := postRaw(t, base+api.PathCompose, []byte(deepFrame)); status != 400 {
		t.Fatalf("deep nesting inside a frame: %d %s", status, b)
	}
}

// TestAbuseShutdownDuringLoad shuts the server down while 16 connections
// are sending compose requests: every response that starts must be complete
// and valid; after the shutdown, connections are refused. The shutdown
// starts once the server has answered 20 of them (its metrics say so), not
// after a fixed sleep, which on a loaded machine could come before the
// first answer.
func TestAbuseShutdownDuringLoad(t *testing.T) {
	base, stop := startServe(t, server.New(nil))
	stopped := make(chan error, 1)
	go func() {
		answered(base, api.PathCompose, 20)
		stopped <- stop()
	}()
	rep, err := loadgen.Run(context.Background(), loadgen.Options{
		URL: base + api.PathCompose, Body: loadgen.ComposeBody(20, 1024),
		Conns: 16, Duration: 2 * time.Second, Check: loadgen.CheckCompose, Idempotent: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := <-stopped; err != nil {
		t.Fatalf("Serve: %v", err)
	}
	t.Log(rep)
	if rep.Broken != 0 || rep.Dropped != 0 {
		t.Fatalf("%d broken and %d dropped responses during shutdown (first: %v; %v)", rep.Broken, rep.Dropped, rep.FirstErr, rep.FirstDropped)
	}
	if rep.OK == 0 || rep.Refused == 0 || rep.Statuses[200] != rep.Requests {
		t.Fatalf("want answers before the shutdown and refusals after: %v", rep)
	}
}

// answered returns once the server at base has answered at least n requests
// of route with 200, as its /metrics counts them, or after 30 s.
func answered(base, route string, n int) {
	line := fmt.Sprintf("ctxkit_http_requests_total{route=%q,code=\"200\"} ", route)
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		resp, err := http.Get(base + api.PathMetrics)
		if err != nil {
			continue
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		for _, l := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(l, line); ok {
				if got, err := strconv.Atoi(v); err == nil && got >= n {
					return
				}
			}
		}
	}
}
