package pgtest_test

import (
	"context"
	"testing"
	"time"

	"github.com/ctxkit/ctxkit/internal/pgtest"
	"github.com/jackc/pgx/v5"
)

// The helper's server answers queries, stops refusing connections, and
// serves the same data again after a restart.
func TestServerStartStopRestart(t *testing.T) {
	s := pgtest.Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := pgx.Connect(ctx, s.URL())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Exec(ctx, "CREATE TABLE kept (v int); INSERT INTO kept VALUES (42)"); err != nil {
		t.Fatal(err)
	}
	c.Close(ctx)
	s.Stop()
	if c, err := pgx.Connect(ctx, s.URL()); err == nil {
		c.Close(ctx)
		t.Fatal("connected to a stopped server")
	}
	if err := s.Restart(); err != nil {
		t.Fatal(err)
	}
	c, err = pgx.Connect(ctx, s.URL())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	var v int
	if err := c.QueryRow(ctx, "SELECT v FROM kept").Scan(&v); err != nil || v != 42 {
		t.Fatalf("after restart: v=%d err=%v", v, err)
	}
}
