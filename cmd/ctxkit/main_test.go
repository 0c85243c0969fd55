package main

import (
	"os"
	"strings"
	"testing"
)

// TestMain gives the tests a cache directory of their own: ctxkit query and
// ctxkit provider files keep their indexes there.
func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "ctxkit-cache")
	if err != nil {
		panic(err)
	}
	os.Setenv("XDG_CACHE_HOME", dir)
	code := m.Run()
	removeMCPBinary()
	os.RemoveAll(dir)
	os.Exit(code)
}

// Every command is registered once: a name listed twice would show twice in
// the usage and the second entry could never run.
func TestCommandNamesAreUnique(t *testing.T) {
	seen := map[string]bool{}
	for _, c := range commands() {
		if seen[c.name] {
			t.Errorf("command %q is registered more than once", c.name)
		}
		seen[c.name] = true
	}
}

func TestUsageListsEachCommandOnce(t *testing.T) {
	code, out, _ := runCLI(t, "", "help")
	if code != exitOK {
		t.Fatalf("help: exit %d", code)
	}
	for _, c := range commands() {
		if n := strings.Count(out, "\n  "+c.name+" "); n != 1 {
			t.Errorf("usage lists %q %d times:\n%s", c.name, n, out)
		}
	}
}
