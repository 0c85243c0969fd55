package server

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func listen(t *testing.T) net.Listener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return ln
}

func TestServeShutsDownGracefully(t *testing.T) {
	h := New(nil)
	started := make(chan struct{}, 64)
	release := make(chan struct{})
	var inflight atomic.Int32 // handlers running, response writes included
	slow := jsonHandler(h, func(ctx context.Context, r *echoReq) (any, error) {
		started <- struct{}{}
		<-release
		return map[string]string{"name": r.Name, "pad": strings.Repeat("x", 64<<10)}, nil
	})
	h.routes["/slow"] = route{http.MethodPost, func(w http.ResponseWriter, r *http.Request) {
		inflight.Add(1)
		defer inflight.Add(-1)
		slow(w, r)
	}}
	ln := listen(t)
	url := "http://" + ln.Addr().String()
	ctx, cancel := context.WithCancel(context.Background())
	var shutDown atomic.Bool
	done := make(chan error, 1)
	go func() {
		h.serve.ShutdownTimeout = 10 * time.Second
		h.serve.OnShutdown = func(context.Context) error {
			if n := inflight.Load(); n != 0 {
				return fmt.Errorf("providers shut down with %d requests in flight", n)
			}
			shutDown.Store(true)
			return nil
		}
		done <- Serve(ctx, ln, h)
	}()

	const n = 16
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Go(func() {
			resp, err := http.Post(url+"/slow", "application/json", strings.NewReader(fmt.Sprintf(`{"name":"r%d"}`, i)))
			if err != nil {
				errs <- err
				return
			}
			defer resp.Body.Close()
			b, err := io.ReadAll(resp.Body)
			if err != nil || resp.StatusCode != 200 || !strings.Contains(string(b), fmt.Sprintf(`"r%d"`, i)) || len(b) < 64<<10 {
				errs <- fmt.Errorf("request %d: status %d, %d bytes, err %v", i, resp.StatusCode, len(b), err)
			}
		})
	}
	for range n {
		<-started
	}
	cancel() // as SIGTERM does in ctxkit serve
	// The listener stops accepting while the requests are still running.
	deadline := time.Now().Add(5 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", ln.Addr().String(), 100*time.Millisecond)
		if err != nil {
			break
		}
		c.Close()
		if time.Now().After(deadline) {
			t.Fatal("listener still accepting after shutdown began")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if shutDown.Load() {
		t.Fatal("providers shut down before in-flight requests finished")
	}
	close(release)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("Serve: %v", err)
	}
	if !shutDown.Load() {
		t.Fatal("OnShutdown not called")
	}
}

func TestServeReportsListenerFailure(t *testing.T) {
	ln := listen(t)
	ln.Close()
	err := Serve(context.Background(), ln, New(nil))
	if err == nil || !errors.Is(err, net.ErrClosed) {
		t.Fatalf("Serve on a closed listener: %v", err)
	}
}

func TestSlowClientIsTimedOut(t *testing.T) {
	h := New(&Options{Timeout: 300 * time.Millisecond})
	h.routes["/echo"] = route{http.MethodPost, echoHandler(h)}
	ln := listen(t)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Serve(ctx, ln, h) }()
	defer func() {
		cancel()
		<-done
	}()

	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprintf(c, "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n")
	start := time.Now()
	// One byte every 50 ms: the body would take 50 s to arrive.
	stop := make(chan struct{})
	go func() {
		tick := time.NewTicker(50 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
				if _, err := c.Write([]byte(" ")); err != nil {
					return
				}
			}
		}
	}()
	defer close(stop)
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("no response to a slow client: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestTimeout {
		t.Fatalf("status %d, want 408", resp.StatusCode)
	}
	if el := time.Since(start); el > 2*time.Second {
		t.Fatalf("slow client held the handler for %v", el)
	}
	t.Logf("a client sending 20 bytes/s got 408 after %v (timeout 300ms)", time.Since(start).Round(time.Millisecond))
}
