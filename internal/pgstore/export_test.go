package pgstore

import "context"

// ExecForTest runs sql on the store's pool (tests only).
func (s *Store) ExecForTest(ctx context.Context, sql string) error {
	_, err := s.pool.Exec(ctx, sql)
	return err
}
