package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/ctxkit/ctxkit/compose"
	"github.com/ctxkit/ctxkit/host"
	"github.com/ctxkit/ctxkit/internal/safetext"
	"github.com/ctxkit/ctxkit/server"
	"github.com/ctxkit/ctxkit/server/api"
	"github.com/ctxkit/ctxkit/server/client"
	"github.com/ctxkit/ctxkit/window"
)

// A runner carries out a request the CLI parsed from its flags: in this
// process, or on a ctxkit service (`CMD --remote URL`). Both answer with
// the same types, which the command prints through one printer, so the
// output (text, JSON, exit code) does not depend on where the work ran.
type runner interface {
	compose(ctx context.Context, req *api.ComposeRequest) (*compose.Result, error)
	assess(ctx context.Context, req *api.AssessRequest) (*window.Assessment, error)
	// query runs req on q, the host the local flags built; a remote
	// runner has none (the service queries its own providers).
	query(ctx context.Context, q server.Querier, req *api.QueryRequest) (*compose.Result, *host.FanOut, error)
	remote() bool
}

// localRunner runs requests in-process, through the same request checks
// and defaults as the service.
type localRunner struct{}

func (localRunner) remote() bool { return false }

func (localRunner) compose(ctx context.Context, req *api.ComposeRequest) (*compose.Result, error) {
	opts, err := req.Options()
	if err != nil {
		return nil, err
	}
	return compose.ForPrompt(req.Offers, *req.Budget, opts), ctx.Err()
}

func (localRunner) assess(ctx context.Context, req *api.AssessRequest) (*window.Assessment, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	in, err := req.Inputs()
	if err != nil {
		return nil, err
	}
	a := window.Assess(in)
	return &a, nil
}

func (localRunner) query(ctx context.Context, q server.Querier, req *api.QueryRequest) (*compose.Result, *host.FanOut, error) {
	return server.New(&server.Options{Query: q, MaxFrames: maxQueryFrames}).Query(ctx, req)
}

// remoteRunner runs requests on a ctxkit service.
type remoteRunner struct{ c *client.Client }

func (remoteRunner) remote() bool { return true }

func (r remoteRunner) compose(ctx context.Context, req *api.ComposeRequest) (*compose.Result, error) {
	res, err := r.c.Compose(ctx, req)
	if err != nil {
		return nil, err
	}
	return &res.Result, nil
}

func (r remoteRunner) assess(ctx context.Context, req *api.AssessRequest) (*window.Assessment, error) {
	return r.c.Assess(ctx, req)
}

func (r remoteRunner) query(ctx context.Context, _ server.Querier, req *api.QueryRequest) (*compose.Result, *host.FanOut, error) {
	ans, err := r.c.Query(ctx, req)
	if err != nil {
		return nil, nil, err
	}
	return &ans.Composition, &ans.FanOut, nil
}

// remoteCommands are the commands that take --remote URL.
var remoteCommands = map[string]func(ctx context.Context, r runner, args []string, s stdio) int{
	"compose": composeWith,
	"assess":  assessWith,
	"query":   queryWith,
}

// dispatchRemote runs args on a service when they hold --remote URL; ok is
// false when they do not.
func dispatchRemote(ctx context.Context, args []string, s stdio) (code int, ok bool) {
	if len(args) == 0 {
		return 0, false
	}
	url, rest, found := cutRemote(args[1:])
	if !found {
		return 0, false
	}
	runWith, supported := remoteCommands[args[0]]
	if !supported {
		fmt.Fprintf(s.err, "%s: --remote works with compose, assess and query, not %q\n", args[0], args[0])
		return exitUsage, true
	}
	if url == "" {
		fmt.Fprintf(s.err, "%s: --remote needs a URL, for example --remote http://127.0.0.1:8787\n", args[0])
		return exitUsage, true
	}
	c, err := client.New(url, nil)
	if err != nil {
		fmt.Fprintf(s.err, "%s: --remote: %v\n", args[0], err)
		return exitUsage, true
	}
	return runWith(ctx, remoteRunner{c}, rest, s), true
}

// cutRemote removes --remote URL (or --remote=URL, one or two dashes) from
// args, before any "--".
func cutRemote(args []string) (url string, rest []string, found bool) {
	for i, a := range args {
		if a == "--" {
			break
		}
		name, val, hasVal := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if !strings.HasPrefix(a, "-") || name != "remote" {
			continue
		}
		if hasVal {
			return val, append(append(rest, args[:i]...), args[i+1:]...), true
		}
		if i+1 < len(args) {
			return args[i+1], append(append(rest, args[:i]...), args[i+2:]...), true
		}
		return "", append(rest, args[:i]...), true
	}
	return "", args, false
}

// requestFailed prints why a runner refused a request and maps it to an
// exit code: 1 for a protocol rule violation (422), 2 for anything else.
// A refusal reads the same from the local runner and from a service: both
// answer with the service's *api.Error.
func requestFailed(cmd string, s stdio, err error) int {
	var e *api.Error
	if !errors.As(err, &e) {
		fmt.Fprintf(s.err, "%s: %v\n", cmd, err)
		return exitUsage
	}
	fmt.Fprintf(s.err, "%s: %s\n", cmd, safetext.Escape(e.Message))
	if e.Status == http.StatusUnprocessableEntity {
		return exitFailed
	}
	return exitUsage
}
