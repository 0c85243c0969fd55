package consent

import (
	"context"
	"fmt"
	"time"
)

// Log is an append-only log of consent entries kept outside the
// process, shared by every process that reads it (a database behind
// several replicas of ctxkit serve). A Store opened on one decides
// from its entries exactly as from the local journal: the rules are those
// of the same pure core, applied in the log's order.
type Log interface {
	// Append makes e durable and orders it after every entry any writer
	// appended before; it returns only once e is committed.
	Append(ctx context.Context, e Entry) error
	// Since returns the entries after position pos (0: from the start),
	// in log order, and the position of the last one (pos when none).
	// A log may answer from what it knows to be current (a cache it is
	// told about changes to); with fresh set it must consult its source.
	// An error means the log cannot be read now, and the store fails
	// closed until a later call succeeds.
	Since(ctx context.Context, pos int64, fresh bool) ([]Entry, int64, error)
}

// consentLogTimeout bounds one call to a Log: a decision that
// cannot reach the log in this time fails closed rather than waiting.
const consentLogTimeout = 3 * time.Second

// OpenLog returns a store that keeps its entries in log and reads
// it before every decision (Since with fresh unset, so a log with a
// current cache answers without a round trip). The log is read whole
// first; an error there is returned.
func OpenLog(log Log) (*Store, error) {
	s := NewStore()
	s.log = log
	if err := s.refreshLogLocked(true); err != nil {
		return nil, err
	}
	return s, nil
}

// refreshLogLocked applies the log's entries after those already applied.
// On error the store fails closed until a later refresh succeeds.
func (s *Store) refreshLogLocked(fresh bool) error {
	ctx, cancel := context.WithTimeout(context.Background(), consentLogTimeout)
	defer cancel()
	entries, pos, err := s.log.Since(ctx, s.logPos, fresh || s.loadErr != nil)
	if err != nil {
		s.loadErr = fmt.Errorf("consent: read the shared store: %w", err)
		return s.loadErr
	}
	for i, e := range entries {
		if err := s.state.apply(e); err != nil {
			// A damaged entry is never read as "no consent": start over
			// from the beginning on the next call.
			s.loadErr = fmt.Errorf("consent: shared store entry %d after position %d: %w", i+1, s.logPos, err)
			s.state, s.logPos = newConsentState(), 0
			return s.loadErr
		}
	}
	s.logPos, s.loadErr = pos, nil
	return nil
}

// appendLogLocked commits e to the log, then reads it back with whatever
// other writers committed before it.
func (s *Store) appendLogLocked(e Entry) error {
	ctx, cancel := context.WithTimeout(context.Background(), consentLogTimeout)
	defer cancel()
	if err := s.log.Append(ctx, e); err != nil {
		return fmt.Errorf("consent: write the shared store: %w", err)
	}
	return s.refreshLogLocked(true)
}
