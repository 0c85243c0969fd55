//go:build !linux

package transport

import "os/exec"

// procTree is a no-op outside Linux: the child's process group is what the
// host can end (see killGroup); descendants that leave it are not tracked.
type procTree struct{}

func newProcTree(*exec.Cmd, bool) *procTree { return &procTree{} }
func (t *procTree) usesCgroup() bool        { return false }
func (t *procTree) abandon()                {}
func (t *procTree) startedAs(int)           {}
func (t *procTree) kill()                   {}

// endAdopted does nothing outside Linux: the host adopts no orphans.
func endAdopted() int { return 0 }
