// Command ctxkit-load measures `ctxkit serve` under load on loopback: it
// starts the server binary (or targets a running one), sends POST
// /v1/compose with N offers of SIZE bytes from CONNS keep-alive connections
// for DURATION, and prints throughput, latency percentiles, errors and the
// server's resident memory before and after. It stops by itself.
//
//	go build -o /tmp/ctxkit ./cmd/ctxkit
//	go run ./internal/loadgen/cmd/ctxkit-load -bin /tmp/ctxkit -duration 30s
//
// It sends with the raw HTTP/1.1 client unless -nethttp is given, and every
// answer must be byte-identical to the first (composition is
// deterministic). With -rate R the run is open-loop: R requests a second
// on a fixed schedule, latency timed from each request's due time.
//
// With -sigterm-after D it sends SIGTERM to the server D into the run and
// reports whether any response was broken (it must be none: in-flight
// requests finish, then connections are refused).
package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/ctxkit/ctxkit/internal/announce"
	"github.com/ctxkit/ctxkit/internal/loadgen"
	"github.com/ctxkit/ctxkit/internal/procstat"
)

func main() {
	bin := flag.String("bin", "", "ctxkit binary to start with `serve --addr 127.0.0.1:0` (or use -url)")
	url := flag.String("url", "", "base URL of a running server on loopback")
	offers := flag.Int("offers", 20, "offers per request")
	size := flag.Int("size", 1024, "content bytes per offer")
	conns := flag.Int("conns", 64, "concurrent connections")
	duration := flag.Duration("duration", 10*time.Second, "length of the measured run")
	warmup := flag.Duration("warmup", 2*time.Second, "unmeasured run before it")
	sigterm := flag.Duration("sigterm-after", 0, "send SIGTERM to the started server this far into the run")
	nethttp := flag.Bool("nethttp", false, "send with net/http's client instead of the raw HTTP/1.1 one (costs several times more CPU per request)")
	rate := flag.Float64("rate", 0, "open-loop: requests per second in all, latency timed from each request's due time (0: closed loop, back to back)")
	printBody := flag.Bool("print-body", false, "print the request body on stdout and exit (for other load tools)")
	flag.Parse()
	if *printBody {
		os.Stdout.Write(loadgen.ComposeBody(*offers, *size))
		return
	}
	if err := run(*bin, *url, *offers, *size, *conns, *duration, *warmup, *sigterm, *rate, !*nethttp); err != nil {
		fmt.Fprintln(os.Stderr, "ctxkit-load:", err)
		os.Exit(1)
	}
}

func run(bin, base string, offers, size, conns int, duration, warmup, sigterm time.Duration, rate float64, raw bool) error {
	var srv *exec.Cmd
	if bin != "" {
		var err error
		srv, base, err = start(bin)
		if err != nil {
			return err
		}
		defer func() {
			if srv.ProcessState == nil {
				_ = srv.Process.Signal(syscall.SIGTERM)
				_ = srv.Wait()
			}
		}()
	}
	if base == "" {
		return fmt.Errorf("give -bin or -url")
	}
	body := loadgen.ComposeBody(offers, size)
	target := strings.TrimSuffix(base, "/") + "/v1/compose"
	fmt.Printf("target %s: %d offers x %d B (body %d B), %d connections, %v (warm-up %v)\n", target, offers, size, len(body), conns, duration, warmup)
	if rate > 0 {
		fmt.Printf("open loop: %.0f requests/s offered, latency timed from each request's due time\n", rate)
	}
	ctx := context.Background()
	if warmup > 0 {
		if _, err := loadgen.Run(ctx, loadgen.Options{URL: target, Body: body, Conns: conns, Duration: warmup, Check: loadgen.CheckCompose, Raw: raw}); err != nil {
			return err
		}
	}
	var cpu0 time.Duration
	if srv != nil {
		fmt.Printf("server rss before: %s\n", rss(srv.Process.Pid))
		cpu0 = cpuTime(srv.Process.Pid)
	}
	self0 := selfCPU()
	if srv != nil && sigterm > 0 {
		go func() {
			time.Sleep(sigterm)
			fmt.Printf("sending SIGTERM at %v\n", sigterm)
			_ = srv.Process.Signal(syscall.SIGTERM)
		}()
	}
	rep, err := loadgen.Run(ctx, loadgen.Options{URL: target, Body: body, Conns: conns, Duration: duration, Check: sameAsFirst(loadgen.CheckCompose), Rate: rate, Raw: raw})
	if err != nil {
		return err
	}
	fmt.Println(rep)
	self := selfCPU() - self0
	fmt.Printf("load generator cpu: %.2fs (%.0f µs per request)\n", self.Seconds(), perReq(self, rep.Requests))
	if srv != nil && sigterm == 0 {
		c := cpuTime(srv.Process.Pid) - cpu0
		fmt.Printf("server cpu: %.2fs (%.0f µs per request; %.0f requests/s per fully used core)\n",
			c.Seconds(), perReq(c, rep.Requests), float64(rep.Requests)/max(c.Seconds(), 1e-9))
	}
	if rep.FirstErr != nil {
		fmt.Println("first broken response:", rep.FirstErr)
	}
	if srv != nil && sigterm == 0 {
		fmt.Printf("server rss after:  %s\n", rss(srv.Process.Pid))
	}
	if srv != nil && sigterm > 0 {
		err := srv.Wait()
		fmt.Printf("server exit after SIGTERM: %v\n", exitText(err))
	}
	if rep.Broken > 0 {
		return fmt.Errorf("%d broken responses", rep.Broken)
	}
	return nil
}

func exitText(err error) string {
	if err == nil {
		return "0 (clean)"
	}
	return err.Error()
}

// start runs `bin serve --addr 127.0.0.1:0` and returns its URL.
func start(bin string) (*exec.Cmd, string, error) {
	cmd := exec.Command(bin, "serve", "--addr", "127.0.0.1:0")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, "", err
	}
	if err := cmd.Start(); err != nil {
		return nil, "", err
	}
	urlc, _ := announce.Watch(stderr, nil)
	select {
	case u := <-urlc:
		return cmd, u, nil
	case <-time.After(20 * time.Second):
		_ = cmd.Process.Kill()
		return nil, "", fmt.Errorf("%s serve did not start", bin)
	}
}

// rss reads VmRSS of pid from /proc.
func rss(pid int) string {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return "unknown (" + err.Error() + ")"
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmRSS:"); ok {
			return strings.TrimSpace(v)
		}
	}
	return "unknown"
}

func perReq(d time.Duration, n int64) float64 {
	if n == 0 {
		return 0
	}
	return float64(d.Microseconds()) / float64(n)
}

// cpuTime reads the user+system CPU time of pid from /proc/PID/stat, or
// 0 when it cannot.
func cpuTime(pid int) time.Duration {
	st, err := procstat.Read(pid)
	if err != nil {
		return 0
	}
	return st.CPU()
}

// selfCPU is this process's user+system CPU time.
func selfCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// sameAsFirst returns a Check for a route whose answer is a pure function
// of the request, such as /v1/compose: the first body must pass check,
// and every later one must be byte-identical to it. That is stronger than
// checking each body on its own, and costs a comparison instead of a parse.
func sameAsFirst(check func([]byte) error) func([]byte) error {
	var (
		mu    sync.Mutex
		first []byte
	)
	return func(b []byte) error {
		mu.Lock()
		defer mu.Unlock()
		if first == nil {
			if err := check(b); err != nil {
				return err
			}
			first = bytes.Clone(b)
			return nil
		}
		if !bytes.Equal(b, first) {
			return fmt.Errorf("answer of %d bytes differs from the first answer (%d bytes)", len(b), len(first))
		}
		return nil
	}
}
