package pgstore

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ctxkit/ctxkit/host/consent"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgconn/ctxwatch"
)

// consentChannel is the NOTIFY channel a consent append signals on.
const consentChannel = "ctxkit_consent"

// consentLock serialises consent appends (see the package doc).
const consentLock = 0x636f6e73656e74 // "consent"

// heartbeat is how long the listener waits for a notification before it
// checks that its connection still works; a dead connection is noticed
// within about twice this, and until it is back every read goes to the
// database.
const heartbeat = 300 * time.Millisecond

// ConsentLog is the consent log in the database (a consent.Log). It
// listens for appends on a connection of its own: while that connection
// is up, a read with nothing new since the last answers without a round
// trip; while it is down, every read queries the database, never the
// stale cache.
type ConsentLog struct {
	s *Store
	// listening: the LISTEN connection is up and every append committed
	// since it came up has been signalled.
	listening atomic.Bool
	// dirty: a notification arrived (or the listener came back) since the
	// last successful read.
	dirty atomic.Bool

	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// ConsentLog returns the store's consent log and starts its listener,
// stopped by Close on the log.
func (s *Store) ConsentLog() *ConsentLog {
	ctx, cancel := context.WithCancel(context.Background())
	l := &ConsentLog{s: s, cancel: cancel}
	l.dirty.Store(true)
	l.wg.Add(1)
	go l.listen(ctx)
	return l
}

// Close stops the listener.
func (l *ConsentLog) Close() {
	l.cancel()
	l.wg.Wait()
}

// Append commits e; the commit signals every replica's listener.
func (l *ConsentLog) Append(ctx context.Context, e consent.Entry) error {
	b, err := json.Marshal(e)
	if err != nil {
		return err
	}
	err = pgx.BeginFunc(ctx, l.s.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, int64(consentLock)); err != nil {
			return err
		}
		var seq int64
		if err := tx.QueryRow(ctx, `INSERT INTO ctxkit_consent_log (entry) VALUES ($1) RETURNING seq`, b).Scan(&seq); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `SELECT pg_notify($1, $2)`, consentChannel, strconv.FormatInt(seq, 10))
		return err
	})
	l.dirty.Store(true)
	if err != nil {
		return l.s.wrap("append consent", err)
	}
	return nil
}

// Since returns the entries after pos. Unless fresh, a read while the
// listener is up and nothing was signalled since the last read returns
// nothing without querying.
func (l *ConsentLog) Since(ctx context.Context, pos int64, fresh bool) ([]consent.Entry, int64, error) {
	if !fresh && l.listening.Load() && !l.dirty.Load() {
		return nil, pos, nil
	}
	// Cleared before the query: a notification arriving during it sets
	// it again, and the next read queries once more.
	l.dirty.Store(false)
	out, next, err := l.query(ctx, pos)
	if err != nil {
		l.dirty.Store(true)
		return nil, pos, l.s.wrap("read consent", err)
	}
	return out, next, nil
}

func (l *ConsentLog) query(ctx context.Context, pos int64) ([]consent.Entry, int64, error) {
	rows, err := l.s.pool.Query(ctx, `SELECT seq, entry FROM ctxkit_consent_log WHERE seq > $1 ORDER BY seq`, pos)
	if err != nil {
		return nil, pos, err
	}
	defer rows.Close()
	var out []consent.Entry
	next := pos
	for rows.Next() {
		var seq int64
		var raw []byte
		if err := rows.Scan(&seq, &raw); err != nil {
			return nil, pos, err
		}
		var e consent.Entry
		if err := json.Unmarshal(raw, &e); err != nil {
			return nil, pos, fmt.Errorf("consent log row %d: %w", seq, err)
		}
		out = append(out, e)
		next = seq
	}
	return out, next, rows.Err()
}

// listen keeps a LISTEN connection up until ctx ends, reconnecting after
// a failure.
func (l *ConsentLog) listen(ctx context.Context) {
	defer l.wg.Done()
	backoff := 50 * time.Millisecond
	for ctx.Err() == nil {
		err := l.listenOnce(ctx)
		l.listening.Store(false)
		l.dirty.Store(true)
		if ctx.Err() != nil {
			return
		}
		if err == nil {
			backoff = 50 * time.Millisecond
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(backoff):
		}
		if backoff < time.Second {
			backoff *= 2
		}
	}
}

// listenOnce connects, listens, and waits for notifications until the
// connection fails or ctx ends.
func (l *ConsentLog) listenOnce(ctx context.Context) error {
	cfg := l.s.pool.Config().ConnConfig.Copy()
	// A wait that times out leaves the connection usable (no cancel
	// request to the server), so the heartbeat is a plain deadline.
	cfg.BuildContextWatcherHandler = func(c *pgconn.PgConn) ctxwatch.Handler {
		return &pgconn.DeadlineContextWatcherHandler{Conn: c.Conn()}
	}
	cctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	conn, err := pgx.ConnectConfig(cctx, cfg)
	cancel()
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(ctx, "LISTEN "+consentChannel); err != nil {
		return err
	}
	// Anything committed while no one listened is read on the next
	// decision: mark dirty before trusting the cache again.
	l.dirty.Store(true)
	l.listening.Store(true)
	for {
		wctx, cancel := context.WithTimeout(ctx, heartbeat)
		_, err := conn.WaitForNotification(wctx)
		cancel()
		switch {
		case err == nil:
			l.dirty.Store(true)
			continue
		case ctx.Err() != nil:
			return ctx.Err()
		case !pgconn.Timeout(err) || conn.IsClosed():
			return err
		}
		pctx, cancel := context.WithTimeout(ctx, heartbeat)
		err = conn.Ping(pctx)
		cancel()
		if err != nil {
			return err
		}
	}
}
