//go:build unix

package mcpserver

import "syscall"

// openNonBlocking opens a FIFO without waiting for a writer, so that the
// regular-file check after opening can refuse it.
const openNonBlocking = syscall.O_NONBLOCK
