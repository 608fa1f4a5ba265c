// Command leader is one candidate of the fence tests: it campaigns with
// election.Elector on one Redis node and, on each line "write VALUE" read
// from stdin, writes VALUE to the resource through a guard of package
// fence (or, with -fenced=false, the NEGATIVE CONTROL, straight to the
// store), with the token its last term's context carries
// (fence.TokenFrom) - even after that term ended: it models a leader that
// decided to write, was paused past its TTL (the test sends SIGSTOP), and
// resumed. It reports on stdout, one line each:
//
//	elected TOKEN
//	ok TOKEN
//	stale TOKEN HIGHEST
//	error MESSAGE
//
// The stores (-store): redis (-addr host:port, key -resource), postgres
// and sqlite (-addr DSN; the test creates the table fence_data), http
// (-addr URL; the test's server decides whether it is fenced). Closing
// stdin stops it.
package main

import (
	"bufio"
	"context"
	"database/sql"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"os"
	"strings"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"
	_ "github.com/jackc/pgx/v5/stdlib"
	"github.com/redis/go-redis/v9"
	_ "modernc.org/sqlite"

	"github.com/redlease/redlease/election"
	"github.com/redlease/redlease/fence"
	"github.com/redlease/redlease/internal/testing/fencetest"
	"github.com/redlease/redlease/lease"
	"github.com/redlease/redlease/redlock"
)

type options struct {
	id, node, key, store, addr, resource string
	ttl                                  time.Duration
	fenced                               bool
}

// write writes value to the resource under token.
type write func(ctx context.Context, token uint64, value string) error

func main() {
	var o options
	flag.StringVar(&o.id, "id", "", "candidate ID")
	flag.StringVar(&o.node, "node", "", "the election's Redis node (host:port)")
	flag.StringVar(&o.key, "key", "fence:election", "election name")
	flag.StringVar(&o.store, "store", "", "redis, postgres, sqlite or http")
	flag.StringVar(&o.addr, "addr", "", "the store: host:port, DSN or URL")
	flag.StringVar(&o.resource, "resource", "fence:resource", "the resource written")
	flag.DurationVar(&o.ttl, "ttl", 2*time.Second, "election TTL")
	flag.BoolVar(&o.fenced, "fenced", true, "write through the guard (false: NEGATIVE CONTROL)")
	flag.Parse()
	if err := run(o); err != nil {
		fmt.Fprintln(os.Stderr, "leader:", err)
		os.Exit(1)
	}
}

func run(o options) error {
	w, closeStore, err := open(o)
	if err != nil {
		return err
	}
	defer closeStore()
	rc := redis.NewClient(&redis.Options{Addr: o.node, MaxRetries: -1})
	defer rc.Close()
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	log := hclog.New(&hclog.LoggerOptions{Name: o.id, Level: hclog.Info, Output: os.Stderr})
	client, err := redlock.New(ctx, redlock.Config{NodeTimeout: 200 * time.Millisecond, Logger: log.Named("redlock")}, rc)
	if err != nil {
		return err
	}
	defer client.Close()
	var term atomic.Pointer[context.Context] // the last term's context
	e, err := election.New(client, o.key, election.Config{
		Lease: lease.Config{ID: o.id, TTL: o.ttl, RetryDelay: 20 * time.Millisecond, Logger: log},
		OnElected: func(ctx context.Context, t election.Term) {
			term.Store(&ctx)
			tok, _ := fence.TokenFrom(ctx)
			fmt.Printf("elected %d\n", tok)
			<-ctx.Done()
		},
	})
	if err != nil {
		return err
	}
	ran := make(chan error, 1)
	go func() { ran <- e.Run(ctx) }()
	sc := bufio.NewScanner(os.Stdin)
	for sc.Scan() {
		value, ok := strings.CutPrefix(sc.Text(), "write ")
		tc := term.Load()
		if !ok || tc == nil {
			fmt.Printf("error %q: not a write, or no term yet\n", sc.Text())
			continue
		}
		report(w, *tc, value)
	}
	stop()
	if err := <-ran; !errors.Is(err, context.Canceled) {
		return err
	}
	return nil
}

// report writes value under the token of the term's context, which may
// have ended: the write is the one a paused leader had decided on.
func report(w write, termCtx context.Context, value string) {
	tok, _ := fence.TokenFrom(termCtx)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err := w(ctx, tok, value)
	var stale *fence.StaleTokenError
	switch {
	case err == nil:
		fmt.Printf("ok %d\n", tok)
	case errors.As(err, &stale):
		fmt.Printf("stale %d %d\n", stale.Token, stale.Highest)
	default:
		fmt.Printf("error %s\n", strings.ReplaceAll(err.Error(), "\n", " "))
	}
}

// open returns the write of o.store.
func open(o options) (write, func(), error) {
	switch o.store {
	case "redis":
		rc := redis.NewClient(&redis.Options{Addr: o.addr})
		g := fence.NewRedis(rc)
		return func(ctx context.Context, token uint64, value string) error {
			if !o.fenced {
				return rc.Set(ctx, o.resource, value, 0).Err()
			}
			return g.Set(ctx, o.resource, token, value, 0)
		}, func() { _ = rc.Close() }, nil
	case "postgres", "sqlite":
		return openSQL(o)
	case "http":
		c := &http.Client{Transport: &fence.Transport{Resource: o.resource}, Timeout: 10 * time.Second}
		return func(ctx context.Context, token uint64, value string) error {
			return fencetest.Post(ctx, c, o.addr, token, strings.NewReader(value))
		}, func() {}, nil
	}
	return nil, nil, fmt.Errorf("-store %q: want redis, postgres, sqlite or http", o.store)
}

// openSQL is the write of postgres and sqlite: an upsert of the row of
// o.resource in fence_data, in a fenced transaction.
func openSQL(o options) (write, func(), error) {
	driver, dialect, upsert := "pgx", fence.Postgres,
		"INSERT INTO fence_data (resource, value, token) VALUES ($1, $2, $3) "+
			"ON CONFLICT (resource) DO UPDATE SET value = excluded.value, token = excluded.token"
	if o.store == "sqlite" {
		driver, dialect, upsert = "sqlite", fence.SQLite, strings.NewReplacer("$1", "?", "$2", "?", "$3", "?").Replace(upsert)
	}
	db, err := sql.Open(driver, o.addr)
	if err != nil {
		return nil, nil, err
	}
	g, err := fence.NewSQL(db, dialect, "")
	if err != nil {
		return nil, nil, err
	}
	return func(ctx context.Context, token uint64, value string) error {
		if !o.fenced {
			_, err := db.ExecContext(ctx, upsert, o.resource, value, int64(token))
			return err
		}
		return g.Tx(ctx, o.resource, token, func(tx *sql.Tx) error {
			_, err := tx.ExecContext(ctx, upsert, o.resource, value, int64(token))
			return err
		})
	}, func() { _ = db.Close() }, nil
}
