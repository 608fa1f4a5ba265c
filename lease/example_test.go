package lease_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"slices"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/redlease/redlease/lease"
	"github.com/redlease/redlease/redlock"
)

// embeddedNodes starts three embedded Redis nodes (miniredis) and returns
// a client for each; stop closes the clients and the nodes, in the reverse
// order.
func embeddedNodes() (nodes []redis.UniversalClient, stop func()) {
	var closers []func()
	for range 3 {
		m := miniredis.NewMiniRedis()
		if err := m.Start(); err != nil {
			log.Fatal(err)
		}
		closers = append(closers, m.Close)
		c := redis.NewClient(&redis.Options{Addr: m.Addr()})
		closers = append(closers, func() { _ = c.Close() })
		nodes = append(nodes, c)
	}
	return nodes, func() {
		for _, f := range slices.Backward(closers) {
			f()
		}
	}
}

// A lease on three embedded Redis nodes: acquire, work while it is held,
// see who holds it, release.
func Example() {
	ctx := context.Background()
	nodes, stop := embeddedNodes()
	defer stop()
	client, err := redlock.New(ctx, redlock.Config{NodeTimeout: 500 * time.Millisecond}, nodes...)
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close()
	// Brand-new nodes: declare that no lock can exist on them yet, or they
	// would vote only after MaxTTL (the quarantine of forgetful nodes).
	if err := client.Bootstrap(ctx); err != nil {
		log.Fatal(err)
	}

	l, err := lease.Acquire(ctx, client, "reports/leader", lease.Config{
		ID:       "worker-1",
		Metadata: map[string]string{"addr": "10.0.0.1:8080"},
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("held:", l.Held(), "token:", l.Token())

	// The lease refreshes itself; work under its context, which is
	// cancelled (with the reason as its cause) if the lease is lost.
	work := func(ctx context.Context) error {
		select {
		case <-ctx.Done():
			return context.Cause(ctx)
		default:
			return nil // one step of the job, passing l.Token() to the store
		}
	}
	fmt.Println("work:", work(l.Context()))

	info, err := client.Inspect(ctx, "reports/leader") // a majority read
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("holder:", info.ID, info.Metadata["addr"], "token:", info.Token)

	_, err = lease.TryAcquire(ctx, client, "reports/leader", lease.Config{ID: "worker-2"})
	fmt.Println("worker-2:", errors.Is(err, redlock.ErrNotAcquired))

	if err := l.Release(ctx); err != nil {
		log.Fatal(err)
	}
	fmt.Println("after release:", l.Held(), context.Cause(l.Context()))
	// Output:
	// held: true token: 1
	// work: <nil>
	// holder: worker-1 10.0.0.1:8080 token: 1
	// worker-2: true
	// after release: false lease: released
}
