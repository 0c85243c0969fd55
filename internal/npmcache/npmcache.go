// Package npmcache installs the npm packages that interop tests run into a
// cache outside the repository, once per machine.
//
// Install runs `npm install --prefix DIR PKG@VERSION...` into
// $CTXKIT_NPM_CACHE (default <user cache dir>/ctxkit-npm), one directory per
// package set, under a lock directory so that parallel test processes do
// not collide. In CI (CI=true) a failed install fails the test; elsewhere
// it skips the test with the reason.
package npmcache

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ctxkit/ctxkit/internal/tooltest"
)

// lockWait bounds how long Install waits for another process's install.
const lockWait = 10 * time.Minute

// cacheDir returns the cache root.
func cacheDir() (string, error) {
	if d := os.Getenv("CTXKIT_NPM_CACHE"); d != "" {
		return d, nil
	}
	d, err := os.UserCacheDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(d, "ctxkit-npm"), nil
}

// Install installs pkgs ("name@version") and returns the prefix directory:
// the packages are under DIR/node_modules.
func Install(t testing.TB, pkgs ...string) string {
	t.Helper()
	dir, err := install(pkgs)
	if err != nil {
		Unavailable(t, err)
	}
	return dir
}

// Unavailable fails the test in CI and skips it elsewhere, with err
// (tooltest.Missing).
func Unavailable(t testing.TB, err error) {
	t.Helper()
	tooltest.Missing(t, "node with npm", err)
}

func install(pkgs []string) (string, error) {
	root, err := cacheDir()
	if err != nil {
		return "", err
	}
	dir := hashDir(root, pkgs)
	done := filepath.Join(dir, ".installed")
	if _, err := os.Stat(done); err == nil {
		return dir, nil
	}
	if _, err := exec.LookPath("npm"); err != nil {
		return "", fmt.Errorf("npm is not on PATH: %w", err)
	}
	if err := os.MkdirAll(root, 0o755); err != nil {
		return "", err
	}
	unlock, err := lock(dir + ".lock")
	if err != nil {
		return "", err
	}
	defer unlock()
	if _, err := os.Stat(done); err == nil {
		return dir, nil // another process installed it while we waited
	}
	args := append([]string{"install", "--prefix", dir, "--no-audit", "--no-fund", "--loglevel=error"}, pkgs...)
	cmd := exec.Command("npm", args...)
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("npm %s: %w\n%s", strings.Join(args, " "), err, out)
	}
	if err := os.WriteFile(done, []byte(strings.Join(pkgs, "\n")+"\n"), 0o644); err != nil {
		return "", err
	}
	return dir, nil
}

// hashDir is the directory of a package set under root.
func hashDir(root string, pkgs []string) string {
	sum := sha256.Sum256([]byte(strings.Join(pkgs, "\n")))
	return filepath.Join(root, hex.EncodeToString(sum[:6]))
}

// lock takes the lock directory path, waiting for another holder; a lock
// older than lockWait is taken over as abandoned.
func lock(path string) (func(), error) {
	deadline := time.Now().Add(lockWait)
	for {
		err := os.Mkdir(path, 0o755)
		if err == nil {
			return func() { _ = os.Remove(path) }, nil
		}
		if !errors.Is(err, os.ErrExist) {
			return nil, err
		}
		if st, serr := os.Stat(path); serr == nil && time.Since(st.ModTime()) > lockWait {
			_ = os.Remove(path)
			continue
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("npm install lock %s held for over %v", path, lockWait)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// Node returns a node binary of at least the given major version: the one
// on PATH if it is new enough, else the one npm's "node" package installs
// into the cache.
func Node(t testing.TB, major int) string {
	t.Helper()
	if p, err := exec.LookPath("node"); err == nil {
		out, err := exec.Command(p, "-p", "process.versions.node.split('.')[0]").Output()
		var v int
		if err == nil {
			_, _ = fmt.Sscan(strings.TrimSpace(string(out)), &v)
		}
		if v >= major {
			return p
		}
	}
	dir := Install(t, fmt.Sprintf("node@%d", major))
	p := filepath.Join(dir, "node_modules", "node", "bin", "node")
	if _, err := os.Stat(p); err != nil {
		Unavailable(t, fmt.Errorf("npm package node@%d has no bin/node: %w", major, err))
	}
	return p
}
