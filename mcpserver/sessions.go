package mcpserver

import (
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// sessionTable bounds the Streamable HTTP sessions open at once. It knows
// a session from the response that opened it, and when it was last used.
// At the limit a new session closes the session idle longest (clients
// often drop a session without deleting it); a session with a request in
// flight is never closed for another (a stream only listens, and does not
// count).
type sessionTable struct {
	srv *mcp.Server
	max int

	mu      sync.Mutex
	use     map[string]*sessionUse // the sessions this handler opened, by id
	opening int                    // sessions admitted whose id is not known yet
}

// sessionUse is what the table knows of one session.
type sessionUse struct {
	last time.Time // when its last request began or ended
	busy int       // its requests in flight
}

func newSessionTable(srv *mcp.Server, max int) *sessionTable {
	return &sessionTable{srv: srv, max: max, use: map[string]*sessionUse{}}
}

// begin and end bracket a request on session id; busy says whether the
// request keeps the session from being closed for a newcomer (a stream
// only listens). An id the table does not know is left alone: the SDK
// answers it (404), and a client cannot grow the table by making ids up.
// begin reports whether it counted the request, and end must be called
// only then: a session the table learns of during the request (its
// opening answer still going out) must not count one request more ended
// than begun.
func (t *sessionTable) begin(id string, busy bool) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	u := t.use[id]
	if u == nil {
		return false
	}
	if busy {
		u.busy++
	}
	u.last = time.Now()
	return true
}

func (t *sessionTable) end(id string, busy bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if u := t.use[id]; u != nil {
		if busy {
			u.busy--
		}
		u.last = time.Now()
	}
}

// opened records the session a request without a session id opened (id
// is empty when it opened none); admitted says the request went through
// admit and is counted in opening until now.
func (t *sessionTable) opened(id string, admitted bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if admitted {
		t.opening--
	}
	if id != "" && t.use[id] == nil {
		t.use[id] = &sessionUse{last: time.Now()}
	}
}

// admit makes room for one more session, closing the idle-longest one at
// the limit, and reports false when every session is busy.
func (t *sessionTable) admit() bool {
	t.mu.Lock()
	// Under the lock, so that no session is opened between the SDK's list
	// and the count.
	live := map[string]*mcp.ServerSession{}
	for ss := range t.srv.Sessions() {
		live[ss.ID()] = ss
	}
	open := 0
	var victim string
	for id, u := range t.use {
		switch {
		case live[id] == nil && u.busy == 0: // deleted or timed out
			delete(t.use, id)
			continue
		case live[id] == nil:
			continue
		}
		open++
		if u.busy == 0 && (victim == "" || u.last.Before(t.use[victim].last)) {
			victim = id
		}
	}
	if open+t.opening >= t.max {
		if victim == "" {
			t.mu.Unlock()
			return false
		}
		delete(t.use, victim)
	} else {
		victim = ""
	}
	t.opening++
	t.mu.Unlock()
	if victim != "" {
		// Outside the lock: closing waits for the session's connection.
		_ = live[victim].Close()
	}
	return true
}
