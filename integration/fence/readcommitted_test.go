package fence

import (
	"context"
	"database/sql"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlease/redlease/fence"
	"github.com/redlease/redlease/integration/fence/internal/pgtest"
)

// TestPostgresReadCommittedRace is the interleaving that breaks a check
// written as a read then a write under READ COMMITTED: the transaction of
// token 6 has raised the row; the one of token 5 checks while 6 is still
// open, and is blocked; 6 commits. The guard's upsert re-checks its WHERE
// against the committed row and refuses 5. The NEGATIVE CONTROL, a naive
// check (SELECT the token, then UPDATE it), read 4 before 6 committed,
// and lowers the token to 5 once unblocked.
func TestPostgresReadCommittedRace(t *testing.T) {
	s := pgtest.Start(t)
	for _, tc := range []struct {
		name  string
		check func(g *fence.SQL, table string) checkFunc
		want  func(t *testing.T, err5 error, highest uint64)
	}{
		{"guard", func(g *fence.SQL, _ string) checkFunc { return g.Check }, func(t *testing.T, err5 error, highest uint64) {
			assert.Equal(t, &fence.StaleTokenError{Resource: resource, Token: 5, Highest: 6}, err5)
			assert.Equal(t, uint64(6), highest)
		}},
		{"naive check (negative control)", func(_ *fence.SQL, table string) checkFunc { return naiveCheck(table) }, func(t *testing.T, err5 error, highest uint64) {
			assert.NoError(t, err5, "the naive check lets the stale token through")
			assert.Equal(t, uint64(5), highest, "and lowers the highest token")
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			db := s.DB(t)
			table := fmt.Sprintf("fence_rc_%d", time.Now().UnixNano())
			g, err := fence.NewSQL(db, fence.Postgres, table)
			require.NoError(t, err)
			require.NoError(t, g.CreateTable(context.Background()))
			require.NoError(t, g.Tx(context.Background(), resource, 4, func(*sql.Tx) error { return nil }))
			err5 := interleave(t, db, tc.check(g, table))
			highest, err := g.Highest(context.Background(), resource)
			require.NoError(t, err)
			tc.want(t, err5, highest)
		})
	}
}

// checkFunc raises the resource's token in tx, or refuses.
type checkFunc func(ctx context.Context, tx *sql.Tx, resource string, token uint64) error

// interleave runs token 6's check and holds its transaction open while
// token 5's check waits on the row, then commits 6 and returns 5's
// result (5 committed if it passed).
func interleave(t *testing.T, db *sql.DB, check checkFunc) error {
	ctx := context.Background()
	tx6, err := db.BeginTx(ctx, nil)
	require.NoError(t, err)
	require.NoError(t, check(ctx, tx6, resource, 6))
	done := make(chan error, 1)
	go func() {
		tx5, err := db.BeginTx(ctx, nil)
		if err != nil {
			done <- err
			return
		}
		if err := check(ctx, tx5, resource, 5); err != nil {
			_ = tx5.Rollback()
			done <- err
			return
		}
		done <- tx5.Commit()
	}()
	waitBlocked(t, db)
	require.NoError(t, tx6.Commit())
	select {
	case err := <-done:
		return err
	case <-time.After(30 * time.Second):
		t.Fatal("token 5's transaction did not finish after 6 committed")
	}
	return nil
}

// waitBlocked waits until a backend waits on a lock (token 5's check
// behind token 6's row lock).
func waitBlocked(t *testing.T, db *sql.DB) {
	deadline := time.Now().Add(30 * time.Second)
	for {
		var n int
		require.NoError(t, db.QueryRow("SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock'").Scan(&n))
		if n > 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("token 5's check never waited on token 6's lock")
		}
		time.Sleep(5 * time.Millisecond) // poll: pg has no notice of a lock wait
	}
}

// naiveCheck is the NEGATIVE CONTROL: a check written as a read, then a
// write, without locking the row first.
func naiveCheck(table string) checkFunc {
	return func(ctx context.Context, tx *sql.Tx, res string, token uint64) error {
		var h int64
		if err := tx.QueryRowContext(ctx, "SELECT token FROM "+table+" WHERE resource = $1", res).Scan(&h); err != nil {
			return err
		}
		if uint64(h) > token {
			return &fence.StaleTokenError{Resource: res, Token: token, Highest: uint64(h)}
		}
		_, err := tx.ExecContext(ctx, "UPDATE "+table+" SET token = $2 WHERE resource = $1", res, int64(token))
		return err
	}
}
