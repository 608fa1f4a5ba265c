// Command fenced (go run ./examples/fenced) shows a leader writing through
// a fencing guard (package fence) on an embedded miniredis node, so that
// it runs with nothing installed: alice is elected and writes the report
// with her term's token, which her term's context carries; she decides to
// write again, but her term ends before that write goes out (here she
// resigns; a pause past the TTL, as in a GC pause or a stalled VM, ends it
// the same way, without her knowing); bob is elected and writes; alice's
// late write, with her old token, is refused by the guard, and bob's
// stays. The same story runs against PostgreSQL, SQLite and an HTTP
// server in integration/fence (fence.SQL, fence.Middleware), with a real
// process paused by SIGSTOP.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"os"
	"sync"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/redlease/redlease/election"
	"github.com/redlease/redlease/fence"
	"github.com/redlease/redlease/redlock"
)

const report = "report" // the resource: a Redis key

func main() {
	if err := run(context.Background(), os.Stdout); err != nil {
		log.Fatal(err)
	}
}

// term is a term as OnElected saw it: whose, and its context.
type term struct {
	id  string
	ctx context.Context
}

func run(ctx context.Context, w io.Writer) error {
	m := miniredis.NewMiniRedis()
	m.ClockTTL(true) // keys expire on the wall clock, as on Redis
	if err := m.Start(); err != nil {
		return err
	}
	defer m.Close()
	rc := redis.NewClient(&redis.Options{Addr: m.Addr()})
	defer rc.Close()
	g := fence.NewRedis(rc) // the guard of the resource
	write := func(t term, value string) {
		token, _ := fence.TokenFrom(t.ctx) // readable after the term ended, as a paused leader's is
		err := g.Set(context.WithoutCancel(t.ctx), report, token, value, 0)
		fmt.Fprintf(w, "%s writes %q with token %d: %v\n", t.id, value, token, errOrOK(err))
	}

	var clients []*redlock.Client
	defer func() {
		for _, c := range clients {
			_ = c.Close()
		}
	}()
	ctx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	defer wg.Wait() // after stop, below: the electors hand their terms over and return
	defer stop()
	elected := make(chan term, 2)
	campaign := func(id string) (*election.Elector, error) {
		c, err := redlock.New(ctx, redlock.Config{}, rc)
		if err != nil {
			return nil, err
		}
		clients = append(clients, c)
		if err := c.Bootstrap(ctx); err != nil { // a brand-new node: no lock can exist yet
			return nil, err
		}
		e, err := newElector(c, id, elected)
		if err == nil {
			wg.Go(func() { _ = e.Run(ctx) })
		}
		return e, err
	}
	alice, err := campaign("alice") // alice first, so that she is the first leader
	if err != nil {
		return err
	}
	a := <-elected
	write(a, "v1")
	if _, err := campaign("bob"); err != nil {
		return err
	}
	if err := alice.Resign(ctx); err != nil { // her term ends before her next write goes out
		return err
	}
	b := <-elected
	write(b, "v2")
	write(a, "v1, edited (late)")
	fmt.Fprintf(w, "the report holds %q\n", rc.Get(ctx, report).Val())
	return nil
}

// newElector is one candidate: OnElected hands the term's context to run.
func newElector(c *redlock.Client, id string, elected chan<- term) (*election.Elector, error) {
	cfg := election.Config{OnElected: func(ctx context.Context, _ election.Term) {
		elected <- term{id: id, ctx: ctx}
		<-ctx.Done()
	}}
	cfg.Lease.ID = id
	return election.New(c, "fenced/leader", cfg)
}

func errOrOK(err error) string {
	var stale *fence.StaleTokenError
	switch {
	case err == nil:
		return "ok"
	case errors.As(err, &stale):
		return fmt.Sprintf("refused: %v", err)
	}
	return err.Error()
}
