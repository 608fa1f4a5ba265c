package fence

import (
	"context"
	"database/sql"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"
	_ "modernc.org/sqlite"

	"github.com/redlease/redlease/fence"
	"github.com/redlease/redlease/integration/fence/internal/pgtest"
	"github.com/redlease/redlease/internal/testing/redistest"
)

// resource is the resource every test writes.
const resource = "fence:resource"

// store is a store the leader program writes to: its flags, and the
// value the resource holds now ("" when none).
type store struct {
	args  []string
	value func(t *testing.T) string
}

// The stores, by the leader program's -store name. fenced says whether a
// store that decides it server-side (http) checks tokens.
var stores = map[string]func(t *testing.T, fenced bool) store{
	"redis":    redisStore,
	"postgres": func(t *testing.T, _ bool) store { return sqlStore(t, "postgres", postgresDB) },
	"sqlite":   func(t *testing.T, _ bool) store { return sqlStore(t, "sqlite", sqliteDB) },
	"http":     httpStore,
}

func redisStore(t *testing.T, _ bool) store {
	rc := redistest.Start(t, 1).Server(0).Client(t)
	return store{
		args: []string{"-store", "redis", "-addr", rc.Options().Addr},
		value: func(t *testing.T) string {
			v, err := rc.Get(context.Background(), resource).Result()
			if errors.Is(err, redis.Nil) {
				return ""
			}
			require.NoError(t, err)
			return v
		},
	}
}

// postgresDB starts a PostgreSQL server and returns its DSN and database.
func postgresDB(t *testing.T) (string, *sql.DB, fence.Dialect) {
	s := pgtest.Start(t)
	return s.DSN, s.DB(t), fence.Postgres
}

// sqliteDB makes a SQLite database file: WAL, a busy timeout, and
// transactions that take the write lock at BEGIN (so that writers wait
// for each other instead of failing with SQLITE_BUSY).
func sqliteDB(t *testing.T) (string, *sql.DB, fence.Dialect) {
	dsn := "file:" + filepath.Join(t.TempDir(), "fence.db") +
		"?_pragma=busy_timeout(20000)&_pragma=journal_mode(WAL)&_txlock=immediate"
	db, err := sql.Open("sqlite", dsn)
	require.NoError(t, err)
	t.Cleanup(func() { _ = db.Close() })
	return dsn, db, fence.SQLite
}

// dataSchema is the table of the resources' values in the SQL tests.
const dataSchema = `CREATE TABLE fence_data (
    resource TEXT PRIMARY KEY,
    value    TEXT NOT NULL,
    token    BIGINT NOT NULL,
    log      TEXT NOT NULL DEFAULT '')`

// sqlStore creates the guard's table and fence_data.
func sqlStore(t *testing.T, name string, open func(*testing.T) (string, *sql.DB, fence.Dialect)) store {
	dsn, db, d := open(t)
	g, err := fence.NewSQL(db, d, "")
	require.NoError(t, err)
	require.NoError(t, g.CreateTable(context.Background()))
	_, err = db.Exec(dataSchema)
	require.NoError(t, err)
	return store{
		args: []string{"-store", name, "-addr", dsn},
		value: func(t *testing.T) string {
			var v string
			err := db.QueryRow(rebind(d, "SELECT value FROM fence_data WHERE resource = $1"), resource).Scan(&v)
			if errors.Is(err, sql.ErrNoRows) {
				return ""
			}
			require.NoError(t, err)
			return v
		},
	}
}

// rebind turns $n placeholders into ? for SQLite.
func rebind(d fence.Dialect, q string) string {
	if d == fence.SQLite {
		return strings.NewReplacer("$1", "?", "$2", "?", "$3", "?").Replace(q)
	}
	return q
}

// httpStore is a server that owns its state: POST sets the value. Fenced,
// it is behind fence.Middleware with a fence.Local guard.
func httpStore(t *testing.T, fenced bool) store {
	var mu sync.Mutex
	var value string
	var h http.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		mu.Lock()
		defer mu.Unlock()
		value = string(b)
	})
	if fenced {
		h = fence.Middleware(&fence.Local{}, h)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return store{
		args: []string{"-store", "http", "-addr", srv.URL},
		value: func(*testing.T) string {
			mu.Lock()
			defer mu.Unlock()
			return value
		},
	}
}
