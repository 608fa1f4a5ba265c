package fence

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"regexp"
)

// Dialect is the SQL dialect of a [SQL] guard: it sets the placeholders
// of its statements. Both need INSERT ... ON CONFLICT DO UPDATE ... WHERE
// ... RETURNING (PostgreSQL 9.5+, SQLite 3.35+).
type Dialect int

const (
	// Postgres: placeholders $1, $2 (PostgreSQL, and servers that speak
	// its dialect).
	Postgres Dialect = iota + 1
	// SQLite: placeholders ?.
	SQLite
)

// String names the dialect.
func (d Dialect) String() string {
	switch d {
	case Postgres:
		return "postgres"
	case SQLite:
		return "sqlite"
	}
	return fmt.Sprintf("Dialect(%d)", int(d))
}

// DefaultTable is the table of a [SQL] guard when NewSQL is given "".
const DefaultTable = "redlease_fence"

var tableName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)?$`)

// SQL is the guard of resources kept in a SQL database (database/sql):
// [SQL.Tx] runs the caller's statements in a transaction that first
// raises the resource's row in the token table, only if the token is not
// below it (inserting the row if missing). With the statements of
// [SQL.Statements], for table redlease_fence on PostgreSQL:
//
//	CREATE TABLE IF NOT EXISTS redlease_fence (
//	    resource TEXT PRIMARY KEY,
//	    token    BIGINT NOT NULL CHECK (token > 0))
//
//	INSERT INTO redlease_fence (resource, token) VALUES ($1, $2)
//	ON CONFLICT (resource) DO UPDATE SET token = excluded.token
//	WHERE redlease_fence.token <= excluded.token
//	RETURNING token
//
// (SQLite: the same with ? for $1 and $2.) No row returned means a higher
// token is there: the transaction is rolled back and Tx returns a
// [*StaleTokenError]. The upsert locks the resource's row until the
// transaction ends, so concurrent fenced transactions of one resource
// run one after the other, under READ COMMITTED too: a waiting upsert
// re-checks its WHERE against the row the first one committed. On SQLite
// writers are serialized by the database; open it with a busy timeout
// (and, with modernc.org/sqlite, _txlock=immediate) so that they wait
// instead of failing with SQLITE_BUSY.
//
// Tokens are kept as BIGINT: a token above math.MaxInt64 is refused with
// [ErrInvalidToken]. docs/fencing.md has the whole story. A SQL is safe
// for concurrent use.
type SQL struct {
	db      *sql.DB
	dialect Dialect
	table   string
	upsert  string
	read    string
}

// NewSQL returns the guard of resources in db, keeping tokens in table
// (DefaultTable when ""; a name, optionally schema-qualified). It does not
// create the table: see [SQL.CreateTable].
func NewSQL(db *sql.DB, dialect Dialect, table string) (*SQL, error) {
	if db == nil {
		return nil, errors.New("fence: NewSQL: nil *sql.DB")
	}
	if dialect != Postgres && dialect != SQLite {
		return nil, fmt.Errorf("fence: NewSQL: unknown dialect %s (want fence.Postgres or fence.SQLite)", dialect)
	}
	if table == "" {
		table = DefaultTable
	}
	if !tableName.MatchString(table) {
		return nil, fmt.Errorf("fence: NewSQL: table name %q is not an identifier ([A-Za-z_][A-Za-z0-9_]*, optionally schema.table)", table)
	}
	g := &SQL{db: db, dialect: dialect, table: table}
	p1, p2 := "$1", "$2"
	if dialect == SQLite {
		p1, p2 = "?", "?"
	}
	g.upsert = fmt.Sprintf("INSERT INTO %[1]s (resource, token) VALUES (%[2]s, %[3]s)\n"+
		"ON CONFLICT (resource) DO UPDATE SET token = excluded.token\n"+
		"WHERE %[1]s.token <= excluded.token\nRETURNING token", table, p1, p2)
	g.read = fmt.Sprintf("SELECT token FROM %s WHERE resource = %s", table, p1)
	return g, nil
}

// Statements returns the guard's schema (CREATE TABLE IF NOT EXISTS), its
// upsert (arguments: resource, token), and the read of a resource's
// highest token (argument: resource), in its dialect.
func (g *SQL) Statements() (schema, upsert, read string) {
	schema = fmt.Sprintf("CREATE TABLE IF NOT EXISTS %s (\n"+
		"    resource TEXT PRIMARY KEY,\n    token    BIGINT NOT NULL CHECK (token > 0))", g.table)
	return schema, g.upsert, g.read
}

// CreateTable creates the token table if it does not exist.
func (g *SQL) CreateTable(ctx context.Context) error {
	schema, _, _ := g.Statements()
	if _, err := g.db.ExecContext(ctx, schema); err != nil {
		return fmt.Errorf("fence: create table %s: %w", g.table, err)
	}
	return nil
}

// Tx runs fn in a transaction behind the check of resource: it begins a
// transaction, raises the resource's token to token ([SQL.Check]), runs
// fn, and commits. If token is below the highest, fn does not run and Tx
// returns a [*StaleTokenError]. If fn returns an error, the transaction
// is rolled back (the token too) and Tx returns fn's error.
func (g *SQL) Tx(ctx context.Context, resource string, token uint64, fn func(*sql.Tx) error) error {
	if err := checkArgs(resource, token); err != nil {
		return err
	}
	tx, err := g.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("fence: begin (resource %q, token %d): %w", resource, token, err)
	}
	committed := false
	defer func() {
		if !committed {
			_ = tx.Rollback() // after an error (the one returned matters) or a panic in fn
		}
	}()
	if err := g.Check(ctx, tx, resource, token); err != nil {
		return err
	}
	if err := fn(tx); err != nil {
		return err
	}
	committed = true
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("fence: commit (resource %q, token %d): %w", resource, token, err)
	}
	return nil
}

// Check is the fence inside a transaction the caller runs: it raises
// resource's token row to token in tx, or returns a [*StaleTokenError]
// when the row holds a higher one (then roll tx back). Call it before any
// other statement of tx on the resource, so that the row lock orders the
// transaction's reads and writes after every lower token's.
func (g *SQL) Check(ctx context.Context, tx *sql.Tx, resource string, token uint64) error {
	if err := checkArgs(resource, token); err != nil {
		return err
	}
	var got int64
	err := tx.QueryRowContext(ctx, g.upsert, resource, int64(token)).Scan(&got)
	if errors.Is(err, sql.ErrNoRows) {
		var h int64
		if rerr := tx.QueryRowContext(ctx, g.read, resource).Scan(&h); rerr != nil {
			return fmt.Errorf("fence: resource %q refused token %d; reading its highest: %w", resource, token, rerr)
		}
		return &StaleTokenError{Resource: resource, Token: token, Highest: uint64(h)}
	}
	if err != nil {
		return fmt.Errorf("fence: raise resource %q to token %d in %s: %w", resource, token, g.table, err)
	}
	return nil
}

// Highest returns the highest token resource has accepted, 0 if none.
func (g *SQL) Highest(ctx context.Context, resource string) (uint64, error) {
	var h int64
	err := g.db.QueryRowContext(ctx, g.read, resource).Scan(&h)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("fence: read the highest token of %q: %w", resource, err)
	}
	return uint64(h), nil
}

// checkArgs is validate plus the BIGINT bound of the token column.
func checkArgs(resource string, token uint64) error {
	if err := validate(resource, token); err != nil {
		return err
	}
	if token > math.MaxInt64 {
		return fmt.Errorf("%w: token %d for resource %q is above the BIGINT column's maximum %d",
			ErrInvalidToken, token, resource, int64(math.MaxInt64))
	}
	return nil
}
