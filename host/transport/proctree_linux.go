//go:build linux

package transport

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/ctxkit/ctxkit/internal/procstat"
)

// procTree ends a child provider's whole process tree, including
// descendants that left its process group (setsid, double fork).
//
// Three means combine. The host process becomes a child subreaper (prctl
// PR_SET_CHILD_SUBREAPER), so a provider's orphans are reparented to it
// rather than to init and are reaped by it once killed. The child's
// environment carries a token (CTXKIT_PROVIDER_TREE) that its descendants
// inherit. A tracker follows the provider's tree every trackInterval while
// it runs and remembers each descendant it sees.
//
// Where cgroup v2 is writable, the child is also started inside a cgroup of
// its own (clone with CLONE_INTO_CGROUP), which every descendant inherits.
// A descendant that may write another cgroup's cgroup.procs (as root, or
// in a delegated subtree, where the host's own cgroup usually is) can
// leave it, which is why the other means run beside it.
//
// kill ends the cgroup (cgroup.kill) and removes it, then the live subtree,
// every remembered descendant still running and every process carrying the
// token, with their subtrees. Only a descendant that leaves the cgroup,
// clears its environment and is orphaned between two walks escapes; the
// host adopted it, and EndAdopted ends it.
// Being a subreaper is process-wide: orphans of a library host's other
// children are reparented to the program too; the host only kills and
// reaps those that descend from a provider.
type procTree struct {
	cgroup string   // the provider's cgroup directory; "" when none
	cgfd   *os.File // open during Start only
	token  string   // CTXKIT_PROVIDER_TREE value (fallback only)

	pid   int
	start uint64 // the child's start time, against pid reuse

	mu    sync.Mutex
	seen  map[int]uint64 // descendants seen by the tracker: pid -> start time
	done  chan struct{}  // closed to stop the tracker
	ended bool
}

// treeTokenVar names the environment variable that marks a fallback tree.
const treeTokenVar = "CTXKIT_PROVIDER_TREE"

// trackInterval is how often the fallback tracker walks /proc.
const trackInterval = 50 * time.Millisecond

// Process-wide by nature: being a subreaper is a property of the process,
// set once, and cgroup and token names must be unique within it.
var (
	treeSeq      atomic.Uint64
	subreaperSet sync.Once
	isSubreaper  atomic.Bool
	// started holds each child this package started: pid -> start time,
	// so that EndAdopted tells them from the orphans it adopted.
	started sync.Map
)

// newProcTree prepares cmd (whose SysProcAttr is set) so that its tree can
// be ended; withCgroup false goes straight to the fallback.
func newProcTree(cmd *exec.Cmd, withCgroup bool) *procTree {
	t := &procTree{}
	if withCgroup {
		if dir, f, err := makeCgroup(); err == nil {
			t.cgroup, t.cgfd = dir, f
			cmd.SysProcAttr.UseCgroupFD = true
			cmd.SysProcAttr.CgroupFD = int(f.Fd())
		}
	}
	t.token = fmt.Sprintf("%d.%d", os.Getpid(), treeSeq.Add(1))
	cmd.Env = append(cmd.Env, treeTokenVar+"="+t.token)
	return t
}

// usesCgroup reports whether the child is (to be) started in a cgroup.
func (t *procTree) usesCgroup() bool { return t.cgroup != "" }

// abandon undoes a prepared cgroup after a failed Start.
func (t *procTree) abandon() {
	if t.cgfd != nil {
		t.cgfd.Close()
		t.cgfd = nil
	}
	if t.cgroup != "" {
		_ = os.Remove(t.cgroup)
		t.cgroup = ""
	}
}

// startedAs records the running child and starts the tracker.
func (t *procTree) startedAs(pid int) {
	t.pid = pid
	if t.cgfd != nil {
		t.cgfd.Close()
		t.cgfd = nil
	}
	subreaperSet.Do(func() {
		const prSetChildSubreaper = 36 // PR_SET_CHILD_SUBREAPER, <linux/prctl.h>
		_, _, errno := syscall.RawSyscall(syscall.SYS_PRCTL, prSetChildSubreaper, 1, 0)
		isSubreaper.Store(errno == 0)
	})
	if st, ok := statOf(pid); ok {
		t.start = st.Start
	}
	started.Store(pid, t.start)
	t.seen = map[int]uint64{}
	t.done = make(chan struct{})
	go t.track()
}

// track remembers the child's descendants until kill.
func (t *procTree) track() {
	tick := time.NewTicker(trackInterval)
	defer tick.Stop()
	for {
		t.mu.Lock()
		roots := []int{t.pid}
		for pid := range t.seen {
			roots = append(roots, pid)
		}
		t.mu.Unlock()
		procs := subtreeProcs(roots)
		t.mu.Lock()
		for _, pid := range t.members(procs) {
			t.seen[pid] = procs[pid].Start
		}
		t.mu.Unlock()
		select {
		case <-t.done:
			return
		case <-tick.C:
		}
	}
}

// members lists the tree's live processes: the child's subtree, and every
// remembered descendant still running (same start time) with its subtree.
// t.mu must be held.
func (t *procTree) members(procs map[int]procstat.Stat) []int {
	out := descendants(procs, t.pid, t.start)
	for pid, start := range t.seen {
		if st, ok := procs[pid]; ok && st.Start == start {
			out = append(out, pid)
			out = append(out, descendants(procs, pid, start)...)
		}
	}
	return out
}

// kill ends every process of the tree other than the child itself (which
// the caller kills and waits for) and waits, briefly, until they are gone.
// It is safe to call more than once.
func (t *procTree) kill() {
	t.mu.Lock()
	if t.ended {
		t.mu.Unlock()
		return
	}
	t.ended = true
	t.mu.Unlock()
	self := os.Getpid()
	var targets []int
	close(t.done)
	// Twice: a process forked while the first round was being signalled
	// is found by the second. The first round runs before the cgroup's
	// kill, which would orphan what left the cgroup below a member (an
	// orphan is no descendant of the child any more).
	for round := range 2 {
		procs := scanProcs()
		t.mu.Lock()
		found := t.members(procs)
		t.mu.Unlock()
		for pid, st := range procs {
			if pid != self && hasToken(pid, t.token) {
				found = append(found, pid)
				found = append(found, descendants(procs, pid, st.Start)...)
			}
		}
		for _, pid := range found {
			if pid != t.pid && pid != self {
				_ = syscall.Kill(pid, syscall.SIGKILL)
				targets = append(targets, pid)
			}
		}
		if round == 0 && t.usesCgroup() {
			// The members, orphaned by the kill, are this subreaper's to
			// reap.
			for _, pid := range killCgroup(t.cgroup) {
				if pid != t.pid { // the caller waits for the child itself
					targets = append(targets, pid)
				}
			}
		}
	}
	reapAdopted(targets, self)
}

// endAdopted is EndAdopted on Linux. It kills the adopted children it
// finds, reaps them, and looks again, until a look finds none alive (or
// two seconds have passed): a killed child's own children are adopted in
// turn, and a process that forks and exits to change its pid is caught
// once a kill lands between two of its forks.
func endAdopted() int {
	if !isSubreaper.Load() {
		return 0 // orphans go to init, not to this process
	}
	self := os.Getpid()
	killed := map[int]bool{}
	deadline := time.Now().Add(2 * time.Second)
	for time.Now().Before(deadline) {
		kids, _ := childrenOf(self)
		adopted := 0 // alive, or dead and reaped now: either may have left children to adopt
		for _, pid := range kids {
			st, ok := statOf(pid)
			switch {
			case !ok || ours(pid, st.Start):
			case st.Zombie():
				var ws syscall.WaitStatus
				_, _ = syscall.Wait4(pid, &ws, syscall.WNOHANG, nil)
				adopted++
			default:
				_ = syscall.Kill(pid, syscall.SIGKILL)
				killed[pid] = true
				adopted++
			}
		}
		if adopted == 0 {
			break
		}
	}
	return len(killed)
}

// ours reports whether pid (started at start) is a child this package
// started itself.
func ours(pid int, start uint64) bool {
	s, ok := started.Load(pid)
	return ok && s.(uint64) == start
}

// hasToken reports whether pid's environment holds the tree's token.
func hasToken(pid int, token string) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
	if err != nil {
		return false
	}
	want := []byte(treeTokenVar + "=" + token)
	for _, kv := range bytes.Split(b, []byte{0}) {
		if bytes.Equal(kv, want) {
			return true
		}
	}
	return false
}

// reapAdopted waits for the killed processes to be gone, and reaps those
// reparented to this process (a subreaper), so that none stays a zombie. A
// process whose parent is alive and not one of pids is left to its parent.
func reapAdopted(pids []int, self int) {
	killed := make(map[int]bool, len(pids))
	for _, pid := range pids {
		killed[pid] = true
	}
	deadline := time.Now().Add(2 * time.Second)
	for len(killed) > 0 && time.Now().Before(deadline) {
		for pid := range killed {
			st, ok := statOf(pid)
			switch {
			case !ok:
				delete(killed, pid) // gone (reaped)
			case st.PPID == self:
				var ws syscall.WaitStatus
				if got, _ := syscall.Wait4(pid, &ws, syscall.WNOHANG, nil); got == pid {
					delete(killed, pid)
				}
			case st.Zombie() && !killed[st.PPID]:
				delete(killed, pid) // its own parent reaps it
			}
		}
		if len(killed) > 0 {
			time.Sleep(2 * time.Millisecond)
		}
	}
}

func statOf(pid int) (procstat.Stat, bool) {
	st, err := procstat.Read(pid)
	return st, err == nil
}

// subtreeProcs reads the live processes of the trees under roots, following
// each process's /proc/PID/task/TID/children lists: a few reads for a
// provider's tree where a walk of all /proc costs one per process of the
// machine, every trackInterval. Where the lists do not exist (a kernel
// without CONFIG_PROC_CHILDREN) it reads all of /proc.
func subtreeProcs(roots []int) map[int]procstat.Stat {
	out := make(map[int]procstat.Stat, len(roots))
	queue := append([]int(nil), roots...)
	for len(queue) > 0 {
		pid := queue[0]
		queue = queue[1:]
		if _, done := out[pid]; done {
			continue
		}
		st, ok := statOf(pid)
		if !ok || st.Zombie() {
			continue
		}
		out[pid] = st
		kids, ok := childrenOf(pid)
		if !ok {
			return scanProcs()
		}
		queue = append(queue, kids...)
	}
	return out
}

// childrenOf lists pid's children from its threads' children lists; false
// when the kernel keeps no such lists.
func childrenOf(pid int) ([]int, bool) {
	dir := "/proc/" + strconv.Itoa(pid) + "/task"
	tasks, err := os.ReadDir(dir)
	if err != nil {
		return nil, true // gone meanwhile
	}
	var out []int
	for _, task := range tasks {
		b, err := os.ReadFile(dir + "/" + task.Name() + "/children")
		if errors.Is(err, os.ErrNotExist) {
			if _, serr := os.Stat(dir + "/" + task.Name()); serr == nil {
				return nil, false // the thread is there, its list is not
			}
			continue
		}
		for _, f := range strings.Fields(string(b)) {
			if kid, err := strconv.Atoi(f); err == nil {
				out = append(out, kid)
			}
		}
	}
	return out, true
}

// scanProcs reads every live (non-zombie) process of /proc.
func scanProcs() map[int]procstat.Stat {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	out := make(map[int]procstat.Stat, len(ents))
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if st, ok := statOf(pid); ok && !st.Zombie() {
			out[pid] = st
		}
	}
	return out
}

// descendants returns the live descendants of root (which must have start
// time start, else it is another process that reused the pid).
func descendants(procs map[int]procstat.Stat, root int, start uint64) []int {
	if st, ok := procs[root]; !ok || (start != 0 && st.Start != start) {
		return nil
	}
	kids := map[int][]int{}
	for pid, st := range procs {
		kids[st.PPID] = append(kids[st.PPID], pid)
	}
	var out []int
	queue := []int{root}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		for _, c := range kids[p] {
			out = append(out, c)
			queue = append(queue, c)
		}
	}
	return out
}

// makeCgroup creates a cgroup v2 directory for one provider beside the
// host's own and opens it for CLONE_INTO_CGROUP.
func makeCgroup() (string, *os.File, error) {
	root, err := cgroup2Mount()
	if err != nil {
		return "", nil, err
	}
	self, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return "", nil, err
	}
	var rel string
	for _, line := range strings.Split(string(self), "\n") {
		if r, ok := strings.CutPrefix(line, "0::"); ok {
			rel = r
		}
	}
	if rel == "" {
		return "", nil, errors.New("no cgroup v2 membership")
	}
	dir := filepath.Join(root, rel, fmt.Sprintf("ctxkit-provider-%d-%d", os.Getpid(), treeSeq.Add(1)))
	if err := os.Mkdir(dir, 0o755); err != nil {
		return "", nil, err
	}
	f, err := os.Open(dir)
	if err != nil {
		_ = os.Remove(dir)
		return "", nil, err
	}
	return dir, f, nil
}

// cgroup2Mount finds where the cgroup v2 hierarchy is mounted.
func cgroup2Mount() (string, error) {
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return "", err
	}
	for _, line := range strings.Split(string(b), "\n") {
		pre, post, ok := strings.Cut(line, " - ")
		if !ok || !strings.HasPrefix(post, "cgroup2 ") {
			continue
		}
		if f := strings.Fields(pre); len(f) >= 5 {
			return f[4], nil
		}
	}
	return "", errors.New("cgroup v2 is not mounted")
}

// killCgroup ends every process in dir and removes it once empty. It
// returns the members it found before ending them.
func killCgroup(dir string) []int {
	members := cgroupProcs(dir)
	if err := os.WriteFile(filepath.Join(dir, "cgroup.kill"), []byte("1"), 0); err != nil {
		// Kernels before 5.14 have no cgroup.kill: signal each member
		// until none is left.
		for range 50 {
			pids := cgroupProcs(dir)
			if len(pids) == 0 {
				break
			}
			for _, pid := range pids {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
			time.Sleep(2 * time.Millisecond)
		}
	}
	deadline := time.Now().Add(2 * time.Second)
	for {
		err := os.Remove(dir)
		if err == nil || errors.Is(err, os.ErrNotExist) || time.Now().After(deadline) {
			return members
		}
		time.Sleep(2 * time.Millisecond) // EBUSY until the members have exited
	}
}

func cgroupProcs(dir string) []int {
	b, err := os.ReadFile(filepath.Join(dir, "cgroup.procs"))
	if err != nil {
		return nil
	}
	var out []int
	for _, f := range strings.Fields(string(b)) {
		if pid, err := strconv.Atoi(f); err == nil {
			out = append(out, pid)
		}
	}
	return out
}
