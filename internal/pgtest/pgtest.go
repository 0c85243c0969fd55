// Package pgtest starts a throw-away PostgreSQL server for tests: it finds
// the server binaries of Debian's postgresql package, initialises a cluster
// in a temporary directory, serves it on a random loopback port and removes
// it when the test ends.
//
// PostgreSQL refuses to run as root, so when the test runs as root the
// cluster belongs to the package's postgres user and the server runs with
// that user's credentials.
//
// When no server can be started the test is skipped with the reason, except
// under CI (CI set to a true value), where it fails: a CI run that skipped
// every database test would prove nothing.
package pgtest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// Server is one running throw-away PostgreSQL cluster.
type Server struct {
	t    testing.TB
	bin  string
	dir  string
	port int
	cred *syscall.Credential
	cmd  *exec.Cmd
	done chan struct{}
	log  *bytes.Buffer
}

// Start initialises and starts a cluster for t, stopped and removed when t
// ends. It skips t (fails it under CI) when PostgreSQL cannot be started.
func Start(t testing.TB) *Server {
	t.Helper()
	s, err := start(t)
	if err != nil {
		if inCI() {
			t.Fatalf("pgtest: PostgreSQL is required in CI and could not be started: %v", err)
		}
		t.Skipf("pgtest: skipping, PostgreSQL could not be started: %v (install Debian's postgresql package)", err)
	}
	return s
}

func inCI() bool {
	v, err := strconv.ParseBool(os.Getenv("CI"))
	return err == nil && v
}

// binDir returns the newest /usr/lib/postgresql/*/bin holding initdb.
func binDir() (string, error) {
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin/initdb")
	if len(dirs) == 0 {
		return "", errors.New("no /usr/lib/postgresql/*/bin/initdb")
	}
	sort.Slice(dirs, func(i, j int) bool { return version(dirs[i]) > version(dirs[j]) })
	return filepath.Dir(dirs[0]), nil
}

func version(initdb string) int {
	n, _ := strconv.Atoi(filepath.Base(filepath.Dir(filepath.Dir(initdb))))
	return n
}

func start(t testing.TB) (*Server, error) {
	bin, err := binDir()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "ctxkit-pgtest-")
	if err != nil {
		return nil, err
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	s := &Server{t: t, bin: bin, dir: dir, log: &bytes.Buffer{}}
	if os.Geteuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			return nil, fmt.Errorf("running as root and no postgres user: %w", err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		s.cred = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
		if err := os.Chmod(dir, 0o755); err != nil {
			return nil, err
		}
		if err := os.Chown(dir, uid, gid); err != nil {
			return nil, err
		}
	}
	initdb := s.command("initdb", "-D", s.data(), "-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-sync", "--no-instructions")
	if out, err := initdb.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("initdb: %w: %s", err, lastLines(out))
	}
	if s.port, err = freePort(); err != nil {
		return nil, err
	}
	if err := s.Restart(); err != nil {
		return nil, err
	}
	t.Cleanup(s.Stop)
	return s, nil
}

func (s *Server) data() string { return filepath.Join(s.dir, "data") }

func (s *Server) command(name string, args ...string) *exec.Cmd {
	cmd := exec.Command(filepath.Join(s.bin, name), args...)
	cmd.Dir = s.dir
	cmd.Env = append(os.Environ(), "LC_ALL=C")
	if s.cred != nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: s.cred}
	}
	return cmd
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// URL is the connection URL of the cluster's postgres database (trust
// authentication on loopback: no password).
func (s *Server) URL() string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", s.port)
}

// Restart starts the server again after Stop (on the same port and data);
// it returns once the server accepts connections.
func (s *Server) Restart() error {
	if s.cmd != nil {
		return errors.New("pgtest: server already running")
	}
	s.log.Reset()
	cmd := s.command("postgres", "-D", s.data(), "-p", strconv.Itoa(s.port), "-k", s.dir,
		"-c", "listen_addresses=127.0.0.1", "-c", "fsync=off", "-c", "max_connections=200")
	cmd.Stdout, cmd.Stderr = s.log, s.log
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("pgtest: start postgres: %w", err)
	}
	s.cmd, s.done = cmd, make(chan struct{})
	go func() { _ = cmd.Wait(); close(s.done) }()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case <-s.done:
			s.cmd = nil
			return fmt.Errorf("pgtest: postgres exited: %s", lastLines(s.log.Bytes()))
		default:
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		c, err := pgx.Connect(ctx, s.URL())
		if err == nil {
			_ = c.Close(ctx)
			cancel()
			return nil
		}
		cancel()
		time.Sleep(50 * time.Millisecond)
	}
	s.Stop()
	return errors.New("pgtest: postgres did not accept connections within 30s")
}

// Stop shuts the server down (fast shutdown: open sessions are ended) and
// waits for it to exit. Stopping a stopped server does nothing.
func (s *Server) Stop() {
	if s.cmd == nil {
		return
	}
	_ = s.cmd.Process.Signal(syscall.SIGINT)
	select {
	case <-s.done:
	case <-time.After(20 * time.Second):
		_ = s.cmd.Process.Kill()
		<-s.done
	}
	s.cmd = nil
}

func lastLines(b []byte) string {
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) > 5 {
		lines = lines[len(lines)-5:]
	}
	return strings.Join(lines, " | ")
}
