package redlock

import (
	"context"
	"fmt"
	"reflect"
	"sync"
	"sync/atomic"

	"github.com/hashicorp/go-hclog"
	"github.com/redis/go-redis/v9"

	"github.com/redlease/redlease/internal/nodecheck"
	"github.com/redlease/redlease/internal/placement"
	"github.com/redlease/redlease/internal/quarantine"
)

// Client runs the Redlock algorithm over N independent Redis masters.
//
// A Client is safe for concurrent use. It starts no goroutine of its own
// beyond the requests of a call: requests to slow nodes may outlive the call
// that made them (a call returns at quorum), bounded by the go-redis
// client's socket timeouts; [Client.Close] waits for them, but not for
// those stuck on a node that does not answer. A closed Client cannot be
// reused.
type Client struct {
	cfg    Config
	nodes  []*node   // the voters of a key in bucket 0: every key's, but on a bucketed cluster
	sets   voterSets // the voters of each bucket (one set but on a bucketed cluster)
	all    []*node   // every set's nodes, set after set
	quorum int
	log    hclog.Logger

	wg        sync.WaitGroup // requests in flight
	mu        sync.RWMutex   // held shared by calls, exclusively by Close
	closed    bool
	closing   chan struct{}
	closeOnce sync.Once
	left      atomic.Bool // Close returned before every request ended (close.go)

	guard quarantine.Guard  // floors, readiness passes, identity (quarantine.go)
	check nodecheck.Checker // the nodes' configuration checks (conf.go)
	args  scriptArgs        // constant script arguments
	fan   *fanout           // one request to every node at once (fanout.go)

	cluster   *redis.ClusterClient // NewCluster only
	placement placement.Watcher    // where a NewCluster Client's copies live (internal/placement)

	owned []redis.UniversalClient // made by Dial; closed by Close
}

// New returns a Client over the given nodes, one vote each; the caller
// keeps ownership of the go-redis clients and closes them after Close.
//
// New checks the configuration, refuses a nil node and two nodes that are
// the same server (same address, or same run_id where the node answers;
// FailoverClients of Sentinel groups, which all have the address
// "FailoverClient", by run_id only),
// refuses nodes whose maxmemory-policy may evict keys (unless
// Config.AllowEviction), and touches every node so that the quarantine of
// nodes that have never been seen starts now (see [Client.Bootstrap]).
// A node that does not answer is logged, not refused: it can vote once it
// is up. A node that refuses the credentials (WRONGPASS, NOAUTH) or whose
// ACL refuses what redlease needs (NOPERM) is refused with an error
// matching [ErrAccessDenied]: that lasts until an operator acts. New
// returns ctx's error if ctx ends before the nodes were checked. N should
// be odd; an even N is allowed with a warning, N=1 is a single-instance
// lock.
func New(ctx context.Context, cfg Config, nodes ...redis.UniversalClient) (*Client, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("redlock: New: %w", err)
	}
	cfg = cfg.withDefaults()
	if len(nodes) == 0 {
		return nil, fmt.Errorf("%w: no nodes given", ErrInvalidArgument)
	}
	c := emptyClient(cfg, len(nodes)/2+1)
	seen := make(map[string]int, len(nodes))
	given := make(map[uintptr]int, len(nodes)) // one client object twice
	for i, nc := range nodes {
		if isNil(nc) {
			return nil, fmt.Errorf("%w: node %d is nil", ErrInvalidArgument, i)
		}
		if v := reflect.ValueOf(nc); v.Kind() == reflect.Pointer {
			if j, dup := given[v.Pointer()]; dup {
				return nil, fmt.Errorf("%w: nodes %d and %d are the same client: one server, one vote", ErrInvalidArgument, j, i)
			}
			given[v.Pointer()] = i
		}
		name, fixed := configuredName(nc, i)
		n := newNode(nc, name, fixed)
		n.idx = i
		if rc, ok := nc.(*redis.Client); ok {
			n.ownDeadline = rc.Options().ContextTimeoutEnabled
		}
		if cc, ok := nc.(*redis.ClusterClient); ok {
			n.tag, n.cluster = "redlease", cc // one vote: the slot of {redlease}
		}
		// An address names one server only where the client's options
		// say where to connect; FailoverClients of different groups all
		// say "FailoverClient". Those are told apart by run_id below.
		if n.nm.fixed {
			if j, dup := seen[n.name()]; dup {
				return nil, fmt.Errorf("%w: nodes %d and %d are the same server (%s): one server, one vote",
					ErrInvalidArgument, j, i, n.name())
			}
			seen[n.name()] = i
		}
		c.nodes = append(c.nodes, n)
	}
	c.sets, c.all = [][]*node{c.nodes}, c.nodes
	c.reportQuarantines()
	c.watchClocks()
	c.guard.Init(guardConfig(c))
	c.check = checker(c)
	if len(nodes)%2 == 0 {
		c.log.Warn("even number of nodes: one more node would tolerate one more failure at the same quorum",
			"nodes", len(nodes), "quorum", c.quorum)
	}
	if err := checkNodes(ctx, c, false); err != nil {
		_ = c.Close() // waits for the probes still running
		return nil, err
	}
	return c, nil
}

// emptyClient is a Client with cfg (defaults filled in) and quorum, and no
// nodes yet: its logger, constant script arguments and fan-out.
func emptyClient(cfg Config, quorum int) *Client {
	c := &Client{cfg: cfg, quorum: quorum, closing: make(chan struct{})}
	c.log = quietLogger{cfg.Logger, c}
	c.args = newScriptArgs(&c.cfg)
	c.fan = newFanout(c)
	return c
}

// Bootstrap declares the nodes brand new: every node that has no quarantine
// marker, or is still in its quarantine, gets a marker dated MaxTTL ago, so
// it votes at once instead of after MaxTTL. It is an operator's act for a
// fresh deployment, where no lock can have existed (the examples on
// embedded miniredis use it). Never run it after a crash or a restart: a
// node that lost its locks would vote again while those locks may still be
// held elsewhere. Nodes that already vote are left as they are. Bootstrap
// waits up to 5s (or 4 x NodeTimeout, if longer) for each node's answer,
// and returns an error naming every node it could not reach.
func (c *Client) Bootstrap(ctx context.Context) error {
	return checkNodes(ctx, c, true)
}

// Close makes further calls fail with ErrClosed. It waits for the
// requests in flight and the notice subscriptions' goroutines for at most
// twice NodeTimeout (at least 250ms), long enough for a node that answers;
// then a Client made by [Dial] closes its go-redis clients, which ends the
// requests stuck on a silent node at once. A Client made by New leaves
// such requests to the caller's clients: they end at their socket
// timeouts or when the caller closes them, their late answers handled as
// before, without logs or Hooks. Closing twice is safe (docs/design.md
// §1.3).
func (c *Client) Close() error {
	c.closeOnce.Do(func() { close(c.closing) }) // ends Acquire's waits
	c.placement.Stop()                          // ends a background placement check
	c.mu.Lock()                                 // waits for calls to return
	owned := c.owned
	c.closed, c.owned = true, nil
	c.mu.Unlock()
	done := drained(&c.wg)
	finished := waitFor(done, closeGrace(c.cfg.NodeTimeout)) // see close.go
	for _, rc := range owned {
		_ = rc.Close() // ends the requests stuck on a silent node at once
	}
	if !finished && len(owned) > 0 {
		finished = waitFor(done, closeGrace(c.cfg.NodeTimeout))
	}
	c.left.Store(!finished)
	return nil
}

// enter takes the shared lock of a call; the caller must RUnlock.
func (c *Client) enter() error {
	c.mu.RLock()
	if c.closed {
		c.mu.RUnlock()
		return ErrClosed
	}
	return nil
}

// isNil reports a nil interface or a typed nil pointer inside one.
func isNil(c redis.UniversalClient) bool {
	if c == nil {
		return true
	}
	v := reflect.ValueOf(c)
	return v.Kind() == reflect.Pointer && v.IsNil()
}

func flag(b bool) string {
	if b {
		return "1"
	}
	return "0"
}
