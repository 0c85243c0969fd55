package host

import (
	"errors"
	"os"
	"os/exec"
	"sync"
	"time"

	"github.com/ctxkit/ctxkit/internal/proctree"
)

// DefaultStderrLimit is how many trailing bytes of a child's stderr the host
// keeps for diagnostics when StdioOptions.StderrLimit is zero.
const DefaultStderrLimit = 64 << 10

// process is one spawned child provider: its pipes, a bounded tail of its
// stderr, and the means to end its whole process tree.
type process struct {
	cmd     *exec.Cmd
	tree    *proctree.Tree
	stdin   *os.File // parent's write end
	stdout  *os.File // parent's read end
	stderr  *tailBuffer
	exited  chan struct{} // closed once Wait has returned
	waitErr error         // valid after exited is closed

	killOnce sync.Once
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

// startProcess spawns program in its own process group with a cleared
// environment, and (on Linux) in a cgroup of its own when withCgroup and
// cgroup v2 allow it, else under the fallback tracker (see proctree.Tree). The
// parent keeps one end of each pipe; the child's ends are closed in the
// parent right after start so EOF is observed when the child (and every
// descendant holding the pipe) goes away.
func startProcess(program string, args, env []string, dir string, stderrLimit int, withCgroup bool) (*process, error) {
	if stderrLimit <= 0 {
		stderrLimit = DefaultStderrLimit
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
	p := &process{stdin: inW, stdout: outR, stderr: newTailBuffer(stderrLimit), exited: make(chan struct{})}
	start := func(withCgroup bool) (*exec.Cmd, *proctree.Tree, error) {
		cmd := exec.Command(program, args...)
		cmd.Env = childEnv(env)
		cmd.Dir = dir
		cmd.Stdin = inR
		cmd.Stdout = outW
		cmd.Stderr = p.stderr
		// A descendant that keeps stderr open must not block Wait forever.
		cmd.WaitDelay = 2 * time.Second
		setProcessGroup(cmd)
		tree := proctree.Prepare(cmd, withCgroup)
		if err := cmd.Start(); err != nil {
			tree.Abandon()
			return nil, nil, err
		}
		return cmd, tree, nil
	}
	cmd, tree, err := start(withCgroup)
	if err != nil && withCgroup && !errors.Is(err, exec.ErrNotFound) && !errors.Is(err, os.ErrNotExist) {
		// Starting into the cgroup can fail where creating it did not
		// (an old kernel without clone3): try once more without.
		cmd, tree, err = start(false)
	}
	if err != nil {
		inR.Close()
		inW.Close()
		outR.Close()
		outW.Close()
		return nil, err
	}
	tree.Started(cmd.Process.Pid)
	p.cmd, p.tree = cmd, tree
	inR.Close()
	outW.Close()
	go func() {
		p.waitErr = cmd.Wait()
		close(p.exited)
	}()
	return p, nil
}

// kill ends the child's whole process tree (once): its descendants, also
// those that left its process group, then its group and itself; and closes
// the parent's pipe ends so any reader or writer blocked on them returns.
func (p *process) kill() {
	p.killOnce.Do(func() {
		p.tree.Kill()
		killGroup(p.cmd)
		p.stdin.Close()
		p.stdout.Close()
	})
}

// stop waits up to grace for the child to exit by itself (after the caller
// sent shutdown and closed stdin), then kills the group either way: a
// provider's grandchildren must not outlive the host. It returns once the
// child has been reaped.
func (p *process) stop(grace time.Duration) error {
	p.stdin.Close()
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case <-p.exited:
	case <-t.C:
	}
	p.kill()
	<-p.exited
	var ee *exec.ExitError
	if errors.As(p.waitErr, &ee) {
		return nil // killed or non-zero exit after shutdown: not a host error
	}
	return p.waitErr
}

// tailBuffer is an io.Writer keeping only the last limit bytes written, so a
// chatty or hostile child cannot grow the host's memory through stderr.
type tailBuffer struct {
	mu      sync.Mutex
	limit   int
	buf     []byte
	dropped int64
}

func newTailBuffer(limit int) *tailBuffer { return &tailBuffer{limit: limit} }

func (t *tailBuffer) Write(p []byte) (int, error) {
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
func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.dropped > 0 {
		return "[" + itoa(t.dropped) + " earlier bytes dropped]\n" + string(t.buf)
	}
	return string(t.buf)
}

func itoa(n int64) string {
	if n == 0 {
		return "0"
	}
	var b [20]byte
	i := len(b)
	for n > 0 {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
	}
	return string(b[i:])
}
