package fence_test

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"

	_ "modernc.org/sqlite"

	"github.com/redlease/redlease/fence"
)

// A leader's statements run in a transaction behind the check of the
// resource's token; a paused leader's older token is refused.
func ExampleSQL() {
	dir, err := os.MkdirTemp("", "fence-example-")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	db, err := sql.Open("sqlite", "file:"+filepath.Join(dir, "app.db")+"?_pragma=busy_timeout(10000)&_txlock=immediate")
	if err != nil {
		panic(err)
	}
	defer db.Close()
	ctx := context.Background()
	if _, err := db.Exec("CREATE TABLE config (name TEXT PRIMARY KEY, value TEXT)"); err != nil {
		panic(err)
	}
	g, err := fence.NewSQL(db, fence.SQLite, "")
	if err != nil {
		panic(err)
	}
	if err := g.CreateTable(ctx); err != nil {
		panic(err)
	}
	write := func(token uint64, value string) error {
		return g.Tx(ctx, "config", token, func(tx *sql.Tx) error {
			_, err := tx.ExecContext(ctx, "INSERT INTO config VALUES ('mode', ?) "+
				"ON CONFLICT (name) DO UPDATE SET value = excluded.value", value)
			return err
		})
	}
	fmt.Println(write(12, "written in term 12"))
	fmt.Println(write(11, "written by a paused leader of term 11"))
	var v string
	_ = db.QueryRow("SELECT value FROM config WHERE name = 'mode'").Scan(&v)
	fmt.Println(v)
	// Output:
	// <nil>
	// fence: stale token 11 for resource "config": it has accepted token 12
	// written in term 12
}
