//go:build !linux

package proctree

import (
	"errors"
	"os/exec"
)

// Tree does nothing outside Linux: the child's process group is what the
// caller can end; descendants that leave it are not tracked.
type Tree struct{}

// Prepare returns a Tree that does nothing.
func Prepare(*exec.Cmd, bool) *Tree { return &Tree{} }

// UsesCgroup is always false here.
func (t *Tree) UsesCgroup() bool { return false }

// Cgroup is always "" here.
func (t *Tree) Cgroup() string { return "" }

// Abandon does nothing here.
func (t *Tree) Abandon() {}

// Started does nothing here.
func (t *Tree) Started(int) {}

// Kill does nothing here.
func (t *Tree) Kill() {}

// CgroupAvailable reports that no cgroup can be made here.
func CgroupAvailable() error { return errors.New("proctree: cgroups exist only on Linux") }
