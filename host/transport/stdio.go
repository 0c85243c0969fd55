package transport

import (
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"time"
)

// Defaults of the zero Stdio.
const (
	defaultStderrLimit   = 64 << 10
	defaultShutdownGrace = 2 * time.Second
)

// Stdio is the transport to a child process speaking NDJSON on its stdin
// and stdout. The child's environment is cleared: it gets PATH and HOME
// from this process and Env, nothing else.
type Stdio struct {
	Program string
	Args    []string
	// Env lists extra KEY=VALUE entries for the child.
	Env []string
	// Dir is the child's working directory (default: this process's).
	Dir string
	// StderrLimit is how many trailing bytes of the child's stderr are
	// kept (default 64 KiB).
	StderrLimit int
	// Stderr, when set, also receives everything the child writes to its
	// stderr.
	Stderr io.Writer
	// MaxLine bounds one line read from the child (default
	// wire.DefaultMaxLineBytes).
	MaxLine int
	// ShutdownGrace is how long Close waits for the child to exit after
	// its stdin is closed, before its process tree is killed (default 2 s).
	ShutdownGrace time.Duration
	// NoCgroup starts the child outside a cgroup of its own even where
	// cgroup v2 is writable (the tracker, token and subreaper still end
	// its tree).
	NoCgroup bool
}

// Dial starts the child; the Connection is a *Process.
func (s Stdio) Dial(context.Context) (Connection, error) { return s.Start() }

// Process is a running child provider: a Connection over its stdin and
// stdout, a bounded tail of its stderr, and the means to end its whole
// process tree.
type Process struct {
	cmd     *exec.Cmd
	tree    *procTree
	stdin   *os.File // parent's write end
	stdout  *os.File // parent's read end
	conn    Connection
	stderr  *Tail
	grace   time.Duration
	exited  chan struct{} // closed once Wait has returned
	waitErr error         // valid after exited is closed

	killOnce sync.Once
	stopOnce sync.Once
	stopErr  error
}

// childEnv builds the child's environment: PATH and HOME from the host's
// environment (when set), then the caller's explicit KEY=VALUE entries. Nothing
// else leaks into a provider's process.
func childEnv(explicit []string) []string {
	env := make([]string, 0, 2+len(explicit))
	for _, k := range []string{"PATH", "HOME"} {
		if v, ok := os.LookupEnv(k); ok {
			env = append(env, k+"="+v)
		}
	}
	return append(env, explicit...)
}

// Command returns an unstarted command for program with a cleared
// environment (PATH, HOME and env) in a process group of its own, for a
// caller that hands the start to another library; KillGroup ends it.
func Command(program string, args, env []string) *exec.Cmd {
	cmd := exec.Command(program, args...)
	cmd.Env = childEnv(env)
	setProcessGroup(cmd)
	return cmd
}

// KillGroup kills a command started from Command, with its process group.
func KillGroup(cmd *exec.Cmd) { killGroup(cmd) }

// Start spawns the child in its own process group with a cleared
// environment, and (on Linux) in a cgroup of its own when cgroup v2 allows
// it, else under the fallback tracker (see procTree). The parent keeps one
// end of each pipe; the child's ends are closed in the parent right after
// start so EOF is observed when the child (and every descendant holding the
// pipe) goes away.
func (s Stdio) Start() (*Process, error) {
	limit := s.StderrLimit
	if limit <= 0 {
		limit = defaultStderrLimit
	}
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return nil, err
	}
	p := &Process{stdin: inW, stdout: outR, stderr: NewTail(limit), grace: s.ShutdownGrace, exited: make(chan struct{})}
	if p.grace <= 0 {
		p.grace = defaultShutdownGrace
	}
	var stderr io.Writer = p.stderr
	if s.Stderr != nil {
		stderr = io.MultiWriter(p.stderr, s.Stderr)
	}
	newCmd := func() *exec.Cmd {
		cmd := Command(s.Program, s.Args, s.Env)
		cmd.Dir = s.Dir
		cmd.Stdin = inR
		cmd.Stdout = outW
		cmd.Stderr = stderr
		// A descendant that keeps stderr open must not block Wait forever.
		cmd.WaitDelay = 2 * time.Second
		return cmd
	}
	cmd, tree, err := startTracked(newCmd, (*exec.Cmd).Start, !s.NoCgroup)
	if err != nil {
		inR.Close()
		inW.Close()
		outR.Close()
		outW.Close()
		return nil, err
	}
	p.cmd, p.tree = cmd, tree
	p.conn = Stream(outR, inW, s.MaxLine, nil)
	inR.Close()
	outW.Close()
	go func() {
		p.waitErr = cmd.Wait()
		close(p.exited)
	}()
	return p, nil
}

// Read returns the next envelope line the child wrote (see Connection).
func (p *Process) Read() ([]byte, error) { return p.conn.Read() }

// Write sends one envelope line to the child's stdin; ctx's deadline bounds
// a child that stopped reading.
func (p *Process) Write(ctx context.Context, env []byte) error { return p.conn.Write(ctx, env) }

// Exited is closed once the child has exited and been reaped.
func (p *Process) Exited() <-chan struct{} { return p.exited }

// ExitErr is the child's exit status as exec reports it (nil for status 0);
// valid once Exited is closed.
func (p *Process) ExitErr() error { return p.waitErr }

// Stderr returns the kept tail of the child's stderr, prefixed by a note
// when earlier bytes were dropped.
func (p *Process) Stderr() string { return p.stderr.String() }

// Kill ends the child's whole process tree at once: its descendants, also
// those that left its process group, then its group and itself; and closes
// the parent's pipe ends so any reader or writer blocked on them returns.
func (p *Process) Kill() {
	p.killOnce.Do(func() {
		p.tree.kill()
		killGroup(p.cmd)
		p.stdin.Close()
		p.stdout.Close()
	})
}

// Close closes the child's stdin, waits up to the transport's
// ShutdownGrace for it to exit by itself (after the caller sent shutdown),
// then kills its tree either way: a provider's grandchildren must not
// outlive the host. It returns once the child has been reaped; a killed
// child or a non-zero exit is not an error.
func (p *Process) Close() error {
	p.stopOnce.Do(func() {
		p.stdin.Close()
		t := time.NewTimer(p.grace)
		defer t.Stop()
		select {
		case <-p.exited:
		case <-t.C:
		}
		p.Kill()
		<-p.exited
		var ee *exec.ExitError
		if !errors.As(p.waitErr, &ee) {
			p.stopErr = p.waitErr
		}
	})
	return p.stopErr
}

// Tail is an io.Writer keeping only the last limit bytes written, so a
// chatty or hostile child cannot grow the host's memory through its stderr.
// It is safe for concurrent use.
type Tail struct {
	mu      sync.Mutex
	limit   int
	buf     []byte
	dropped int64
}

// NewTail returns a Tail keeping the last limit bytes.
func NewTail(limit int) *Tail { return &Tail{limit: limit} }

// Write keeps the end of what was written so far; it never fails.
func (t *Tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := len(p)
	if len(p) >= t.limit {
		t.dropped += int64(len(t.buf) + len(p) - t.limit)
		t.buf = append(t.buf[:0], p[len(p)-t.limit:]...)
		return n, nil
	}
	if over := len(t.buf) + len(p) - t.limit; over > 0 {
		t.dropped += int64(over)
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
	t.buf = append(t.buf, p...)
	return n, nil
}

// String returns the kept tail, prefixed by a note when bytes were dropped.
func (t *Tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.dropped > 0 {
		return "[" + strconv.FormatInt(t.dropped, 10) + " earlier bytes dropped]\n" + string(t.buf)
	}
	return string(t.buf)
}

// Pid is the child's process id (its process group id too).
func (p *Process) Pid() int { return p.cmd.Process.Pid }
