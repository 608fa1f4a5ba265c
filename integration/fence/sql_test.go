package fence

import (
	"context"
	"database/sql"
	"errors"
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlease/redlease/fence"
	"github.com/redlease/redlease/internal/testing/fencetest"
)

// sqlDBs are the databases the SQL guard is tested on.
var sqlDBs = []struct {
	name string
	open func(*testing.T) (string, *sql.DB, fence.Dialect)
}{{"postgres", postgresDB}, {"sqlite", sqliteDB}}

// newGuard opens a database, creates the guard's table and fence_data
// with the resource's row.
func newGuard(t *testing.T, open func(*testing.T) (string, *sql.DB, fence.Dialect)) (*fence.SQL, *sql.DB, fence.Dialect) {
	_, db, d := open(t)
	g, err := fence.NewSQL(db, d, "")
	require.NoError(t, err)
	require.NoError(t, g.CreateTable(context.Background()))
	require.NoError(t, g.CreateTable(context.Background()), "CREATE TABLE IF NOT EXISTS: twice is fine")
	_, err = db.Exec(dataSchema)
	require.NoError(t, err)
	_, err = db.Exec(rebind(d, "INSERT INTO fence_data (resource, value, token) VALUES ($1, '', 0)"), resource)
	require.NoError(t, err)
	return g, db, d
}

func TestSQLGuard(t *testing.T) {
	for _, target := range sqlDBs {
		t.Run(target.name, func(t *testing.T) {
			g, db, d := newGuard(t, target.open)
			sc := &sqlCase{t: t, g: g, db: db, d: d}
			sc.tokens()
			assert.Equal(t, "d", sc.value(), "refused writes left the value")
			sc.rollback()
			sc.badInput()
			assert.Equal(t, "d", sc.value())
		})
	}
}

// sqlCase is a guard over one database, and its data table.
type sqlCase struct {
	t  *testing.T
	g  *fence.SQL
	db *sql.DB
	d  fence.Dialect
}

// set is a statement that sets the resource's value to v.
func (sc *sqlCase) set(v string) func(*sql.Tx) error {
	return func(tx *sql.Tx) error {
		_, err := tx.Exec(rebind(sc.d, "UPDATE fence_data SET value = $1 WHERE resource = $2"), v, resource)
		return err
	}
}

// value is the resource's value.
func (sc *sqlCase) value() string {
	var v string
	require.NoError(sc.t, sc.db.QueryRow(rebind(sc.d, "SELECT value FROM fence_data WHERE resource = $1"), resource).Scan(&v))
	return v
}

// tokens: a token at least the highest writes and becomes the highest; a
// lower one is refused, naming the highest.
func (sc *sqlCase) tokens() {
	t, ctx := sc.t, context.Background()
	for _, step := range []struct {
		token   uint64
		value   string
		highest uint64 // > 0: refused, naming it
	}{
		{token: 5, value: "a"},
		{token: 5, value: "b"},
		{token: 4, value: "c", highest: 5},
		{token: math.MaxInt64, value: "d"},
		{token: math.MaxInt64 - 1, value: "e", highest: math.MaxInt64},
	} {
		err := sc.g.Tx(ctx, resource, step.token, sc.set(step.value))
		if step.highest > 0 {
			assert.Equal(t, &fence.StaleTokenError{Resource: resource, Token: step.token, Highest: step.highest}, err)
			continue
		}
		require.NoError(t, err, "token %d", step.token)
		assert.Equal(t, step.value, sc.value())
		h, err := sc.g.Highest(ctx, resource)
		require.NoError(t, err)
		assert.Equal(t, step.token, h)
	}
}

// rollback: a failed transaction rolls the token back with it.
func (sc *sqlCase) rollback() {
	t, ctx := sc.t, context.Background()
	failed := errors.New("my statement failed")
	assert.Equal(t, failed, sc.g.Tx(ctx, "other", 3, func(*sql.Tx) error { return failed }))
	h, err := sc.g.Highest(ctx, "other")
	require.NoError(t, err)
	assert.Equal(t, uint64(0), h, "a failed transaction rolls the token back with it")
}

// badInput: an empty resource or a token out of range is refused.
func (sc *sqlCase) badInput() {
	for _, bad := range []struct {
		resource string
		token    uint64
		is       error
		errPart  string
	}{
		{"", 1, fence.ErrInvalidResource, "empty resource name"},
		{"r", 0, fence.ErrInvalidToken, `token 0 for resource "r"`},
		{"r", math.MaxInt64 + 1, fence.ErrInvalidToken, "token 9223372036854775808"},
	} {
		err := sc.g.Tx(context.Background(), bad.resource, bad.token, sc.set("bad"))
		assert.ErrorIs(sc.t, err, bad.is)
		assert.ErrorContains(sc.t, err, bad.errPart)
	}
}

func TestNewSQLRefuses(t *testing.T) {
	_, db, _ := sqliteDB(t)
	for _, tc := range []struct {
		name    string
		db      *sql.DB
		dialect fence.Dialect
		table   string
		errPart string
	}{
		{"nil db", nil, fence.SQLite, "", "nil *sql.DB"},
		{"no dialect", db, 0, "", "unknown dialect Dialect(0)"},
		{"bad table", db, fence.SQLite, "x; DROP TABLE y", `table name "x; DROP TABLE y"`},
		{"three parts", db, fence.Postgres, "a.b.c", `table name "a.b.c"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := fence.NewSQL(tc.db, tc.dialect, tc.table)
			assert.ErrorContains(t, err, tc.errPart)
		})
	}
	g, err := fence.NewSQL(db, fence.Postgres, "app.fence")
	require.NoError(t, err)
	schema, upsert, read := g.Statements()
	assert.Contains(t, schema, "CREATE TABLE IF NOT EXISTS app.fence")
	assert.Contains(t, upsert, "VALUES ($1, $2)")
	assert.Contains(t, upsert, "WHERE app.fence.token <= excluded.token")
	assert.Equal(t, "SELECT token FROM app.fence WHERE resource = $1", read)
	g, err = fence.NewSQL(db, fence.SQLite, "")
	require.NoError(t, err)
	_, upsert, _ = g.Statements()
	assert.Contains(t, upsert, "INSERT INTO redlease_fence (resource, token) VALUES (?, ?)")
}

// TestSQLConcurrent: writers with interleaved tokens (each several times)
// do a read-modify-write of the resource's log in fenced transactions, at
// the database's default isolation (READ COMMITTED on PostgreSQL): no
// update is lost, the log never goes down, and the value ends with the
// highest token's write. The NEGATIVE CONTROL: the same writes without
// the guard, which the checker catches.
func TestSQLConcurrent(t *testing.T) {
	for _, target := range sqlDBs {
		t.Run(target.name, func(t *testing.T) {
			g, db, d := newGuard(t, target.open)
			tokens := fencetest.Interleaved(16, 4)
			accepted, err := fencetest.Write(tokens, 8, func(tok uint64) error {
				return g.Tx(context.Background(), resource, tok, appendLog(d, tok))
			})
			require.NoError(t, err)
			var log, value string
			require.NoError(t, db.QueryRow(rebind(d, "SELECT log, value FROM fence_data WHERE resource = $1"), resource).Scan(&log, &value))
			require.NoError(t, fencetest.CheckRising(strings.Split(strings.TrimPrefix(log, ","), ","), accepted, 16, 4))
			assert.Equal(t, "16", value)
			assert.Error(t, fencetest.CheckRising(fencetest.Unguarded(tokens), len(tokens), 16, 4), "negative control: without the guard")
		})
	}
}

// appendLog is a read-modify-write of the resource's row: read the log,
// append the token, set the value.
func appendLog(d fence.Dialect, token uint64) func(*sql.Tx) error {
	return func(tx *sql.Tx) error {
		var log string
		if err := tx.QueryRow(rebind(d, "SELECT log FROM fence_data WHERE resource = $1"), resource).Scan(&log); err != nil {
			return err
		}
		v := strconv.FormatUint(token, 10)
		_, err := tx.Exec(rebind(d, "UPDATE fence_data SET log = $1, value = $2 WHERE resource = $3"), log+","+v, v, resource)
		return err
	}
}
