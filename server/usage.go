package server

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/ctxkit/ctxkit/frame"
	"github.com/ctxkit/ctxkit/host"
	"github.com/ctxkit/ctxkit/server/api"
)

// UsageEvent is one frame /v1/query served.
type UsageEvent struct {
	// Frame is the served frame's identity (its provider included).
	Frame frame.ID
	// TokenCost is the frame's declared token_cost.
	TokenCost uint32
	// RequestID names the /v1/query request that served it.
	RequestID string
	// ServedAt is when the answer was composed.
	ServedAt time.Time
}

// UsageRecorder keeps the frames /v1/query serves so that GET /v1/usage
// can sum them: in memory for one process (the default), in a shared
// database for replicas behind a load balancer.
type UsageRecorder interface {
	// Record notes the events of one request. It is called on the
	// request's path and must not wait for storage (batch instead).
	Record(events []UsageEvent)
	// Usage returns the UR1 report of the events served at or after
	// since, in the order they were recorded.
	Usage(ctx context.Context, since time.Time) (host.UsageReport, error)
}

// defaultMaxUsageEvents bounds the events a memoryUsage keeps.
const defaultMaxUsageEvents = 100_000

// errUsageForgotten: the report asked for reaches back past the oldest
// event a bounded recorder still holds, so it would undercount.
var errUsageForgotten = errors.New("usage: the events asked for are no longer held")

// memoryUsage is the local UsageRecorder: this process's most recent
// events (at most Max, default 100,000, at least three
// quarters of it once full, so a long-running
// server's memory stays bounded), lost on exit. A report reaching back
// past the oldest event held is refused with errUsageForgotten rather than
// undercounted. Safe for concurrent use.
type memoryUsage struct {
	// Max bounds the events held; zero means 100,000.
	Max int

	mu     sync.Mutex
	events []UsageEvent
	forgot time.Time // ServedAt of the newest event dropped
}

// Record appends events, dropping the oldest beyond Max.
func (m *memoryUsage) Record(events []UsageEvent) {
	limit := m.Max
	if limit <= 0 {
		limit = defaultMaxUsageEvents
	}
	m.mu.Lock()
	m.events = append(m.events, events...)
	if len(m.events) > limit {
		// Drop down to three quarters at once, so the copy is paid once
		// per limit/4 events rather than on every request.
		over := len(m.events) - limit*3/4
		m.forgot = m.events[over-1].ServedAt
		m.events = append(m.events[:0], m.events[over:]...)
	}
	m.mu.Unlock()
}

// Usage sums the events served at or after since.
func (m *memoryUsage) Usage(_ context.Context, since time.Time) (host.UsageReport, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.forgot.IsZero() && !since.After(m.forgot) {
		return host.UsageReport{}, fmt.Errorf("%w: this process keeps its last %d served frames, the oldest dropped served at %s; ask with since after it, or run with a shared store (docs/deploy.md)",
			errUsageForgotten, len(m.events), m.forgot.UTC().Format(time.RFC3339Nano))
	}
	var in []UsageEvent
	for _, e := range m.events {
		if !e.ServedAt.Before(since) {
			in = append(in, e)
		}
	}
	return UsageReportOf(in, time.Now()), nil
}

// UsageReportOf builds the UR1 report of events: one line per provider,
// in order of first appearance, each frame billed at its token_cost.
func UsageReportOf(events []UsageEvent, asOf time.Time) host.UsageReport {
	r := host.UsageReport{AsOf: asOf.UTC().Format("2006-01-02T15:04:05Z")}
	at := map[string]int{}
	for _, e := range events {
		i, ok := at[e.Frame.Provider]
		if !ok {
			i = len(r.Providers)
			at[e.Frame.Provider] = i
			r.Providers = append(r.Providers, host.ProviderUsage{ProviderID: e.Frame.Provider})
		}
		p := &r.Providers[i]
		p.ServedFrames = append(p.ServedFrames, host.ServedFrame{Frame: e.Frame, TokenCost: e.TokenCost})
		p.FramesServed++
		p.TokenCost += uint64(e.TokenCost)
		r.BudgetConsumed += uint64(e.TokenCost)
	}
	return r
}

// recordUsage hands the fan-out's served frames to the recorder.
func (h *Handler) recordUsage(fo *host.FanOut) {
	if h.usage == nil {
		return
	}
	now := time.Now()
	id := newRequestID()
	var events []UsageEvent
	for _, o := range fo.Outcomes {
		if o.Status != host.StatusFrames {
			continue
		}
		for i := range o.Frames {
			f := &o.Frames[i]
			events = append(events, UsageEvent{Frame: f.Identity(o.Provider), TokenCost: f.TokenCost, RequestID: id, ServedAt: now})
		}
	}
	if len(events) > 0 {
		h.usage.Record(events)
	}
}

func newRequestID() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// serveUsage answers GET /v1/usage?since=T.
func (h *Handler) serveUsage(w http.ResponseWriter, r *http.Request) {
	if h.usage == nil {
		writeError(w, &api.Error{Status: http.StatusServiceUnavailable, Code: api.CodeUnavailable,
			Message: "usage: no usage recorder is configured"})
		return
	}
	var since time.Time
	if v := r.URL.Query().Get("since"); v != "" {
		t, err := time.Parse(time.RFC3339Nano, v)
		if err != nil {
			writeError(w, api.BadRequest("since", "since: %q is not a timestamp (YYYY-MM-DDTHH:MM:SSZ)", v))
			return
		}
		since = t
	}
	rep, err := h.usage.Usage(r.Context(), since)
	if errors.Is(err, errUsageForgotten) {
		writeError(w, api.BadRequest("since", "%v", err))
		return
	}
	if err != nil {
		writeError(w, &api.Error{Status: http.StatusServiceUnavailable, Code: api.CodeUnavailable, Message: "usage: " + err.Error()})
		return
	}
	if err := rep.Check(); err != nil {
		writeError(w, &api.Error{Status: http.StatusInternalServerError, Code: api.CodeInternal, Message: "usage: " + err.Error()})
		return
	}
	writeJSON(w, http.StatusOK, rep)
}
