// Command cluster runs an election on one Redis Cluster: redlock.NewCluster
// keeps the election's key as 3 copies in 3 hash slots chosen to fall on
// 3 different masters (its bucket's; other keys use other slots, so that
// lock traffic reaches every master), each copy one vote. Two candidates campaign; the
// leader resigns and the other takes over at once.
//
//	REDLEASE_CLUSTER=host:port,host:port,... go run ./examples/cluster
//
// REDLEASE_CLUSTER names seed nodes of the cluster (any of its nodes).
// Without it the example exits with code 2: an embedded server cannot be
// a cluster. Nodes seen for the first time are quarantined for MaxTTL (30s)
// unless REDLEASE_BOOTSTRAP=1 declares them brand new. Run the cluster with
// cluster-require-full-coverage no, so that a failed master costs one vote
// only (see redlock.NewCluster).
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redlease/redlease/election"
	"github.com/redlease/redlease/lease"
	"github.com/redlease/redlease/redlock"
)

const (
	name     = "cluster/leader"
	replicas = 3 // copies of the key, each one vote: a majority is 2
)

const usage = `usage: REDLEASE_CLUSTER=host:port[,host:port...] go run ./examples/cluster

REDLEASE_CLUSTER is not set: this example needs a Redis Cluster (an embedded
server cannot be one). Name any of its nodes; set REDLEASE_BOOTSTRAP=1 if
the cluster is brand new, or wait out the 30s quarantine of new nodes.
`

func main() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	code := run(ctx, os.Stdout, os.Stderr, os.Getenv("REDLEASE_CLUSTER"), os.Getenv("REDLEASE_BOOTSTRAP") == "1")
	cancel()
	os.Exit(code)
}

// run returns the exit code: 0 done, 1 an error, 2 no cluster given.
func run(ctx context.Context, stdout, stderr io.Writer, seeds string, bootstrap bool) int {
	var addrs []string
	for a := range strings.SplitSeq(seeds, ",") {
		if a = strings.TrimSpace(a); a != "" {
			addrs = append(addrs, a)
		}
	}
	if len(addrs) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	if err := elect(ctx, stdout, addrs, bootstrap); err != nil {
		fmt.Fprintln(stderr, "cluster:", err)
		return 1
	}
	return 0
}

func elect(ctx context.Context, w io.Writer, addrs []string, bootstrap bool) error {
	cc := redis.NewClusterClient(&redis.ClusterOptions{Addrs: addrs, MaxRetries: -1,
		DialTimeout: time.Second, ReadTimeout: time.Second, WriteTimeout: time.Second})
	defer cc.Close()

	// Two candidates, as two processes would be; each its own Client.
	var cands []*candidate
	defer func() {
		for _, c := range cands {
			c.stop()
		}
	}()
	terms := make(chan election.Term, 4)
	for _, id := range []string{"east", "west"} {
		c, err := join(ctx, w, cc, id, bootstrap, len(cands) == 0, terms)
		if err != nil {
			return err
		}
		cands = append(cands, c)
	}
	return handover(ctx, w, cands, terms)
}

// join makes candidate id's Client on cc and starts its campaign; its
// terms go to terms. The first candidate prints the key's placement.
func join(ctx context.Context, w io.Writer, cc *redis.ClusterClient, id string, bootstrap, first bool, terms chan<- election.Term) (*candidate, error) {
	client, err := redlock.NewCluster(ctx, redlock.Config{NodeTimeout: 200 * time.Millisecond}, cc, replicas)
	if err != nil {
		return nil, err
	}
	if bootstrap {
		if err := client.Bootstrap(ctx); err != nil {
			_ = client.Close()
			return nil, err
		}
	}
	if first {
		printPlacement(ctx, w, client)
	}
	c, err := campaign(ctx, client, id, func(t election.Term) {
		fmt.Fprintf(w, "%s: elected, fencing token %d\n", t.ID, t.Token)
		select {
		case terms <- t:
		default: // a term after the show: nobody waits for it
		}
	})
	if err != nil {
		_ = client.Close()
		return nil, err
	}
	return c, nil
}

// handover: the first leader resigns and the other takes over with a
// higher token.
func handover(ctx context.Context, w io.Writer, cands []*candidate, terms <-chan election.Term) error {
	first, err := next(ctx, terms)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "%s resigns\n", first.ID)
	for _, c := range cands {
		if c.id == first.ID {
			if err := c.e.Resign(ctx); err != nil {
				return err
			}
		}
	}
	second, err := next(ctx, terms)
	if err != nil {
		return err
	}
	if second.Token <= first.Token {
		return fmt.Errorf("token %d after %d", second.Token, first.Token)
	}
	fmt.Fprintf(w, "%s took over with token %d > %d\n", second.ID, second.Token, first.Token)
	return nil
}

// printPlacement says which master serves each copy of the election's key
// (the copies of its bucket: other keys use other slots), as
// redlock.Client.Inspect reports it.
func printPlacement(ctx context.Context, w io.Writer, client *redlock.Client) {
	ins, err := client.Inspect(ctx, name)
	if ins == nil {
		fmt.Fprintf(w, "placement unknown: %v\n", err)
		return
	}
	seen, shared := map[string]bool{}, false
	for _, n := range ins.Nodes {
		fmt.Fprintf(w, "%s: on master %s\n", n.Node, n.Master)
		if n.Master != "" {
			shared = shared || seen[n.Master]
			seen[n.Master] = true
		}
	}
	if shared {
		fmt.Fprintln(w, "warning: two copies share a master; its failure costs two votes")
	}
}

// candidate is one campaigning process.
type candidate struct {
	id     string
	client *redlock.Client
	e      *election.Elector
	cancel context.CancelFunc
	done   chan struct{}
}

func campaign(ctx context.Context, client *redlock.Client, id string, onElected func(election.Term)) (*candidate, error) {
	e, err := election.New(client, name, election.Config{Lease: lease.Config{ID: id, TTL: 3 * time.Second, RetryDelay: 50 * time.Millisecond},
		OnElected: func(ctx context.Context, t election.Term) {
			onElected(t)
			<-ctx.Done() // lead until the term ends
		}})
	if err != nil {
		return nil, err
	}
	runCtx, cancel := context.WithCancel(ctx)
	c := &candidate{id: id, client: client, e: e, cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(c.done)
		_ = e.Run(runCtx)
	}()
	return c, nil
}

// stop ends the campaign (handing a term over) and closes the client.
func (c *candidate) stop() {
	c.cancel()
	<-c.done
	_ = c.client.Close()
}

func next(ctx context.Context, terms <-chan election.Term) (election.Term, error) {
	select {
	case t := <-terms:
		return t, nil
	case <-ctx.Done():
		return election.Term{}, fmt.Errorf("waiting for a leader: %w", ctx.Err())
	}
}
