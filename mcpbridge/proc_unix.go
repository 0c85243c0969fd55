//go:build unix

package mcpbridge

import (
	"os/exec"
	"syscall"
)

// setProcessGroup starts the child in a group of its own, so that the
// grandchildren a launcher such as npx starts are stopped with it.
func setProcessGroup(cmd *exec.Cmd) { cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} }

// killGroup kills the child's process group.
func killGroup(cmd *exec.Cmd) {
	if cmd.Process != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}
