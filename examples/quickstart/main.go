// Command quickstart shows redlock at work on 5 nodes: a lock acquired,
// contended by a second client, extended, released, and taken over; and the
// fencing token growing with every new holder.
//
//	go run ./examples/quickstart
//
// It runs on 5 embedded miniredis servers unless REDLEASE_NODES names real
// ones (host:port,...). Real nodes seen for the first time are quarantined
// for MaxTTL (30s) unless REDLEASE_BOOTSTRAP=1 declares them brand new.
package main

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"time"

	"github.com/redlease/redlease/examples/internal/nodes"
	"github.com/redlease/redlease/redlock"
)

func main() {
	if err := run(); err != nil {
		log.Fatal(err)
	}
}

func run() error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	ns, err := nodes.Open(5)
	if err != nil {
		return err
	}
	defer ns.Close()
	where := "REDLEASE_NODES"
	if ns.Embedded {
		where = "embedded miniredis"
	}
	fmt.Printf("%d nodes (%s); a lock needs a majority of them\n", len(ns.Clients), where)

	// Two clients, as two processes would have.
	alice, err := redlock.New(ctx, redlock.Config{}, ns.Clients...)
	if err != nil {
		return err
	}
	defer alice.Close()
	bob, err := redlock.New(ctx, redlock.Config{RetryDelay: 50 * time.Millisecond}, ns.Clients...)
	if err != nil {
		return err
	}
	defer bob.Close()
	if ns.Embedded || os.Getenv("REDLEASE_BOOTSTRAP") == "1" {
		// Fresh nodes: no lock can exist yet, so skip their quarantine.
		if err := alice.Bootstrap(ctx); err != nil {
			return err
		}
	}

	const key = "quickstart:report"
	ttl := 2 * time.Second

	lock, err := alice.Acquire(ctx, key, ttl)
	if err != nil {
		return err
	}
	fmt.Printf("alice acquired %q: token %d, valid for %s\n", key, lock.Token(), lock.Remaining().Round(time.Millisecond))

	_, err = bob.TryAcquire(ctx, key, ttl)
	var qe *redlock.QuorumError
	if !errors.As(err, &qe) {
		return fmt.Errorf("bob should have been refused, got %v", err)
	}
	fmt.Printf("bob tried too: refused, %d of %d nodes agreed (%d needed)\n", qe.Yes, len(qe.Nodes), qe.Need)

	if err := lock.Extend(ctx, ttl); err != nil {
		return err
	}
	fmt.Printf("alice extended: valid for %s again\n", lock.Remaining().Round(time.Millisecond))

	in, err := bob.Inspect(ctx, key)
	if err != nil {
		return err
	}
	fmt.Printf("bob inspects: held by alice's value (%t), token %d, about %s left\n",
		in.Value == lock.Value(), in.Token, in.Remaining.Round(100*time.Millisecond))

	// Bob waits; alice releases after a moment; bob gets it at once.
	got := make(chan *redlock.Lock, 1)
	errc := make(chan error, 1)
	go func() {
		l, err := bob.Acquire(ctx, key, ttl)
		if err != nil {
			errc <- err
			return
		}
		got <- l
	}()
	time.Sleep(300 * time.Millisecond) // let bob wait a little, for the show
	n, err := lock.Release(ctx)
	if err != nil {
		return err
	}
	fmt.Printf("alice released on %d nodes; held now: %t\n", n, lock.Held())

	select {
	case l := <-got:
		fmt.Printf("bob acquired %q: token %d (> %d: a resource that checks tokens refuses alice now)\n", key, l.Token(), lock.Token())
		if _, err := l.Release(ctx); err != nil {
			return err
		}
		fmt.Println("bob released; done")
	case err := <-errc:
		return err
	}
	return nil
}
