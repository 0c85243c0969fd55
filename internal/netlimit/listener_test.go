package netlimit

import (
	"bufio"
	"errors"
	"io"
	"net"
	"net/http"
	"testing"
	"time"
)

// limitedServer serves ok (or handler) over a listener of n slots whose
// idle and read-header timeouts are a minute, longer than any test waits,
// so that only the listener can free a slot.
func limitedServer(t *testing.T, n int, handler http.HandlerFunc) string {
	t.Helper()
	raw, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln, hook := Listener(raw, n)
	if handler == nil {
		handler = func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "ok") }
	}
	hs := &http.Server{Handler: handler, ReadHeaderTimeout: time.Minute, IdleTimeout: time.Minute, ConnState: hook}
	go hs.Serve(ln)
	t.Cleanup(func() { hs.Close() })
	return raw.Addr().String()
}

// keepAlive is one client connection that sends requests in turn.
type keepAlive struct {
	net.Conn
	r *bufio.Reader
}

func dial(t *testing.T, addr string) *keepAlive {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return &keepAlive{Conn: c, r: bufio.NewReader(c)}
}

// send writes one GET request without waiting for its answer.
func (k *keepAlive) send(t *testing.T) {
	t.Helper()
	if _, err := io.WriteString(k, "GET / HTTP/1.1\r\nHost: test\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
}

// answer reads one response within d and returns its body.
func (k *keepAlive) answer(d time.Duration) (string, error) {
	k.SetReadDeadline(time.Now().Add(d))
	resp, err := http.ReadResponse(k.r, nil)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return string(b), err
}

// closed reports whether the server has closed k (a read sees EOF or a
// reset within d).
func (k *keepAlive) closed(d time.Duration) bool {
	k.SetReadDeadline(time.Now().Add(d))
	_, err := k.r.ReadByte()
	var ne net.Error
	return err != nil && !(errors.As(err, &ne) && ne.Timeout())
}

// countClosed says how many of ks the server has closed, waiting up to a
// second for the first and a moment for the rest.
func countClosed(ks []*keepAlive) int {
	n := 0
	for _, k := range ks {
		wait := 100 * time.Millisecond
		if n == 0 {
			wait = time.Second
		}
		if k.closed(wait) {
			n++
		}
	}
	return n
}

// Quiet connections that fill every slot give way to a new client, one
// for one, instead of holding the server for the idle or read-header
// timeout: an idle keep-alive connection at once, one that has sent
// nothing since connecting after the grace period.
func TestQuietConnectionsGiveWayToNewClients(t *testing.T) {
	for _, tc := range []struct {
		name  string
		quiet func(t *testing.T, addr string) *keepAlive
	}{
		{"idle after a request", func(t *testing.T, addr string) *keepAlive {
			k := dial(t, addr)
			k.send(t)
			if body, err := k.answer(5 * time.Second); err != nil || body != "ok" {
				t.Fatalf("first request: %q, %v", body, err)
			}
			return k
		}},
		{"silent since connecting", dial},
	} {
		t.Run(tc.name, func(t *testing.T) {
			addr := limitedServer(t, 2, nil)
			quiet := []*keepAlive{tc.quiet(t, addr), tc.quiet(t, addr)}
			newcomer := dial(t, addr)
			newcomer.send(t)
			if body, err := newcomer.answer(5 * time.Second); err != nil || body != "ok" {
				t.Fatalf("a new client was not served while quiet connections held every slot: %q, %v", body, err)
			}
			// Which of the two went quiet first is the server's to
			// observe (its state hook runs after the client has read the
			// answer), so the test asks only that exactly one gave way.
			if n := countClosed(quiet); n != 1 {
				t.Errorf("%d quiet connections were closed for one newcomer, want 1", n)
			}
		})
	}
}

// A connection serving a request is never closed for a newcomer: the
// newcomer waits until a request ends.
func TestBusyConnectionsAreNotClosed(t *testing.T) {
	release := make(chan struct{})
	entered := make(chan struct{}, 3)
	addr := limitedServer(t, 2, func(w http.ResponseWriter, _ *http.Request) {
		entered <- struct{}{}
		<-release
		io.WriteString(w, "ok")
	})
	busy := []*keepAlive{dial(t, addr), dial(t, addr)}
	for _, k := range busy {
		k.send(t)
	}
	<-entered
	<-entered
	newcomer := dial(t, addr)
	newcomer.send(t)
	// Past the grace a silent connection gets: a busy one must still stand.
	if body, err := newcomer.answer(newConnGrace + 500*time.Millisecond); err == nil {
		t.Fatalf("the newcomer was served (%q) while both slots were busy", body)
	}
	close(release)
	for i, k := range busy {
		if body, err := k.answer(5 * time.Second); err != nil || body != "ok" {
			t.Fatalf("busy request %d was cut off: %q, %v", i, body, err)
		}
	}
	if body, err := newcomer.answer(5 * time.Second); err != nil || body != "ok" {
		t.Fatalf("the newcomer was not served once a slot was free: %q, %v", body, err)
	}
}
