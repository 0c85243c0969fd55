package transport

import "os/exec"

// Tree ends the whole process tree of a child that other code starts, as
// Stdio ends its own children's: the MCP bridge's stdio servers, which the
// go-sdk starts. PrepareTree goes before the child starts, Started right
// after (Abandon instead when it failed to start), Kill when it is to end.
type Tree struct{ t *procTree }

// PrepareTree readies cmd, made by Command, so that its tree can be ended:
// in a cgroup of its own when withCgroup and the machine allow it, else
// under the fallback tracker.
func PrepareTree(cmd *exec.Cmd, withCgroup bool) *Tree {
	return &Tree{newProcTree(cmd, withCgroup)}
}

// UsesCgroup reports whether the child is (to be) started in a cgroup.
func (t *Tree) UsesCgroup() bool { return t.t.usesCgroup() }

// Abandon undoes PrepareTree after a failed start.
func (t *Tree) Abandon() { t.t.abandon() }

// Started records the running child's pid and starts tracking it.
func (t *Tree) Started(pid int) { t.t.startedAs(pid) }

// Kill ends every process of the tree but the child itself, which the
// caller ends with KillGroup.
func (t *Tree) Kill() { t.t.kill() }
