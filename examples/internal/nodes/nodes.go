// Package nodes gives the examples their Redis nodes: the addresses in
// REDLEASE_NODES (host:port or redis:// URLs, comma-separated), or else n
// embedded miniredis servers started in process, whose keys expire on the
// wall clock as Redis keys do.
package nodes

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/redlease/redlease/redlock"
)

// Nodes are the examples' Redis nodes.
type Nodes struct {
	Clients  []redis.UniversalClient
	Embedded bool // true when the nodes are in-process miniredis servers
	minis    []*miniredis.Miniredis
	hint     sync.Once // hintQuarantine, once for all clients
}

// Open returns REDLEASE_NODES when set, or else n embedded servers.
func Open(n int) (*Nodes, error) {
	out := &Nodes{}
	env := strings.TrimSpace(os.Getenv("REDLEASE_NODES"))
	if env == "" {
		out.Embedded = true
		for range n {
			m := miniredis.NewMiniRedis()
			// Keys expire on the wall clock, as on Redis (miniredis' own
			// default is to wait for FastForward): a crashed leader's key
			// lapses after its TTL.
			m.ClockTTL(true)
			if err := m.Start(); err != nil {
				out.Close()
				return nil, fmt.Errorf("starting an embedded node: %w", err)
			}
			out.minis = append(out.minis, m)
			out.Clients = append(out.Clients, redis.NewClient(&redis.Options{Addr: m.Addr()}))
		}
		return out, nil
	}
	for i, a := range strings.Split(env, ",") {
		a = strings.TrimSpace(a)
		if a == "" {
			continue
		}
		opt := &redis.Options{Addr: a}
		if strings.Contains(a, "://") {
			var err error
			if opt, err = redis.ParseURL(a); err != nil {
				out.Close()
				// The error of ParseURL may quote the URL, password and all.
				return nil, fmt.Errorf("REDLEASE_NODES: node %d is not a valid redis:// URL", i+1)
			}
		}
		out.Clients = append(out.Clients, redis.NewClient(opt))
	}
	if len(out.Clients) == 0 {
		return nil, fmt.Errorf("REDLEASE_NODES=%q names no node", env)
	}
	return out, nil
}

// Where says where the nodes are, for the examples' first line.
func (n *Nodes) Where() string {
	if n.Embedded {
		return "embedded miniredis"
	}
	return "REDLEASE_NODES"
}

// Fresh reports whether the nodes are brand new, so that a client may
// Bootstrap them (skip their quarantine): embedded nodes always are; real
// ones only when REDLEASE_BOOTSTRAP=1 says so. Never bootstrap nodes that
// may have served locks before (see redlock.Client.Bootstrap).
func (n *Nodes) Fresh() bool {
	return n.Embedded || os.Getenv("REDLEASE_BOOTSTRAP") == "1"
}

// NodeTimeout is the examples' redlock.Config.NodeTimeout: miniredis runs
// Lua far slower than Redis (all the more under the race detector), so the
// default 50ms is too short for it.
const NodeTimeout = 250 * time.Millisecond

// Client returns a redlock.Client over the nodes, as each process of a
// real deployment would have its own, and bootstraps the nodes when they
// are [Nodes.Fresh].
func (n *Nodes) Client(ctx context.Context, cfg redlock.Config) (*redlock.Client, error) {
	if cfg.NodeTimeout == 0 {
		cfg.NodeTimeout = NodeTimeout
	}
	c, err := redlock.New(ctx, cfg, n.Clients...)
	if err != nil {
		return nil, err
	}
	if n.Fresh() {
		if err := c.Bootstrap(ctx); err != nil {
			_ = c.Close()
			return nil, err
		}
	} else {
		n.hint.Do(func() { hintQuarantine(ctx, c) })
	}
	return c, nil
}

// hintQuarantine says in one line, on stderr, why nobody can be elected
// yet when too few nodes vote because they are new to redlease (or
// restarted), and how brand-new nodes skip the wait.
func hintQuarantine(ctx context.Context, c *redlock.Client) {
	in, _ := c.Inspect(ctx, "{redlease}:hint") // any key: the quarantine is the node's
	if in == nil {
		return
	}
	ready, longest := 0, time.Duration(0)
	for _, s := range in.Nodes {
		if s.Err == nil && !s.Quarantined {
			ready++
		}
		longest = max(longest, s.Quarantine)
	}
	if ready < len(in.Nodes)/2+1 && longest > 0 { // fewer than a majority of the key's voters
		fmt.Fprintf(os.Stderr, "nobody can be elected for up to %s: the nodes are new to redlease (or restarted) and vote only MaxTTL after first contact; on brand-new nodes REDLEASE_BOOTSTRAP=1 (Client.Bootstrap) skips the wait\n",
			longest.Round(time.Second))
	}
}

// Close closes the clients and stops embedded servers.
func (n *Nodes) Close() {
	for _, c := range n.Clients {
		_ = c.Close()
	}
	for _, m := range n.minis {
		m.Close()
	}
}
