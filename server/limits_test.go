package server

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/ctxkit/ctxkit/server/api"
)

// serveHandler runs Serve for h on a loopback port and returns the
// listener's address; the server stops with the test.
func serveHandler(t *testing.T, h *Handler) string {
	t.Helper()
	ln := listen(t)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Serve(ctx, ln, h) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	})
	return ln.Addr().String()
}

// postRaw sends a compose request with the given declared length and the
// first len(sent) bytes of its body, and returns the connection.
func postRaw(t *testing.T, addr string, declared int, sent string) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	fmt.Fprintf(c, "POST /v1/compose HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", declared, sent)
	return c
}

func readStatus(t *testing.T, c net.Conn) (*http.Response, string) {
	t.Helper()
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("read response: %v", err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

// TestBodiesInFlightAreBounded fills the budget of body bytes in flight
// with one stalled upload and expects a second upload to be refused with
// 503 and Retry-After, while the budget reserved follows the bytes that
// arrived, not the Content-Length announced; once the first upload ends,
// the second goes through.
func TestBodiesInFlightAreBounded(t *testing.T) {
	const limit = 1 << 20
	h := New(&Options{MaxBodyBytes: limit, MaxBodyBytesInFlight: limit})
	addr := serveHandler(t, h)

	// Headers alone, announcing the whole limit: nothing is reserved.
	idle := postRaw(t, addr, limit, "")
	time.Sleep(100 * time.Millisecond)
	if n := h.bodies.Used(); n != 0 {
		t.Fatalf("headers alone reserved %d body bytes", n)
	}
	// 700 KiB of a 1 MiB body arrive, then the client stalls.
	part := `{"budget":10,"offers":[` + strings.Repeat(" ", 700<<10)
	stalled := postRaw(t, addr, limit, part)
	deadline := time.Now().Add(5 * time.Second)
	for h.bodies.Used() < 700<<10 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if n := h.bodies.Used(); n < 700<<10 || n > limit+1 {
		t.Fatalf("reserved %d bytes for 700 KiB received of a 1 MiB body", n)
	}
	body := `{"budget":10,"offers":[` + strings.Repeat(" ", 400<<10) + `]}`
	c := postRaw(t, addr, len(body), body)
	resp, text := readStatus(t, c)
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" || !strings.Contains(text, `"unavailable"`) || !strings.Contains(text, "in flight") {
		t.Fatalf("second upload over the budget: %d %q %s", resp.StatusCode, resp.Header.Get("Retry-After"), text)
	}
	// The stalled upload finishes; its reservation is returned.
	rest := strings.Repeat(" ", limit-len(part)-2) + "]}"
	if _, err := io.WriteString(stalled, rest); err != nil {
		t.Fatal(err)
	}
	if resp, text := readStatus(t, stalled); resp.StatusCode != http.StatusOK {
		t.Fatalf("completed upload: %d %s", resp.StatusCode, text)
	}
	c = postRaw(t, addr, len(body), body)
	if resp, text := readStatus(t, c); resp.StatusCode != http.StatusOK {
		t.Fatalf("upload after the budget freed: %d %s", resp.StatusCode, text)
	}
	idle.Close()
}

// getHealth fetches the health route in the background and sends its
// status (or error) on the returned channel.
func getHealth(addr string) <-chan error {
	got := make(chan error, 1)
	go func() {
		resp, err := http.Get("http://" + addr + api.PathHealth)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				err = fmt.Errorf("status %d", resp.StatusCode)
			}
		}
		got <- err
	}()
	return got
}

// within waits up to d for got and says whether it came.
func within(got <-chan error, d time.Duration) (done bool, err error) {
	select {
	case err := <-got:
		return true, err
	case <-time.After(d):
		return false, nil
	}
}

// TestConnectionsAreBounded holds the only two connection slots with
// requests in flight (stalled uploads) and expects a third client to wait
// until one closes, then be answered: a busy connection is never closed
// for a newcomer.
func TestConnectionsAreBounded(t *testing.T) {
	addr := serveHandler(t, New(&Options{MaxConnections: 2}))
	held := []net.Conn{postRaw(t, addr, 100, "{"), postRaw(t, addr, 100, "{")}
	got := getHealth(addr)
	// Past the grace a silent connection has: busy ones must still stand.
	if done, err := within(got, 1500*time.Millisecond); done {
		t.Fatalf("a third connection was served while two requests held the slots: %v", err)
	}
	held[0].Close()
	if done, err := within(got, 5*time.Second); !done || err != nil {
		t.Fatalf("after a slot freed: answered %t, %v", done, err)
	}
	held[1].Close()
}

// TestIdleConnectionsGiveWay fills both connection slots with idle
// keep-alive connections and expects a third client to be answered at
// once, in place of one of them (the one the server saw go idle first),
// not after the 2-minute idle timeout.
func TestIdleConnectionsGiveWay(t *testing.T) {
	addr := serveHandler(t, New(&Options{MaxConnections: 2}))
	var held []net.Conn
	for range 2 {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		fmt.Fprintf(c, "GET %s HTTP/1.1\r\nHost: x\r\n\r\n", api.PathHealth)
		if resp, text := readStatus(t, c); resp.StatusCode != http.StatusOK {
			t.Fatalf("held connection: %d %s", resp.StatusCode, text)
		}
		held = append(held, c)
	}
	if done, err := within(getHealth(addr), 5*time.Second); !done || err != nil {
		t.Fatalf("idle connections locked a new client out: answered %t, %v", done, err)
	}
	closed := 0
	for _, c := range held {
		_ = c.SetReadDeadline(time.Now().Add(time.Second))
		if _, err := c.Read(make([]byte, 1)); err != nil && !errors.Is(err, os.ErrDeadlineExceeded) {
			closed++
		}
	}
	if closed != 1 {
		t.Fatalf("%d idle connections were closed for one newcomer, want 1", closed)
	}
}

// TestBodyBudgetHoldsOneBody: a bound on the bodies in flight below one
// body of the size limit is raised to it, so one such body always fits.
func TestBodyBudgetHoldsOneBody(t *testing.T) {
	if h := New(&Options{MaxBodyBytesInFlight: 32 << 20}); h.bodies.Limit() != 32<<20 {
		t.Fatalf("handler budget %d", h.bodies.Limit())
	}
	if h := New(&Options{MaxBodyBytes: 64 << 20, MaxBodyBytesInFlight: 1}); h.bodies.Limit() != 64<<20+1 {
		t.Fatalf("a budget below one body of the limit was kept: %d", h.bodies.Limit())
	}
}
