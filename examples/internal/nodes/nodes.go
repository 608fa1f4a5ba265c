// Package nodes gives the examples their Redis nodes: the addresses in
// REDLEASE_NODES (host:port or redis:// URLs, comma-separated), or else n
// embedded miniredis servers started in process.
package nodes

import (
	"fmt"
	"os"
	"strings"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
)

// Nodes are the examples' Redis nodes.
type Nodes struct {
	Clients  []redis.UniversalClient
	Embedded bool // true when the nodes are in-process miniredis servers
	minis    []*miniredis.Miniredis
}

// Open returns REDLEASE_NODES when set, or else n embedded servers.
func Open(n int) (*Nodes, error) {
	out := &Nodes{}
	env := strings.TrimSpace(os.Getenv("REDLEASE_NODES"))
	if env == "" {
		out.Embedded = true
		for range n {
			m, err := miniredis.Run()
			if err != nil {
				out.Close()
				return nil, fmt.Errorf("starting an embedded node: %w", err)
			}
			out.minis = append(out.minis, m)
			out.Clients = append(out.Clients, redis.NewClient(&redis.Options{Addr: m.Addr()}))
		}
		return out, nil
	}
	for _, a := range strings.Split(env, ",") {
		a = strings.TrimSpace(a)
		if a == "" {
			continue
		}
		opt := &redis.Options{Addr: a}
		if strings.Contains(a, "://") {
			var err error
			if opt, err = redis.ParseURL(a); err != nil {
				out.Close()
				return nil, fmt.Errorf("REDLEASE_NODES: bad node %q: %w", a, err)
			}
		}
		out.Clients = append(out.Clients, redis.NewClient(opt))
	}
	if len(out.Clients) == 0 {
		return nil, fmt.Errorf("REDLEASE_NODES=%q names no node", env)
	}
	return out, nil
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
