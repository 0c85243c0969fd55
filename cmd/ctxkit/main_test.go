package main

import (
	"strings"
	"testing"
)

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
