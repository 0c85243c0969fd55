package host

import (
	"context"
	"time"
)

// Starter is implemented by a Server with a start-up of its own before it
// can answer, such as an MCP bridge starting a local server process (whose
// launcher may first download a package). The host calls Start before each
// query, after the handshake and the consent gate, bounded by
// StartTimeout instead of the query timeout: a slow first start does not
// use up the query's deadline, and the query timeout runs from when Start
// returned. Start must return at once when the Server is already started.
// A StartTimeout of 0 means no allowance of its own: the start-up then
// happens inside the query, under its timeout.
type Starter interface {
	Start(ctx context.Context) error
	StartTimeout() time.Duration
}

// start runs e's start-up under its allowance. A start-up that runs out of
// it fails the leg with ErrTimeout, saying that the start-up allowance is
// what ran out.
func (h *Host) start(ctx context.Context, e *entry) error {
	s, ok := e.p.(Starter)
	if !ok {
		return nil
	}
	allow := s.StartTimeout()
	if allow <= 0 {
		return nil
	}
	begin := time.Now()
	sctx, cancel := context.WithTimeout(ctx, allow)
	defer cancel()
	_, err, late := awaitCall(sctx, func(ctx context.Context) (struct{}, error) { return struct{}{}, s.Start(ctx) })
	switch {
	case !late && err == nil:
		return nil
	case ctx.Err() != nil:
		return newErr(e.id, "start", ErrTimeout, "canceled by caller", ctx.Err())
	case late || sctx.Err() != nil:
		return e.secrets.scrubError(newErr(e.id, "start", ErrTimeout,
			"not started within its start-up allowance of "+waited(begin, allow)+" (the query timeout runs after it)", err))
	}
	return e.secrets.scrubError(err)
}

// StartTimeout is the allowance of the Server's own start-up (Starter), 0
// when it has none.
func (p *inProcess) StartTimeout() time.Duration {
	if s, ok := p.s.(Starter); ok {
		return s.StartTimeout()
	}
	return 0
}

// Start runs the Server's own start-up (Starter); a panic in it fails the
// call with ErrProviderCrashed.
func (p *inProcess) Start(ctx context.Context) (err error) {
	defer p.guard("start", &err)
	s, ok := p.s.(Starter)
	if !ok {
		return nil
	}
	if err := s.Start(ctx); err != nil {
		return p.wrap("start", err)
	}
	return nil
}
