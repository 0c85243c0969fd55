//go:build !unix

package transport

import "os/exec"

// setProcessGroup is a no-op where process groups do not exist.
func setProcessGroup(cmd *exec.Cmd) {}

// killGroup kills the child process itself.
func killGroup(cmd *exec.Cmd) {
	if cmd.Process != nil {
		_ = cmd.Process.Kill()
	}
}
