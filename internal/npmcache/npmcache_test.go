package npmcache

import (
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"
)

// Two installers never hold the lock at once; the second waits for the first.
func TestLockExcludes(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.lock")
	unlock, err := lock(path)
	if err != nil {
		t.Fatal(err)
	}
	var got atomic.Bool
	done := make(chan struct{})
	go func() {
		defer close(done)
		u, err := lock(path)
		if err != nil {
			t.Error(err)
			return
		}
		got.Store(true)
		u()
	}()
	time.Sleep(300 * time.Millisecond)
	if got.Load() {
		t.Fatal("a second holder took a held lock")
	}
	unlock()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("the waiter did not get the released lock")
	}
	if !got.Load() {
		t.Fatal("the waiter never held the lock")
	}
}

// A lock left by a process that died long ago is taken over.
func TestLockTakesOverAbandoned(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.lock")
	if err := os.Mkdir(path, 0o755); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-2 * lockWait)
	if err := os.Chtimes(path, old, old); err != nil {
		t.Fatal(err)
	}
	unlock, err := lock(path)
	if err != nil {
		t.Fatal(err)
	}
	unlock()
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Fatalf("lock not released: %v", err)
	}
}

// An installed package set is found without running npm again.
func TestInstalledIsReused(t *testing.T) {
	t.Setenv("CTXKIT_NPM_CACHE", t.TempDir())
	t.Setenv("PATH", "") // no npm: only the marker can satisfy the call
	pkgs := []string{"left-pad@1.3.0"}
	if _, err := install(pkgs); err == nil {
		t.Fatal("install without npm and without a marker succeeded")
	}
	root, _ := cacheDir()
	marked := hashDir(root, pkgs)
	if err := os.MkdirAll(marked, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(marked, ".installed"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := install(pkgs)
	if err != nil || got != marked {
		t.Fatalf("install = %q, %v; want the marked %q", got, err, marked)
	}
}
