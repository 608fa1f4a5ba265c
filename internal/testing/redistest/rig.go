package redistest

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redlease/redlease/internal/testing/faultproxy"
)

// Rig is servers as the code under test sees them. Server i has a direct
// client, Direct[i], for setting up and checking state (never given to the
// code under test), and a node, Nodes[i]: the go-redis client the code
// under test uses, through the fault proxy Proxies[i] where the rig has
// one (nil where node i is direct).
type Rig struct {
	*Group
	Direct  []*redis.Client
	Proxies []*faultproxy.Proxy
	Nodes   []redis.UniversalClient

	node func(i int, addr string) *redis.Options
}

// RigOptions configures StartRig. The zero value is servers without
// persistence, no proxies, and FastOptions for every client.
type RigOptions struct {
	// Servers configures the servers.
	Servers Options
	// Proxied puts the first Proxied nodes behind a fault proxy each.
	Proxied int
	// Node makes the options of node i, which reaches addr (its proxy's
	// or its server's); default FastOptions.
	Node func(i int, addr string) *redis.Options
	// Direct makes the options of a direct client; default FastOptions.
	Direct func(addr string) *redis.Options
}

// StartRig starts n servers (see [Start]), their direct clients, proxies
// and nodes, all closed or stopped on cleanup.
func StartRig(t testing.TB, n int, o RigOptions) *Rig {
	t.Helper()
	if o.Node == nil {
		o.Node = func(_ int, addr string) *redis.Options { return FastOptions(addr) }
	}
	if o.Direct == nil {
		o.Direct = FastOptions
	}
	r := &Rig{Group: Start(t, n, o.Servers), node: o.Node}
	for i, s := range r.Servers() {
		r.Direct = append(r.Direct, NewClient(t, o.Direct(s.Addr())))
		addr := s.Addr()
		var p *faultproxy.Proxy
		if i < o.Proxied {
			p = NewProxy(t, addr)
			addr = p.Addr()
		}
		r.Proxies = append(r.Proxies, p)
		r.Nodes = append(r.Nodes, NewClient(t, o.Node(i, addr)))
	}
	return r
}

// FastOptions are go-redis options for clients of servers that get
// paused, killed or delayed: short socket timeouts, no retries and one dial
// per request (go-redis otherwise re-dials a dead server five times, 100ms
// apart, and the cause seen is a timeout), so that requests still in flight
// when a call returns end quickly. The code under test bounds its calls
// itself; these only bound the stragglers.
func FastOptions(addr string) *redis.Options {
	return &redis.Options{
		Addr:          addr,
		DialTimeout:   250 * time.Millisecond,
		ReadTimeout:   time.Second,
		WriteTimeout:  time.Second,
		PoolTimeout:   time.Second,
		MaxRetries:    -1,
		DialerRetries: 1,
	}
}

// NewClient makes a go-redis client, closed on cleanup.
func NewClient(t testing.TB, o *redis.Options) *redis.Client {
	c := redis.NewClient(o)
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// NewProxy starts a fault proxy in front of addr, closed on cleanup.
func NewProxy(t testing.TB, addr string) *faultproxy.Proxy {
	t.Helper()
	p, err := faultproxy.New(addr)
	if err != nil {
		t.Fatalf("redistest: proxy to %s: %v", addr, err)
	}
	t.Cleanup(func() { _ = p.Close() })
	return p
}

// NewNodes returns new nodes, one per server, straight to the servers
// (no proxy), made with the rig's node options: for a second client under
// test with connections of its own.
func (r *Rig) NewNodes(t testing.TB) []redis.UniversalClient {
	var out []redis.UniversalClient
	for i, s := range r.Servers() {
		out = append(out, NewClient(t, r.node(i, s.Addr())))
	}
	return out
}

// Heal lifts every fault: proxies forward again without latency, and
// paused servers continue.
func (r *Rig) Heal() {
	for _, p := range r.Proxies {
		if p != nil {
			p.Release()
			p.SetLatency(0)
			p.Heal()
			p.Enable()
		}
	}
	for _, s := range r.Servers() {
		if s.Running() {
			_ = s.Resume() // SIGCONT; harmless on a server that is not paused
		}
	}
}

// Values reads key on the given servers (all by default) through their
// direct clients: "" where it is absent or the server does not answer
// within a second.
func (r *Rig) Values(key string, servers ...int) []string {
	if len(servers) == 0 {
		for i := range r.Direct {
			servers = append(servers, i)
		}
	}
	out := make([]string, len(servers))
	for j, i := range servers {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		out[j], _ = r.Direct[i].Get(ctx, key).Result()
		cancel()
	}
	return out
}
