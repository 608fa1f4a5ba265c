package observer_test

import (
	"context"
	"fmt"
	"log"
	"time"

	"github.com/redlease/redlease/internal/testing/testnodes"
	"github.com/redlease/redlease/lease"
	"github.com/redlease/redlease/observer"
	"github.com/redlease/redlease/redlock"
)

// embedded starts n in-process Redis servers for the examples.
var embedded = testnodes.Embedded

// A standby that never campaigns follows the leader of "reports/leader":
// who leads now, then every change.
func Example() {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	nodes, closeNodes := embedded(3)
	defer closeNodes()
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
