package lease

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlease/redlease/internal/testing/faultproxy"
	"github.com/redlease/redlease/internal/testing/redistest"
	"github.com/redlease/redlease/internal/testing/unsafetest"
	"github.com/redlease/redlease/internal/unsafeopt"
	"github.com/redlease/redlease/redlock"
)

// TestIntegrationLeasesUnderOverload: 500 leases on 5 real servers (node 1
// behind a fault proxy) through three faults in a row, each for 2 TTL: a
// paused server (SIGSTOP), a server whose replies are delayed by 200ms,
// and a starved process (busy goroutines, one per core). Throughout, a
// checker reads the servers: every lease that says it is held
// (Held, sampled before the read) is held with its value on a majority of
// servers until at least its Deadline (docs/design.md S1/S2: no lease believed held past
// what the servers grant). No lease is lost (one bad server of five, or a
// slow process, must not cost a lease), the refresh attempts per second
// stay within twice the steady rate, and once the faults are gone the
// traffic is back to steady within 2 TTL.
func TestIntegrationLeasesUnderOverload(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real redis-server processes")
	}
	ctx := context.Background()
	o := startOverload(t, unsafeopt.Off{}, 0)
	admin, leases, cfg := o.admin, o.leases, o.cfg
	checked := &o.checked

	// The checker: one lease per 10ms, round robin.
	c := o.startChecker(ctx)
	o.faults(t)
	o.recovery(t)

	close(c.stop)
	c.wg.Wait()
	if v := c.violation.Load(); v != nil {
		t.Errorf("S1/S2: %s", *v)
	}
	t.Logf("checker: %d reads", checked.Load())
	require.Greater(t, checked.Load(), int64(100))
	for i, l := range leases {
		require.NoError(t, context.Cause(l.Context()), "lease %d lost", i)
	}

	// Negative control: a lease that believes itself held a TTL longer than
	// the servers grant is caught.
	l := leases[0]
	l.mu.Lock()
	l.validUntil = l.validUntil.Add(cfg.TTL)
	l.mu.Unlock()
	assert.NotEmpty(t, checkHeld(ctx, admin, l), "the checker misses a deadline past the servers' expiry")
}

// heldChecker is the overload test's checker: checkHeld on one lease per
// 10ms, round robin, until stop is closed.
type heldChecker struct {
	stop      chan struct{}
	wg        sync.WaitGroup
	violation atomic.Pointer[string] // the first violation seen
}

// startChecker starts the checker on o's leases; it counts its reads in
// o.checked.
func (o *overload) startChecker(ctx context.Context) *heldChecker {
	admin, leases, checked := o.admin, o.leases, &o.checked
	n := len(leases)
	c := &heldChecker{stop: make(chan struct{})}
	c.wg.Go(func() {
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		for i := 0; ; i = (i + 1) % n {
			select {
			case <-c.stop:
				return
			case <-tick.C:
			}
			if msg := checkHeld(ctx, admin, leases[i]); msg != "" {
				c.violation.CompareAndSwap(nil, &msg)
			}
			checked.Add(1)
		}
	})
	return c
}

// faults runs the three faults in a row, each for 2 TTL, the refresh
// attempts within twice the steady rate in each.
func (o *overload) faults(t *testing.T) {
	g, proxy, cfg, steady := o.g, o.proxy, o.cfg, o.steady
	bounded := func(name string, fault, heal func()) {
		rate := o.phase(t, 2*cfg.TTL, name, fault, heal)
		assert.LessOrEqual(t, rate, 2*steady*1.1, "%s: refreshes above twice the steady rate", name)
	}
	bounded("paused server", func() { require.NoError(t, g.Server(0).Pause()) }, func() { require.NoError(t, g.Server(0).Resume()) })
	bounded("200ms replies", func() { proxy.SetLatency(200 * time.Millisecond) }, func() { proxy.SetLatency(0) })
	var busy atomic.Bool
	bounded("starved process", func() {
		busy.Store(true)
		for range 2 {
			go func() {
				for busy.Load() {
				}
			}()
		}
	}, func() { busy.Store(false) })
}

// recovery checks that within 2 TTL after the faults, the refresh attempts
// are back to the steady rate.
func (o *overload) recovery(t *testing.T) {
	cfg, steady := o.cfg, o.steady
	attempts := func() float64 { return o.attempts(t) }
	// Recovery: within 2 TTL, the steady rate again.
	time.Sleep(2 * cfg.TTL)
	a0, t0 := attempts(), time.Now()
	time.Sleep(cfg.TTL)
	rate := (attempts() - a0) / time.Since(t0).Seconds()
	t.Logf("recovered: %.0f refresh attempts/s (steady %.0f/s)", rate, steady)
	assert.InDelta(t, steady, rate, steady*0.25, "not back to steady within 2 TTL")
}

// overload is the rig of the overload test and its control: 500 leases
// (TTL 2s) on 5 real servers, server 1 behind a fault proxy, a client with
// the given guards off.
type overload struct {
	g       *redistest.Group
	proxy   *faultproxy.Proxy
	admin   []*redis.Client
	leases  []*Lease
	cfg     Config
	steady  float64      // refresh attempts per second with no fault
	checked atomic.Int64 // the checker's reads
}

// startOverload starts the rig; retry is the leases' RetryInterval (0: the
// default).
func startOverload(t *testing.T, off unsafeopt.Off, retry time.Duration) *overload {
	ctx := context.Background()
	o := &overload{g: redistest.Start(t, 5)}
	o.proxy = redistest.NewProxy(t, o.g.Server(1).Addr())
	var nodes []redis.UniversalClient
	for i, s := range o.g.Servers() {
		addr := s.Addr()
		if i == 1 {
			addr = o.proxy.Addr()
		}
		nodes = append(nodes, redistest.NewClient(t, &redis.Options{Addr: addr, DialTimeout: 250 * time.Millisecond,
			ReadTimeout: time.Second, WriteTimeout: time.Second, MaxRetries: -1, DialerRetries: 1}))
		o.admin = append(o.admin, s.Client(t))
	}
	ccfg := redlock.Config{NodeTimeout: 100 * time.Millisecond, Logger: hclog.NewNullLogger()}
	unsafetest.TurnOff(t, &ccfg, off)
	c := newClient(t, ccfg, nodes)
	t.Cleanup(func() {
		for _, s := range o.g.Servers() {
			if !s.Running() {
				_ = s.Resume()
			}
		}
	})
	const n = 500
	o.cfg = Config{TTL: 2 * time.Second, RetryInterval: retry, ID: "overload", Logger: hclog.NewNullLogger()}
	o.steady = float64(n) / o.cfg.withDefaults().RenewInterval.Seconds()
	o.leases = make([]*Lease, n)
	for i := range o.leases {
		o.leases[i] = mustAcquire(t, ctx, c, "ol:"+strconv.Itoa(i), o.cfg)
	}
	return o
}

// attempts counts refresh attempts on server 4, which is never faulty and
// holds every lease's key: there every lease that extend_many carries is
// ours and gets one PEXPIREAT, which nothing else sends. (The fencing
// counters get a PEXPIRE; the checker only reads.)
func (o *overload) attempts(t *testing.T) float64 {
	return float64(cmdCalls(t, o.admin[4], "pexpireat"))
}

// phase applies fault for d, heals it, and returns the refresh attempts
// per second meanwhile.
func (o *overload) phase(t *testing.T, d time.Duration, name string, fault, heal func()) float64 {
	fault()
	a0, t0 := o.attempts(t), time.Now()
	time.Sleep(d)
	rate := (o.attempts(t) - a0) / time.Since(t0).Seconds()
	heal()
	t.Logf("%s: %.0f refresh attempts/s (steady %.0f/s)", name, rate, o.steady)
	return rate
}

// The negative control of the rate bound: without the scheduler's token
// bucket, refreshes that fail (3 of the 5 servers paused for a second,
// less than the leases' validity) are retried at every RetryInterval
// (here 50ms, so a refresh waits NodeTimeout, 100ms: over 4 times the
// steady rate), and the bound the test asserts is exceeded. (The leases
// may be lost afterwards; only the rate is checked.)
func TestIntegrationLeasesUnderOverloadWithoutBudget(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real redis-server processes")
	}
	o := startOverload(t, unsafeopt.Off{NoRefreshBudget: true}, 50*time.Millisecond)
	paused := []int{0, 2, 3} // server 4 counts the attempts; 1 is behind the proxy
	rate := o.phase(t, time.Second, "no majority, no refresh budget", func() {
		for _, i := range paused {
			require.NoError(t, o.g.Server(i).Pause())
		}
	}, func() {
		for _, i := range paused {
			require.NoError(t, o.g.Server(i).Resume())
		}
	})
	assert.Greater(t, rate, 2*o.steady*1.1, "without the budget the refreshes stayed within twice the steady rate: the bound checks nothing")
}

// checkHeld returns why l breaks S1/S2 (docs/design.md §2), or "": if l says it is held before
// the servers are read, a majority must hold its value until at least its
// deadline as l saw it then. Servers that do not answer count
// as not holding it.
func checkHeld(ctx context.Context, admin []*redis.Client, l *Lease) string {
	t1 := time.Now()
	held, deadline := l.Held(), l.deadline()
	if !held {
		return ""
	}
	ok := 0
	for _, a := range admin {
		rctx, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
		v, err := a.Get(rctx, l.Holder().Key).Result()
		ttl, err2 := a.PTTL(rctx, l.Holder().Key).Result()
		cancel()
		// After the read: the server's expiry is at most t2 + PTTL + 1ms
		// (PTTL is truncated to the millisecond), so a server whose
		// expiry falls before the deadline even by that bound surely lets
		// the key go while the lease believes itself held. (A bound from
		// the time before the read would flag a slow read.)
		t2 := time.Now()
		if err == nil && err2 == nil && v == l.Holder().Value && !t2.Add(ttl+time.Millisecond).Before(deadline) {
			ok++
		}
	}
	if ok < len(admin)/2+1 {
		return fmt.Sprintf("lease %q held (deadline in %s) while only %d servers hold it that long", l.Holder().Key, deadline.Sub(t1), ok)
	}
	return ""
}

// cmdCalls is INFO commandstats calls of cmd on one server.
func cmdCalls(t *testing.T, c *redis.Client, cmd string) int64 {
	info, err := c.Info(context.Background(), "commandstats").Result()
	require.NoError(t, err)
	for line := range strings.SplitSeq(info, "\n") {
		k, v, ok := strings.Cut(strings.TrimSpace(line), ":")
		if !ok || k != "cmdstat_"+cmd {
			continue
		}
		for f := range strings.SplitSeq(v, ",") {
			if x, ok := strings.CutPrefix(f, "calls="); ok {
				calls, err := strconv.ParseInt(x, 10, 64)
				require.NoError(t, err)
				return calls
			}
		}
	}
	return 0
}
