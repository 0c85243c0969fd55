// Package transport carries Context Graph Protocol envelopes between a host
// and a provider. A Transport yields a Connection: read one envelope, write
// one envelope, close. Every Connection reads through the one bounded line
// reader (wire.Decoder), so no peer can make the other side hold more than
// the protocol's 16 MiB line.
//
// Three transports exist. Stdio starts a child process with a cleared
// environment in a process group (on Linux under the subreaper and the tree
// tracker, and in a cgroup of its own where cgroup v2 is writable) and speaks
// NDJSON on its stdin and stdout; closing the connection ends the child's
// whole process tree. HTTP posts one envelope per request and reads the one
// envelope of the response body. Stream and Pipe wrap any byte stream (a
// provider's own stdin and stdout, or memory) as a Connection.
//
// The package knows envelopes only as encoded bytes: routing, correlation,
// consent and audits belong to the host, answering to the provider-side
// server.
package transport
