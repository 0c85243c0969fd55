// Package proctree ends the whole process tree of a child the program
// started: the child, its process group, and the descendants that left that
// group (setsid, double fork). Package host uses it for stdio CGP providers
// and package mcpbridge for stdio MCP servers, so that no process of either
// outlives the host that started it.
//
// Use: Prepare the exec.Cmd (its SysProcAttr already set) before Start,
// call Started with the child's pid right after Start (or Abandon when
// Start failed), and Kill when the child is to end. On Linux a cgroup v2
// holds the tree where one can be made, else a subreaper, a /proc tracker
// and an inherited environment token do (see Tree); elsewhere a Tree does
// nothing and the caller's process-group kill is all there is.
package proctree
