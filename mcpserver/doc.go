// Package mcpserver serves ctxkit over the Model Context Protocol, so that an
// agent host (Claude Code, Cursor, any official MCP SDK client) gets
// budgeted, fenced and audited evidence instead of raw tool output.
//
// NewServer returns the official Go SDK's *mcp.Server with four tools, each
// with a JSON Schema for its input and its output:
//
//	query_context    goal, budget, kinds, max_frames → the fenced prompt;
//	                 structured {prompt, citations, audit, legs}
//	compose_frames   offers [{provider, frame}], budget, compose options
//	assess_request   request (Anthropic, OpenAI or Gemini body), wire, model
//	quote_untrusted  parts [{text}|{untrusted}], key, label
//
// Each tool runs the same code as the matching route of the ctxkit HTTP API
// (package server): the arguments are that route's request body, so
// validation, limits and the answer's JSON are the API's own. A bad
// argument is a tool result with isError set and a message naming the
// argument; only an unknown tool is a protocol error.
//
// The files roots given in ServerOptions.Roots are listed and read as MCP
// resources (file:// URIs, paginated by the SDK).
//
// Run the server on any SDK transport. ServeStdio serves it over stdio on
// ctxkit's own line reader (host/transport), writing the tools' answers,
// already JSON, without the SDK's transport re-encoding them; HTTPHandler
// serves Streamable HTTP, refusing requests whose Host or Origin is not the
// server's own (DNS rebinding).
package mcpserver
