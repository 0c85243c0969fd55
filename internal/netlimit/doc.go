// Package netlimit holds the limits ctxkit's HTTP servers (ctxkit serve and
// ctxkit mcp --http) put on what clients can make them hold: connections
// open at once, and bytes of request bodies in flight, read as they arrive
// rather than sized from a Content-Length a client announced.
package netlimit
