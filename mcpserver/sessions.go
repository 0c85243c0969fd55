package mcpserver

import (
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// sessionTable bounds the Streamable HTTP sessions open at once. It knows
// a session from the response that opened it, and when it was last used.
// At the limit a new session closes the session idle longest (clients
// often drop a session without deleting it); a session with a request or
// stream open is never closed for another.
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

// begin and end bracket a request on session id. An id the table does not
// know is left alone: the SDK answers it (404), and a client cannot grow
// the table by making ids up.
func (t *sessionTable) begin(id string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if u := t.use[id]; u != nil {
		u.busy++
		u.last = time.Now()
	}
}

func (t *sessionTable) end(id string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if u := t.use[id]; u != nil {
		u.busy--
		u.last = time.Now()
	}
}

// opened records the session a request without a session id opened (id
// is empty when it opened none); admitted says the request went through
// admit.
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
