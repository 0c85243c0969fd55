package pgstore

import (
	"context"
	"sync"
	"time"

	"github.com/ctxkit/ctxkit/host"
	"github.com/ctxkit/ctxkit/server"
	"github.com/jackc/pgx/v5"
)

// flushEvery is how long a recorded event waits before its batch is
// written; a request only appends to memory.
const flushEvery = 20 * time.Millisecond

// maxPending bounds the events held while the database cannot take them;
// beyond it the oldest are dropped.
const maxPending = 1 << 20

// Usage records served frames in the database in batches (a
// server.UsageRecorder) and sums them over every replica.
type Usage struct {
	s *Store

	mu      sync.Mutex
	pending []server.UsageEvent
	flushMu sync.Mutex // one batch written at a time, in order

	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// Usage returns the store's usage recorder and starts its writer; Close
// writes what is pending.
func (s *Store) Usage() *Usage {
	ctx, cancel := context.WithCancel(context.Background())
	u := &Usage{s: s, cancel: cancel}
	u.wg.Add(1)
	go u.run(ctx)
	return u
}

// Record queues events for the next batch; it never waits for the
// database.
func (u *Usage) Record(events []server.UsageEvent) {
	u.mu.Lock()
	u.pending = append(u.pending, events...)
	if over := len(u.pending) - maxPending; over > 0 {
		u.pending = append(u.pending[:0], u.pending[over:]...)
	}
	u.mu.Unlock()
}

func (u *Usage) run(ctx context.Context) {
	defer u.wg.Done()
	t := time.NewTicker(flushEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			_ = u.flush(ctx)
		}
	}
}

// flush writes the pending events now, in one COPY; on failure they stay
// pending for the next attempt.
func (u *Usage) flush(ctx context.Context) error {
	u.flushMu.Lock()
	defer u.flushMu.Unlock()
	u.mu.Lock()
	batch := u.pending
	u.pending = nil
	u.mu.Unlock()
	if len(batch) == 0 {
		return nil
	}
	rows := make([][]any, len(batch))
	for i, e := range batch {
		rows[i] = []any{e.Frame.Provider, e.Frame.Frame, e.Frame.Digest, int64(e.TokenCost), e.RequestID, e.ServedAt}
	}
	_, err := u.s.pool.CopyFrom(ctx, pgx.Identifier{"ctxkit_usage"},
		[]string{"provider_id", "frame_id", "content_digest", "token_cost", "request_id", "served_at"}, pgx.CopyFromRows(rows))
	if err != nil {
		u.mu.Lock()
		u.pending = append(batch, u.pending...)
		u.mu.Unlock()
		return u.s.wrap("record usage", err)
	}
	return nil
}

// Usage sums every replica's events served at or after since. This
// process's pending events are written first; another replica's last
// batch (at most flushEvery old) may not be in yet.
func (u *Usage) Usage(ctx context.Context, since time.Time) (host.UsageReport, error) {
	if err := u.flush(ctx); err != nil {
		return host.UsageReport{}, err
	}
	rows, err := u.s.pool.Query(ctx, `SELECT provider_id, frame_id, content_digest, token_cost, request_id, served_at
		FROM ctxkit_usage WHERE served_at >= $1 ORDER BY seq`, since)
	if err != nil {
		return host.UsageReport{}, u.s.wrap("read usage", err)
	}
	defer rows.Close()
	var events []server.UsageEvent
	for rows.Next() {
		var e server.UsageEvent
		var cost int64
		if err := rows.Scan(&e.Frame.Provider, &e.Frame.Frame, &e.Frame.Digest, &cost, &e.RequestID, &e.ServedAt); err != nil {
			return host.UsageReport{}, u.s.wrap("read usage", err)
		}
		e.TokenCost = uint32(cost)
		events = append(events, e)
	}
	if err := rows.Err(); err != nil {
		return host.UsageReport{}, u.s.wrap("read usage", err)
	}
	return server.UsageReportOf(events, time.Now()), nil
}

// Close stops the writer and writes what is pending (bounded by ctx).
func (u *Usage) Close(ctx context.Context) error {
	u.cancel()
	u.wg.Wait()
	return u.flush(ctx)
}
