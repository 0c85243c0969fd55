package mcpbridge

import (
	"context"
	"os/exec"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ctxkit/ctxkit/host/transport"
)

// childTransport starts a stdio MCP server as mcp.CommandTransport does, with
// the host's process handling (transport.Command: a cleared environment, a
// process group of its own) and under the process-tree tracker stdio CGP
// providers use (transport.Tree), so that ending it ends every descendant,
// also those that left its group (setsid, double fork).
type childTransport struct {
	command []string
	env     []string // the caller's KEY=VALUE entries (transport.Command adds PATH and HOME)

	cmd    *exec.Cmd // set once started
	tree   *transport.Tree
	stderr *transport.Tail // the end of what the server wrote to stderr (required)
}

// stderrTailBytes is how much of a stdio server's stderr is kept for the
// errors that tell why it failed.
const stderrTailBytes = 4 << 10

// Connect starts the server, in a cgroup of its own where one can be made.
// Starting into a cgroup can fail where making it did not (a kernel
// without clone3): then it is started once more under the fallback.
func (c *childTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	var conn mcp.Connection
	newCmd := func() *exec.Cmd {
		cmd := transport.Command(c.command[0], c.command[1:], c.env)
		cmd.Stderr = c.stderr
		cmd.WaitDelay = 2 * time.Second // a descendant holding stderr must not block Wait
		return cmd
	}
	start := func(cmd *exec.Cmd) (err error) {
		conn, err = (&mcp.CommandTransport{Command: cmd, TerminateDuration: 2 * time.Second}).Connect(ctx)
		return err
	}
	// Tracked from the moment it runs: what it starts during the handshake
	// is ended with it.
	cmd, tree, err := transport.StartTree(newCmd, start, true)
	if err != nil {
		return nil, err
	}
	c.cmd, c.tree = cmd, tree
	return conn, nil
}

// kill ends the server's whole tree: its descendants, then its group and
// itself.
func (c *childTransport) kill() {
	if c.cmd == nil {
		return
	}
	c.tree.Kill()
	transport.KillGroup(c.cmd)
}
