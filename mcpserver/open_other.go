//go:build !unix

package mcpserver

// openNonBlocking is 0 where there are no FIFOs to wait on.
const openNonBlocking = 0
