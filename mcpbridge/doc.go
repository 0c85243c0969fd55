// Package mcpbridge serves a Model Context Protocol server's resources, and
// optionally one of its search-like tools, as a CGP provider, so that a
// ctxkit host puts them under its budget, fences and audit.
//
// A Provider is a serve.Server: register it with Host.AddInProcess (or
// Register). On each query it lists the MCP
// server's resources (every page, up to Options.MaxResources), reads the
// text ones (up to Options.MaxReads resources and Options.MaxBytes bytes,
// each one left out recorded with its reason in Report), cuts them into
// chunks and ranks the chunks for the goal with the files provider's own
// chunker and ranking, and answers with the best chunks that fit the
// query's max_tokens and max_frames. Each frame's provenance names the
// resource URI and the MCP server; its valid_from is the resource's
// lastModified annotation when it has one.
//
// The MCP server is reached over stdio (a child process) or Streamable
// HTTP. A remote HTTP server is egress: the provider declares it in its
// handshake, so the host's consent gate refuses the leg before any byte is
// sent unless consent was granted; the MCP connection is only opened by
// the first query. A server that fails, hangs or answers garbage fails its
// own leg with a typed error.
package mcpbridge
