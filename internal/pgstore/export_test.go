package pgstore

import "context"

// ExecForTest runs sql on the store's pool (tests only).
func (s *Store) ExecForTest(ctx context.Context, sql string) error {
	_, err := s.pool.Exec(ctx, sql)
	return err
}

// Listening reports whether the log's notification connection is up (reads
// may then be answered from the cache).
func (l *ConsentLog) Listening() bool { return l.listening.Load() }

// The schema errors, for the package's external tests.
var (
	ErrSchemaNewer = errSchemaNewer
	ErrSchemaOld   = errSchemaOld
)
