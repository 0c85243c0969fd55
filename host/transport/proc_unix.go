//go:build unix

package transport

import (
	"os/exec"
	"syscall"
)

// setProcessGroup puts the child in a new process group led by itself, so the
// host can signal it together with every descendant it spawns.
func setProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

// killGroup sends SIGKILL to the child's process group.
func killGroup(cmd *exec.Cmd) {
	if cmd.Process == nil {
		return
	}
	// The group id equals the child's pid (Setpgid with Pgid 0).
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	_ = cmd.Process.Kill()
}
