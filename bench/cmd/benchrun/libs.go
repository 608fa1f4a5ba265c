package main

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/bsm/redislock"
	"github.com/go-redsync/redsync/v4"
	redsyncredis "github.com/go-redsync/redsync/v4/redis"
	rsgoredis "github.com/go-redsync/redsync/v4/redis/goredis/v9"
	"github.com/redis/go-redis/v9"
	"github.com/redis/rueidis"
	"github.com/redis/rueidis/rueidislock"

	"github.com/redlease/redlease/internal/lockrule"
	"github.com/redlease/redlease/redlock"
)

const (
	numNodes = 5
	quorum   = numNodes/2 + 1
	// lockTTL is the TTL of the libraries that take one per call (redlease,
	// bsm/redislock, the floors). redsync (8s) and rueidislock (5s) keep
	// their defaults.
	lockTTL    = 10 * time.Second
	floorValue = "floor-value"
	// singleNode is the server of the single-node cases: never node 0,
	// the faulty node of the fault cases.
	singleNode = 1
	faultyNode = 0
	// Pool sizes: go-redis' default (10 per CPU) would make the pool, not
	// the library, the limit of the 64-goroutine case; a delayed node keeps
	// the floor's stragglers (2 x 20ms per cycle) on ~100s of connections.
	poolDirect  = 64
	poolProxied = 1024
)

// lib is one library (or floor) under test, bound to one set of nodes.
type lib struct {
	name  string // as printed
	short string // for keys, flags and the chart
	kind  string // "redlease", "peer", "floor"
	nodes string // what it runs on, as printed
	// cycle is one uncontended acquire + release with the library's
	// ordinary blocking call.
	cycle func(ctx context.Context, key string) error
	// contender, when set, makes one goroutine's acquire for the contention
	// case: it waits until it holds key (or ctx ends) and returns the
	// release.
	contender func(key string) func(ctx context.Context) (release func(), err error)
	// drain waits for the requests a cycle leaves running (stragglers of
	// a call that returned at quorum); settle is an extra wait for those
	// the harness cannot see (redlease's, bounded by NodeTimeout).
	drain  func()
	settle time.Duration
	// elect, in the failover cases, starts the candidates of the election
	// called name (through their own proxies when proxied: the crash case).
	elect func(name string, proxied bool) (*cluster, error)
}

// env is every client of the run.
type env struct {
	direct  []*redis.Client // straight to the servers
	proxied []*redis.Client // through the proxies
	admin   []*redis.Client // direct, for INFO commandstats
	closers []func()

	uncontended5 []*lib // 5 nodes, direct
	single       []*lib // one server, direct
	proxied5     []*lib // 5 nodes through proxies (baseline, delayed, down)
	parallel5    []*lib // 64 goroutines, 5 nodes
	parallel1    []*lib // 64 goroutines, one server
	contend      []*lib // 16 goroutines, one key
	failover     []*lib // numCandidates candidates of one election

	proxyCtl    *proxyCtl
	candProxies [][]int // per failover candidate, the indices of its proxies (one per server)
}

func (e *env) close() {
	for i := len(e.closers) - 1; i >= 0; i-- {
		e.closers[i]()
	}
}

// newEnv makes every client: direct to the servers, through the shared
// proxies (proxied), and the failover candidates' (cands: per candidate,
// its proxies, one per server, in p).
func newEnv(ctx context.Context, direct, proxied []string, p *proxyCtl, cands []candProxies) (*env, error) {
	e := &env{proxyCtl: p}
	ok := false
	defer func() {
		if !ok {
			e.close()
		}
	}()
	e.direct = e.clients(direct, poolDirect)
	e.admin = e.clients(direct, 2)
	e.proxied = e.clients(proxied, poolProxied)
	if err := e.libs(ctx, direct[singleNode]); err != nil {
		return nil, err
	}
	var caddrs [][]string
	for _, c := range cands {
		caddrs = append(caddrs, c.addrs)
		e.candProxies = append(e.candProxies, c.idx)
	}
	cc, err := e.candidates(ctx, direct, caddrs)
	if err != nil {
		return nil, err
	}
	e.failover = failoverLibs(cc)
	ok = true
	return e, nil
}

// clients makes a go-redis client of each address, closed by close.
func (e *env) clients(addrs []string, pool int) []*redis.Client {
	var out []*redis.Client
	for _, a := range addrs {
		c := redis.NewClient(&redis.Options{Addr: a, PoolSize: pool})
		e.closers = append(e.closers, func() { _ = c.Close() })
		out = append(out, c)
	}
	return out
}

// libs makes the libraries of the cycle cases and lists each case's;
// single is the single-node cases' server.
func (e *env) libs(ctx context.Context, single string) error {
	rlD, rlDNF, err := e.redleasePair(ctx, e.direct)
	if err != nil {
		return err
	}
	rlP, rlPNF, err := e.redleasePair(ctx, e.proxied)
	if err != nil {
		return err
	}
	// N=1 with the go-redis option the redlock docs advise for one node
	// (ContextTimeoutEnabled: redlock then asks it without a goroutine).
	one := redis.NewClient(&redis.Options{Addr: e.direct[singleNode].Options().Addr, PoolSize: poolDirect, ContextTimeoutEnabled: true})
	e.closers = append(e.closers, func() { _ = one.Close() })
	rl1, err := e.redlease(ctx, "redlease (N=1)", "redlease-n1", redlock.Config{}, []*redis.Client{one})
	if err != nil {
		return err
	}
	// N=1 with a go-redis client as most users make it (default options
	// but the pool: no ContextTimeoutEnabled), which redlock asks through
	// a worker goroutine so that NodeTimeout bounds the request (#34).
	plain := e.clients([]string{e.direct[singleNode].Options().Addr}, poolDirect)
	rl1d, err := e.redlease(ctx, "redlease (N=1, default options)", "redlease-n1-default", redlock.Config{}, plain)
	if err != nil {
		return err
	}
	// The scripts by EVALSHA, as before the Function library (#34): the
	// same client with Config.DisableFunctions, side by side in one run.
	rlE, err := e.redlease(ctx, "redlease (EVALSHA)", "redlease-evalsha", redlock.Config{DisableFunctions: true}, e.direct)
	if err != nil {
		return err
	}
	rsD, rsP := redsyncLib(e.direct), redsyncLib(e.proxied)
	fpD, fpP := floorParallel(e.direct), floorParallel(e.proxied)
	fs := floorSingle(e.direct[singleNode])
	bsm := bsmLib(e.direct[singleNode])
	rq1, err := e.rueidis(single, 1)
	if err != nil {
		return err
	}
	rq3, err := e.rueidis(single, 3)
	if err != nil {
		return err
	}
	e.uncontended5 = []*lib{rlD, rlE, rlDNF, rsD, fpD, rq3}
	e.single = []*lib{fs, rl1, rl1d, bsm, rq1}
	e.proxied5 = []*lib{rlP, rlPNF, rsP, fpP}
	e.parallel5 = []*lib{rlD, rlE, rlDNF, rsD, fpD}
	e.parallel1 = []*lib{fs, rl1, bsm, rq1}
	e.contend = []*lib{rlD, rsD, bsm, rq1}
	return nil
}

// redleasePair is redlease over clients, with fencing and without.
func (e *env) redleasePair(ctx context.Context, clients []*redis.Client) (fenced, unfenced *lib, err error) {
	fenced, err = e.redlease(ctx, "redlease", "redlease", redlock.Config{}, clients)
	if err != nil {
		return nil, nil, err
	}
	unfenced, err = e.redlease(ctx, "redlease (fencing off)", "redlease-nofence", redlock.Config{DisableFencing: true}, clients)
	return fenced, unfenced, err
}

// redlease: a bootstrapped Client; Acquire + Release.
func (e *env) redlease(ctx context.Context, name, short string, cfg redlock.Config, clients []*redis.Client) (*lib, error) {
	nodes := make([]redis.UniversalClient, len(clients))
	for i, c := range clients {
		nodes[i] = c
	}
	c, err := redlock.New(ctx, cfg, nodes...)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	e.closers = append(e.closers, func() { _ = c.Close() })
	if err := c.Bootstrap(ctx); err != nil {
		return nil, fmt.Errorf("%s: bootstrap: %w", name, err)
	}
	n := fmt.Sprintf("%d servers", len(clients))
	if len(clients) == 1 {
		n = "1 server"
	}
	return &lib{
		name: name, short: short, kind: "redlease", nodes: n,
		cycle: func(ctx context.Context, key string) error {
			l, err := c.Acquire(ctx, key, lockTTL)
			if err != nil {
				return err
			}
			return l.Release(ctx)
		},
		contender: func(key string) func(context.Context) (func(), error) {
			return func(ctx context.Context) (func(), error) {
				l, err := c.Acquire(ctx, key, lockTTL)
				if err != nil {
					return nil, err
				}
				return func() { _ = l.Release(context.Background()) }, nil
			}
		},
		drain:  func() {},
		settle: lockrule.DefaultNodeTimeout + 10*time.Millisecond,
	}, nil
}

// redsync: default options, one goredis/v9 pool per node; a Mutex per
// lock (per key; per goroutine in the contention case, as a Mutex holds
// its value), LockContext + UnlockContext.
func redsyncLib(clients []*redis.Client) *lib {
	pools := make([]redsyncredis.Pool, len(clients))
	for i, c := range clients {
		pools[i] = rsgoredis.NewPool(c)
	}
	rs := redsync.New(pools...)
	return &lib{
		name: "redsync", short: "redsync", kind: "peer", nodes: fmt.Sprintf("%d servers", len(clients)),
		cycle: func(ctx context.Context, key string) error {
			m := rs.NewMutex(key)
			if err := m.LockContext(ctx); err != nil {
				return err
			}
			if ok, err := m.UnlockContext(ctx); !ok {
				return fmt.Errorf("unlock: %v", err)
			}
			return nil
		},
		contender: func(key string) func(context.Context) (func(), error) {
			m := rs.NewMutex(key)
			return func(ctx context.Context) (func(), error) {
				for {
					// LockContext gives up after its 32 tries: call again.
					err := m.LockContext(ctx)
					if err == nil {
						return func() { _, _ = m.UnlockContext(context.Background()) }, nil
					}
					if ctx.Err() != nil {
						return nil, err
					}
				}
			}
		},
		drain: func() {},
	}
}

// bsm/redislock: single node; Obtain (no retry, its default) + Release.
// Contention: LinearBackoff(100ms), as its README shows, until ctx ends.
func bsmLib(c *redis.Client) *lib {
	lc := redislock.New(c)
	wait := &redislock.Options{RetryStrategy: redislock.LinearBackoff(100 * time.Millisecond)}
	return &lib{
		name: "bsm/redislock", short: "bsm-redislock", kind: "peer", nodes: "1 server",
		cycle: func(ctx context.Context, key string) error {
			l, err := lc.Obtain(ctx, key, lockTTL, nil)
			if err != nil {
				return err
			}
			return l.Release(ctx)
		},
		contender: func(key string) func(context.Context) (func(), error) {
			return func(ctx context.Context) (func(), error) {
				for {
					l, err := lc.Obtain(ctx, key, lockTTL, wait)
					if err == nil {
						return func() { _ = l.Release(context.Background()) }, nil
					}
					if ctx.Err() != nil {
						return nil, err
					}
				}
			}
		},
		drain: func() {},
	}
}

// rueidislock: one rueidis client (it cannot spread its keys over
// independent servers: its KeyMajority*2-1 keys go through one client, to
// one server or one cluster), options as its README shows (NoLoopTracking:
// the servers are 7.0.15 >= 7.0.5). WithContext + cancel.
func (e *env) rueidis(addr string, majority int32) (*lib, error) {
	l, err := rueidislock.NewLocker(rueidislock.LockerOption{
		ClientOption:   rueidis.ClientOption{InitAddress: []string{addr}},
		KeyMajority:    majority,
		NoLoopTracking: true,
	})
	if err != nil {
		return nil, fmt.Errorf("rueidislock: %w", err)
	}
	e.closers = append(e.closers, l.Close)
	name, short, nodes := "rueidislock (KeyMajority=1)", "rueidislock-km1", "1 server"
	if majority != 1 {
		name = fmt.Sprintf("rueidislock (KeyMajority=%d)", majority)
		short = fmt.Sprintf("rueidislock-km%d", majority)
		nodes = fmt.Sprintf("%d keys on ONE server", majority*2-1)
	}
	return &lib{
		name: name, short: short, kind: "peer", nodes: nodes,
		cycle: func(ctx context.Context, key string) error {
			_, cancel, err := l.WithContext(ctx, key)
			if err != nil {
				return err
			}
			cancel() // releases, and waits for the DELs
			return nil
		},
		contender: func(key string) func(context.Context) (func(), error) {
			return func(ctx context.Context) (func(), error) {
				_, cancel, err := l.WithContext(ctx, key)
				if err != nil {
					return nil, err
				}
				return cancel, nil
			}
		},
		drain: func() {},
	}, nil
}

// floorParallel: SET key val NX PX to every node at once (one goroutine
// each), return at the 3rd OK; then DEL likewise, return at the 3rd reply.
// Stragglers run on, tracked by drain.
func floorParallel(clients []*redis.Client) *lib {
	var strag sync.WaitGroup
	fan := func(op func(*redis.Client) bool) bool {
		ch := make(chan bool, len(clients)) // buffered: stragglers never block
		for _, c := range clients {
			strag.Go(func() { ch <- op(c) })
		}
		ok := 0
		for range clients {
			if <-ch {
				if ok++; ok == quorum {
					return true
				}
			}
		}
		return false
	}
	return &lib{
		name: "floor: parallel SET NX / DEL", short: "floor-parallel", kind: "floor",
		nodes: fmt.Sprintf("%d servers", len(clients)),
		cycle: func(ctx context.Context, key string) error {
			if !fan(func(c *redis.Client) bool { return setNX(ctx, c, key) }) {
				return errors.New("floor: SET NX: no quorum")
			}
			if !fan(func(c *redis.Client) bool { return c.Del(ctx, key).Err() == nil }) {
				return errors.New("floor: DEL: no quorum")
			}
			return nil
		},
		drain: strag.Wait,
	}
}

// floorSingle: SET NX PX + DEL on one server.
func floorSingle(c *redis.Client) *lib {
	return &lib{
		name: "floor: bare SET NX + DEL", short: "floor-single", kind: "floor", nodes: "1 server",
		cycle: func(ctx context.Context, key string) error {
			if !setNX(ctx, c, key) {
				return errors.New("floor: SET NX failed")
			}
			return c.Del(ctx, key).Err()
		},
		drain: func() {},
	}
}

func setNX(ctx context.Context, c *redis.Client, key string) bool {
	cmd := redis.NewBoolCmd(ctx, "set", key, floorValue, "nx", "px", lockTTL.Milliseconds())
	_ = c.Process(ctx, cmd)
	ok, err := cmd.Result()
	return err == nil && ok
}
