package transport

import (
	"errors"
	"os"
	"os/exec"
)

// Tree ends the whole process tree of a child that other code starts, as
// Stdio ends its own children's: the MCP bridge's stdio servers, which the
// go-sdk starts. StartTree starts the child under it; Kill ends the tree.
type Tree struct{ t *procTree }

// StartTree starts a command made by newCmd (a fresh one from Command on
// each call) through start, in a cgroup of its own when withCgroup and the
// machine allow it, else under the fallback tracker; the returned Tree
// tracks the running child from then on. start must have started the
// command when it returns nil.
func StartTree(newCmd func() *exec.Cmd, start func(*exec.Cmd) error, withCgroup bool) (*exec.Cmd, *Tree, error) {
	cmd, tree, err := startTracked(newCmd, start, withCgroup)
	if err != nil {
		return nil, nil, err
	}
	return cmd, &Tree{tree}, nil
}

// Kill ends every process of the tree but the child itself, which the
// caller ends with KillGroup.
func (t *Tree) Kill() { t.t.kill() }

// startTracked is StartTree for this package's own children. Starting into
// a cgroup can fail where making it did not (an old kernel without clone3):
// then the child is started once more under the fallback, unless the
// program is missing, which no retry mends.
func startTracked(newCmd func() *exec.Cmd, start func(*exec.Cmd) error, withCgroup bool) (*exec.Cmd, *procTree, error) {
	cmd := newCmd()
	tree := newProcTree(cmd, withCgroup)
	err := start(cmd)
	if err != nil {
		triedCgroup := tree.usesCgroup()
		tree.abandon()
		if !triedCgroup || errors.Is(err, exec.ErrNotFound) || errors.Is(err, os.ErrNotExist) {
			return nil, nil, err
		}
		cmd = newCmd()
		tree = newProcTree(cmd, false)
		if err = start(cmd); err != nil {
			tree.abandon()
			return nil, nil, err
		}
	}
	tree.startedAs(cmd.Process.Pid)
	return cmd, tree, nil
}

// EndAdopted ends every process this process adopted as a child subreaper
// (the orphans of its providers' trees) that it did not start itself, with
// their subtrees (looking again after each round of kills, since a
// killed process's children are adopted in turn), and returns how many it
// ended. It closes the one escape
// the process trees leave: a descendant that leaves the provider's cgroup,
// clears its environment and is orphaned between two walks of the tracker.
// It is for a program that is only a host, at its exit (the ctxkit
// commands call it): in a program that also starts children of its own,
// their orphans are adopted too, and would be ended with the providers'.
func EndAdopted() int { return endAdopted() }
