package redlock_test

// Cycle benchmarks: TryAcquire + Release on 5 real redis-servers, each
// redlease case run beside its floors on the same servers and clients.
//
//	go test -run '^$' -bench Cycle -benchtime 2s -count 6 ./redlock/ | tee /tmp/bench-redlock.txt
//	benchstat /tmp/bench-redlock.txt
//
// Note: go test runs the -count repetitions of a sub-benchmark back to back
// (a/1..6, then b/1..6), not interleaved. For interleaved rounds (fresh
// servers each round), loop over -count 1 instead:
//
//	for i in 1 2 3 4 5 6; do go test -run '^$' -bench Cycle -benchtime 2s -count 1 ./redlock/; done
//
// Scenarios (top-level benchmarks), each with the same five cases:
//
//	BenchmarkCycle          clients connect straight to the servers
//	BenchmarkCycleProxied   through a faultproxy per node, no fault (baseline of the next two)
//	BenchmarkCycleDelayed   through proxies, node 0 replies 20ms late
//	BenchmarkCycleDown      through proxies, node 0 killed (its proxy closed: connections refused)
//
// Cases:
//
//	redlease          default Config (fencing and quarantine on), bootstrapped
//	redlease-nofence  Config.DisableFencing
//	floor-parallel    SET key val NX PX 10000 to all nodes at once (one goroutine
//	                  each), return at the 3rd OK; then DEL likewise, return at the 3rd reply
//	floor-single      SET NX PX + DEL on node 1 only
//	redlease-single   default Config on node 1 only (N=1)
//	floor-scripts     floor-parallel, sending redlease's own scripts (the
//	                  command lines of the redlease case's client: acquire,
//	                  then release) instead of SET NX and DEL: the servers
//	                  do redlease's work, the client the floor's. Beside the
//	                  two it splits redlease's cost over the floor into the
//	                  servers' share and the client's.
//
// Extra metrics: acq-ns/op is the acquisition (SET) part of the cycle;
// srv-us/op is the server time per cycle summed over the live nodes, from
// INFO commandstats of the case's top-level commands (EVALSHA/EVAL for
// redlease, SET/DEL for the floors); cpu-us/op is this process's CPU time
// per cycle (client side, plus the proxies where there are some);
// acqfail/op and relerr/op count redlease cycles whose TryAcquire failed or
// whose Release reported an unreachable node.

import (
	"context"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redlease/redlease/internal/testing/faultproxy"
	"github.com/redlease/redlease/internal/testing/redistest"
	"github.com/redlease/redlease/redlock"
)

const (
	benchNodes   = 5
	benchQuorum  = benchNodes/2 + 1
	benchTTL     = 10 * time.Second
	benchDelay   = 20 * time.Millisecond
	benchWarmup  = 200 * time.Millisecond // per case, after the fault is in place
	floorValue   = "floor-value"
	floorSingle  = 1 // node of floor-single: never the faulty node 0
	faultyNode   = 0
	benchPoolMin = 64
	// A delayed node keeps the floor's stragglers (SET and DEL, 20ms each)
	// on about 2*20ms/cycle connections at once.
	benchPoolDelayed = 1024
)

type benchScenario int

const (
	scenarioDirect benchScenario = iota
	scenarioProxied
	scenarioDelayed
	scenarioDown
)

func BenchmarkCycle(b *testing.B)        { runCycleBench(b, scenarioDirect) }
func BenchmarkCycleProxied(b *testing.B) { runCycleBench(b, scenarioProxied) }
func BenchmarkCycleDelayed(b *testing.B) { runCycleBench(b, scenarioDelayed) }
func BenchmarkCycleDown(b *testing.B)    { runCycleBench(b, scenarioDown) }

// benchFixture is 5 servers, one go-redis client per node (through a proxy
// where the scenario has them) shared by every case, and the redlease
// clients under test.
type benchFixture struct {
	sc      benchScenario
	group   *redistest.Group
	proxies []*faultproxy.Proxy
	clients []*redis.Client // what every case uses
	admin   []*redis.Client // direct, for INFO commandstats
	alive   []bool
	fenced  *redlock.Client
	nofence *redlock.Client
	single  *redlock.Client // one node: floorSingle's
	strag   sync.WaitGroup  // floor requests still running after the floor returned

	acqFail, relErr int // redlease cycles whose TryAcquire failed, whose Release erred
}

// benchCase is one cycle on key; it returns how long the acquisition took.
type benchCase struct {
	name    string
	srvCmds []string // top-level commands whose server time the case costs
	cycle   func(ctx context.Context, key string) (time.Duration, error)
}

func runCycleBench(b *testing.B, sc benchScenario) {
	f := newBenchFixture(b, sc)
	cases := []benchCase{
		{"redlease", []string{"evalsha", "eval", "fcall"}, f.redleaseCycle(f.fenced)},
		{"redlease-nofence", []string{"evalsha", "eval", "fcall"}, f.redleaseCycle(f.nofence)},
		{"floor-parallel", []string{"set", "del"}, f.floorParallel},
		{"floor-single", []string{"set", "del"}, f.floorSingle},
		{"redlease-single", []string{"evalsha", "eval", "fcall"}, f.redleaseCycle(f.single)},
		{"floor-scripts", []string{"evalsha", "eval"}, f.floorScripts},
	}
	f.injectFault(b)
	ctx := context.Background()
	seq := 0
	for _, c := range cases {
		// A fresh key per cycle (the same small cost in every case): a
		// floor's straggling SET NX may land after its DEL and leave the key
		// until its TTL, so a key is never used twice.
		prefix := "bench:" + c.name + ":"
		key := func() string { seq++; return prefix + strconv.Itoa(seq) }
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			// Warm up on the faulty setup (pools grow, a dead node's
			// dial-error breaker opens): the steady state is measured.
			// Per run, not per fixture: the floor's many connections to a
			// delayed node must not be there when redlease runs first.
			for end := time.Now().Add(benchWarmup); time.Now().Before(end); {
				if _, err := c.cycle(ctx, key()); err != nil {
					b.Fatalf("warm-up %s: %v", c.name, err)
				}
			}
			f.strag.Wait()
			srv0 := f.serverUsec(b, c.srvCmds)
			cpu0 := processCPU()
			f.acqFail, f.relErr = 0, 0
			var acq time.Duration
			for b.Loop() {
				d, err := c.cycle(ctx, key())
				if err != nil {
					b.Fatalf("%s: %v", c.name, err)
				}
				acq += d
			}
			// b.Loop has stopped the timer: draining the floor's stragglers
			// and reading the servers' stats are not measured.
			f.strag.Wait()
			n := float64(b.N)
			b.ReportMetric(float64((processCPU()-cpu0).Microseconds())/n, "cpu-us/op")
			b.ReportMetric(float64(acq.Nanoseconds())/n, "acq-ns/op")
			b.ReportMetric(float64(f.serverUsec(b, c.srvCmds)-srv0)/n, "srv-us/op")
			if strings.HasPrefix(c.name, "redlease") {
				b.ReportMetric(float64(f.acqFail)/n, "acqfail/op")
				b.ReportMetric(float64(f.relErr)/n, "relerr/op")
			}
		})
	}
}

func newBenchFixture(b *testing.B, sc benchScenario) *benchFixture {
	b.Helper()
	f := &benchFixture{sc: sc}
	if sc == scenarioDown {
		// Runs after the clients are closed (cleanups run last-in first-out):
		// go-redis' dial-error breaker probes a dead node from a goroutine
		// that sleeps 1s between probes and only then sees its pool closed;
		// TestMain's goleak check must not catch it.
		b.Cleanup(func() { time.Sleep(1100 * time.Millisecond) })
	}
	pool := benchPoolMin
	if sc == scenarioDelayed {
		pool = benchPoolDelayed
	}
	proxied := 0
	if sc != scenarioDirect {
		proxied = benchNodes
	}
	rig := redistest.StartRig(b, benchNodes, redistest.RigOptions{
		Proxied: proxied,
		Node:    func(_ int, addr string) *redis.Options { return &redis.Options{Addr: addr, PoolSize: pool} },
		Direct:  func(addr string) *redis.Options { return &redis.Options{Addr: addr} },
	})
	f.group, f.admin, f.proxies = rig.Group, rig.Direct, rig.Proxies[:proxied]
	for _, n := range rig.Nodes {
		f.clients = append(f.clients, n.(*redis.Client))
		f.alive = append(f.alive, true)
	}
	nodes := rig.Nodes
	f.fenced = newBenchRedlock(b, redlock.Config{}, nodes)
	f.nofence = newBenchRedlock(b, redlock.Config{DisableFencing: true}, nodes)
	// The single node's client cuts requests at their deadline itself
	// (ContextTimeoutEnabled), as the docs advise for N=1: redlock then
	// runs them without a goroutine each.
	one := redis.NewClient(&redis.Options{Addr: f.clients[floorSingle].Options().Addr, PoolSize: pool, ContextTimeoutEnabled: true})
	b.Cleanup(func() { _ = one.Close() })
	f.single = newBenchRedlock(b, redlock.Config{}, []redis.UniversalClient{one})
	return f
}

// newBenchRedlock makes a bootstrapped client, closed (waiting for its
// stragglers) before the go-redis clients are.
func newBenchRedlock(b *testing.B, cfg redlock.Config, nodes []redis.UniversalClient) *redlock.Client {
	b.Helper()
	ctx := context.Background()
	c, err := redlock.New(ctx, cfg, nodes...)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = c.Close() })
	if err := c.Bootstrap(ctx); err != nil {
		b.Fatal(err)
	}
	return c
}

func (f *benchFixture) injectFault(b *testing.B) {
	switch f.sc {
	case scenarioDelayed:
		f.proxies[faultyNode].SetLatency(benchDelay)
	case scenarioDown:
		if err := f.group.Server(faultyNode).Kill(); err != nil {
			b.Fatal(err)
		}
		// A killed server's port refuses connections; a proxy left in
		// front of it would accept them and hang up instead.
		_ = f.proxies[faultyNode].Close()
		f.alive[faultyNode] = false
	}
}

// redleaseCycle is TryAcquire + Release. A failed acquisition, or a Release
// that reports a node it could not reach (a faulty node; on a loaded host, a
// node that missed NodeTimeout), is counted (acqfail/op, relerr/op), not
// fatal: it is part of the behaviour measured.
func (f *benchFixture) redleaseCycle(c *redlock.Client) func(context.Context, string) (time.Duration, error) {
	return func(ctx context.Context, key string) (time.Duration, error) {
		t0 := time.Now()
		l, err := c.TryAcquire(ctx, key, benchTTL)
		acq := time.Since(t0)
		if err != nil {
			f.acqFail++
			return acq, nil
		}
		if err := l.Release(ctx); err != nil {
			f.relErr++
		}
		return acq, nil
	}
}

func (f *benchFixture) floorParallel(ctx context.Context, key string) (time.Duration, error) {
	t0 := time.Now()
	if !f.fanoutQuorum(func(c *redis.Client) bool { return floorSetNX(ctx, c, key) }) {
		return 0, errFloor("SET NX: no quorum")
	}
	acq := time.Since(t0)
	if !f.fanoutQuorum(func(c *redis.Client) bool { return c.Del(ctx, key).Err() == nil }) {
		return acq, errFloor("DEL: no quorum")
	}
	return acq, nil
}

// floorScripts is floorParallel with redlease's acquire and release
// scripts, as f.fenced would send them, in place of SET NX and DEL; a
// node's acquire is a yes when the script's vote is 1. No token is read
// and nothing else is done: the client's work is the floor's.
func (f *benchFixture) floorScripts(ctx context.Context, key string) (time.Duration, error) {
	value := floorValue + ":" + key // a fresh value per attempt, as redlease's
	acquire := f.fenced.ScriptArgv("acquire", key, value, benchTTL)
	t0 := time.Now()
	if !f.fanoutQuorum(func(c *redis.Client) bool {
		r, err := c.Do(ctx, acquire...).Slice()
		return err == nil && len(r) > 0 && r[0] == int64(1)
	}) {
		return 0, errFloor("acquire script: no quorum")
	}
	acq := time.Since(t0)
	release := f.fenced.ScriptArgv("release", key, value, benchTTL)
	if !f.fanoutQuorum(func(c *redis.Client) bool { return c.Do(ctx, release...).Err() == nil }) {
		return acq, errFloor("release script: no quorum")
	}
	return acq, nil
}

func (f *benchFixture) floorSingle(ctx context.Context, key string) (time.Duration, error) {
	c := f.clients[floorSingle]
	t0 := time.Now()
	if !floorSetNX(ctx, c, key) {
		return 0, errFloor("SET NX failed")
	}
	acq := time.Since(t0)
	return acq, c.Del(ctx, key).Err()
}

// fanoutQuorum runs op on every node at once, one goroutine each, and
// returns true at the quorum-th op that returned true (false once every op
// returned without reaching it). The other ops run on; f.strag tracks them.
func (f *benchFixture) fanoutQuorum(op func(*redis.Client) bool) bool {
	ch := make(chan bool, len(f.clients)) // buffered: stragglers never block
	for _, c := range f.clients {
		f.strag.Go(func() { ch <- op(c) })
	}
	ok := 0
	for range f.clients {
		if <-ch {
			if ok++; ok == benchQuorum {
				return true
			}
		}
	}
	return false
}

// floorSetNX sends SET key val NX PX 10000 and reports whether it was set.
func floorSetNX(ctx context.Context, c *redis.Client, key string) bool {
	cmd := redis.NewBoolCmd(ctx, "set", key, floorValue, "nx", "px", benchTTL.Milliseconds())
	_ = c.Process(ctx, cmd)
	ok, err := cmd.Result()
	return err == nil && ok
}

// processCPU is the CPU time (user + system) used by this process so far:
// the client side, and in the proxied scenarios the proxies too.
func processCPU() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

type errFloor string

func (e errFloor) Error() string { return "floor: " + string(e) }

// serverUsec sums, over the live nodes, the usec that INFO commandstats
// reports for cmds.
func (f *benchFixture) serverUsec(b *testing.B, cmds []string) int64 {
	b.Helper()
	var total int64
	for i, c := range f.admin {
		if !f.alive[i] {
			continue
		}
		info, err := c.Info(context.Background(), "commandstats").Result()
		if err != nil {
			b.Fatal(err)
		}
		for line := range strings.SplitSeq(info, "\n") {
			name, rest, ok := strings.Cut(strings.TrimSpace(line), ":")
			if !ok || !strings.HasPrefix(name, "cmdstat_") {
				continue
			}
			found := false
			for _, cmd := range cmds {
				found = found || name == "cmdstat_"+cmd
			}
			if !found {
				continue
			}
			for field := range strings.SplitSeq(rest, ",") {
				if v, ok := strings.CutPrefix(field, "usec="); ok {
					n, _ := strconv.ParseInt(v, 10, 64)
					total += n
				}
			}
		}
	}
	return total
}
