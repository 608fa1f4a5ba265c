package election_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"time"

	"github.com/redlease/redlease/election"
	"github.com/redlease/redlease/internal/testing/testnodes"
	"github.com/redlease/redlease/lease"
	"github.com/redlease/redlease/redlock"
)

// embedded starts n in-process Redis servers for the examples.
var embedded = testnodes.Embedded

// A complete leader-elected service on three embedded Redis nodes: it does
// its work while it leads, under the term's context, and steps down
// cleanly when it stops.
func Example() {
	ctx, stop := context.WithCancel(context.Background())
	nodes, closeNodes := embedded(3)
	defer closeNodes()
	client, err := redlock.New(ctx, redlock.Config{NodeTimeout: 500 * time.Millisecond}, nodes...)
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close()
	_ = client.Bootstrap(ctx) // brand-new nodes: no quarantine to wait for
	e, _ := election.New(client, "reports/leader", election.Config{Lease: lease.Config{ID: "worker-1"}, OnElected: func(ctx context.Context, t election.Term) {
		fmt.Println("leading with token", t.Token) // pass t.Token to the store it writes
		stop()                                     // here the service shuts down at once...
		<-ctx.Done()                               // ...and its work ends with the term
	},
		OnDemoted: func(_ election.Term, cause error) { fmt.Println("demoted:", errors.Is(cause, context.Canceled)) }})
	fmt.Println("run:", e.Run(ctx))
	// Output:
	// leading with token 1
	// demoted: true
	// run: election: stopped: context canceled
}
