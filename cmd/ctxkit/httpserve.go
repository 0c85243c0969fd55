package main

import (
	"context"
	"errors"
	"net"
	"net/http"
	"time"
)

// serveUntilDone serves srv on ln until ctx is done, then shuts it down,
// giving requests in flight grace to finish. A shutdown that ctx asked for
// is not an error.
func serveUntilDone(ctx context.Context, srv *http.Server, ln net.Listener, grace time.Duration) error {
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), grace)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}()
	if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
