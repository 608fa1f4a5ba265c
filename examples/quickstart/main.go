// Command quickstart (go run ./examples/quickstart) shows a leader election
// by three candidates and an observer on 5 embedded miniredis servers (or
// REDLEASE_NODES=host:port,...; REDLEASE_BOOTSTRAP=1 if brand new; on nodes
// new to redlease that nobody bootstrapped, it says first that nobody can be
// elected before their quarantine ends, and how long that is). The first
// leader crashes, another takes over once its key lapses, then resigns; each
// term's fencing token is higher, so a store refuses the crashed leader.
package main

import (
	"context"
	"fmt"
	"io"
	"log"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/alicebob/miniredis/v2"

	"github.com/redlease/redlease/election"
	"github.com/redlease/redlease/lease"
	"github.com/redlease/redlease/observer"
	"github.com/redlease/redlease/redlock"
)

const name, ttl = "quickstart/leader", 2 * time.Second // a crashed leader is replaced within the TTL

func main() {
	if err := run(context.Background(), os.Stdout); err != nil {
		log.Fatal(err)
	}
}

func run(ctx context.Context, w io.Writer) error {
	start, lg := time.Now(), log.New(w, "", 0) // a log.Logger writes one line at a time, from any goroutine
	say := func(f string, a ...any) {
		lg.Printf("[%5.2fs] %s", time.Since(start).Seconds(), fmt.Sprintf(f, a...))
	}
	addrs, fresh, closeNodes, err := nodes()
	defer closeNodes()
	if err != nil {
		return err
	}
	var wg sync.WaitGroup
	defer wg.Wait() // after the candidates and the observer have stopped (below)
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	d := &demo{say: say, elected: make(chan election.Term, 8), clients: map[string]*redlock.Client{}, electors: map[string]*election.Elector{}}
	defer d.closeClients()
	for _, id := range []string{"observer", "alice", "bob", "carol"} {
		if err := d.join(ctx, &wg, id, addrs, fresh); err != nil {
			return err
		}
	}
	if err := d.electors["alice"].Healthy(0); err != nil { // readiness, as /readyz says it: new nodes vote only MaxTTL (30s) after first contact
		say("not ready: %v; on brand-new nodes REDLEASE_BOOTSTRAP=1 (Client.Bootstrap, redlease bootstrap) skips the wait: never after a crash", err)
	}
	return d.story(ctx, start)
}

// nodes are REDLEASE_NODES, or 5 embedded miniredis servers (brand new),
// closed by closeNodes; fresh says they are brand new.
func nodes() (addrs []string, fresh bool, closeNodes func(), err error) {
	addrs, fresh = strings.Split(os.Getenv("REDLEASE_NODES"), ","), os.Getenv("REDLEASE_BOOTSTRAP") == "1"
	var ms []*miniredis.Miniredis
	closeNodes = func() {
		for _, m := range ms {
			m.Close()
		}
	}
	if addrs[0] != "" {
		return addrs, fresh, closeNodes, nil
	}
	addrs = nil // no real nodes: 5 embedded ones, brand new
	for range 5 {
		m := miniredis.NewMiniRedis()
		m.ClockTTL(true) // keys expire on the wall clock, as on Redis
		if err := m.Start(); err != nil {
			return nil, false, closeNodes, err
		}
		ms = append(ms, m)
		addrs = append(addrs, m.Addr())
	}
	return addrs, true, closeNodes, nil
}

// demo is the candidates, the observer and what they say.
type demo struct {
	say      func(f string, a ...any)
	elected  chan election.Term
	clients  map[string]*redlock.Client
	order    []*redlock.Client // in the order made
	electors map[string]*election.Elector
}

// closeClients closes the clients, the last made first.
func (d *demo) closeClients() {
	for i := len(d.order) - 1; i >= 0; i-- {
		_ = d.order[i].Close()
	}
}

// join starts id: the observer (a standby that never campaigns, printing
// what it sees) or a candidate, each with its own client.
func (d *demo) join(ctx context.Context, wg *sync.WaitGroup, id string, addrs []string, fresh bool) error {
	c, err := redlock.Dial(ctx, redlock.Config{NodeTimeout: 250 * time.Millisecond}, addrs, redlock.DialOptions{})
	if err == nil && fresh {
		err = c.Bootstrap(ctx) // brand-new nodes: no lock can exist yet (never after a crash)
	}
	if c != nil {
		d.order = append(d.order, c)
	}
	if err != nil {
		return err
	}
	if d.clients[id] = c; id == "observer" {
		o, err := observer.New(c, name, observer.Config{PollInterval: 100 * time.Millisecond})
		if err != nil {
			return err
		}
		wg.Go(func() {
			for ev := range o.Watch(ctx) {
				d.say("observer: %s", ev)
			}
		})
		return nil
	}
	e, err := election.New(c, name, election.Config{Lease: lease.Config{ID: id, TTL: ttl, RetryDelay: 50 * time.Millisecond},
		OnElected: func(ctx context.Context, t election.Term) { d.elected <- t; <-ctx.Done() }, // lead until the term ends
		OnDemoted: func(t election.Term, cause error) { d.say("%s: term %d over: %v", t.ID, t.Token, cause) }})
	if err != nil {
		return err
	}
	d.electors[id] = e
	wg.Go(func() { _ = e.Run(ctx) })
	return nil
}

// story: the first leader crashes, the next takes over once its key
// lapses and resigns, a third takes over; the crashed leader's late write
// is refused by its token.
func (d *demo) story(ctx context.Context, start time.Time) error {
	say := d.say
	var highest uint64                                            // the store: it refuses tokens below the highest it saw
	next := func(why string, since time.Time) (t election.Term) { // the zero Term when ctx ended
		select {
		case t = <-d.elected:
			say("%s: elected, fencing token %d%s%s", t.ID, t.Token, why, time.Since(since).Round(time.Millisecond))
			highest = max(highest, t.Token)
		case <-ctx.Done():
		}
		return t
	}
	first := next(", after ", start)
	if first.ID == "" {
		return ctx.Err()
	}
	say("%s crashes: it neither refreshes nor releases its term; the others wait for its key to lapse (TTL %s)", first.ID, ttl)
	_ = d.clients[first.ID].Close()
	second := next(": took over after the crash, in ", time.Now())
	if second.ID == "" {
		return ctx.Err()
	}
	say("%s, waking up late, writes with token %d: refused: %t, the store has seen %d", first.ID, first.Token, first.Token < highest, highest)
	resigned := time.Now()
	if err := d.electors[second.ID].Resign(ctx); err != nil {
		return err
	}
	third := next(": took over after the resignation, in ", resigned)
	say("fencing tokens %d < %d < %d: each term's above the last", first.Token, second.Token, third.Token)
	return ctx.Err()
}
