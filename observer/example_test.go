package observer_test

import (
	"context"
	"fmt"
	"log"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/redlease/redlease/lease"
	"github.com/redlease/redlease/observer"
	"github.com/redlease/redlease/redlock"
)

// A standby that never campaigns follows the leader of "reports/leader":
// who leads now, then every change.
func Example() {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var nodes []redis.UniversalClient
	for range 3 {
		m, _ := miniredis.Run()
		defer m.Close()
		nodes = append(nodes, redis.NewClient(&redis.Options{Addr: m.Addr()}))
		defer nodes[len(nodes)-1].Close()
	}
	client, err := redlock.New(ctx, redlock.Config{NodeTimeout: 500 * time.Millisecond}, nodes...)
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close()
	_ = client.Bootstrap(ctx) // brand-new nodes: no quarantine to wait for

	o, _ := observer.New(client, "reports/leader", observer.Config{})
	_, err = o.Leader(ctx)
	fmt.Println("leader:", err)

	w := o.Watch(ctx)
	fmt.Println("watch:", <-w)
	// A candidate (an election.Elector, here its lease) takes the lead.
	l, _ := lease.Acquire(ctx, client, "reports/leader", lease.Config{ID: "worker-1", Metadata: map[string]string{"addr": "10.0.0.1:8080"}})
	ev := <-w
	fmt.Println("watch:", ev, ev.Leader.Metadata["addr"])
	_ = l.Release(ctx)
	fmt.Println("watch:", <-w)

	cancel()
	for range w { // closed when the watch ends
	}
	fmt.Println("ended:", ctx.Err())
	// Output:
	// leader: observer: redlock: no holder: "reports/leader": no value held on 2 of 3 nodes
	// watch: no leader
	// watch: leader worker-1 (token 1) 10.0.0.1:8080
	// watch: no leader
	// ended: context canceled
}
