package main

// The scale cases (-scale): one process holds many leases on 5 local
// redis-servers and keeps them for a window (docs/design.md §5.2, issue "Leases at
// scale"). For each case it reports the time to acquire the leases (64
// workers), this process's CPU (getrusage) and the 5 servers' CPU (INFO
// cpu, summed) over the window in % of one core, the servers' script calls
// and their time per call (INFO commandstats: evalsha + eval), the heap per
// lease (runtime.MemStats HeapAlloc after a GC, less the same before the
// leases), and the leases lost (Done closed) during the window.
//
//	cases: 10,000 leases (TTL 10s) for -scale-window (default 60s);
//	       20,000 leases with 2 busy goroutines for 60s, -scale-runs times (default 5);
//	       100,000 leases for 5 minutes, with BENCH_SCALE_LONG=1 only.

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redlease/redlease/internal/testing/redistest"
	"github.com/redlease/redlease/lease"
	"github.com/redlease/redlease/redlock"
)

type scaleCase struct {
	name   string
	leases int
	window time.Duration
	busy   int // busy-looping goroutines during the window
	runs   int
}

type scaleResult struct {
	acquire              time.Duration
	clientPct, serverPct float64
	calls                int64   // script calls, all servers, during the window
	usPerCall            float64 // server time per script call
	extends              int64   // lease refreshes seen during the window
	heapPerLease         float64 // bytes: growth from half the leases to all, per lease
	heapWhole            float64 // bytes: growth from none to all after the window, per lease
	lost                 int
	retries              int64 // acquisitions that failed and were tried again
	load                 string
}

func runScale(o options) error {
	window := o.scaleWindow
	cases := []scaleCase{
		{name: "10,000 leases, TTL 10s", leases: 10000, window: window, runs: 1},
		{name: "20,000 leases, 2 busy goroutines", leases: 20000, window: 60 * time.Second, busy: 2, runs: o.scaleRuns},
	}
	if os.Getenv("BENCH_SCALE_LONG") == "1" {
		cases = append(cases, scaleCase{name: "100,000 leases, 5 minutes", leases: 100000, window: 5 * time.Minute, runs: 1})
	}
	fmt.Printf("## Leases at scale (5 redis-servers %s, GOMAXPROCS %d, %d CPUs, load at start %s)\n\n",
		redisVersion(), runtime.GOMAXPROCS(0), nproc(), loadavg())
	fmt.Println("| case | run | acquire | client CPU | 5 servers CPU | script calls/s | server us/call | refreshes/s | heap/lease | whole heap/lease | lost | acquire retries | load 1/5/15 |")
	fmt.Println("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
	for _, c := range cases {
		for run := 1; run <= c.runs; run++ {
			r, err := scaleRun(c)
			if err != nil {
				return fmt.Errorf("%s, run %d: %w", c.name, run, err)
			}
			fmt.Printf("| %s | %d/%d | %.2fs | %.1f%% | %.1f%% | %.0f | %.1f | %.0f | %.0f B | %.0f B | %d | %d | %s |\n",
				c.name, run, c.runs, r.acquire.Seconds(), r.clientPct, r.serverPct,
				float64(r.calls)/c.window.Seconds(), r.usPerCall, float64(r.extends)/c.window.Seconds(),
				r.heapPerLease, r.heapWhole, r.lost, r.retries, r.load)
		}
	}
	fmt.Println("\nCPU in % of one core over the window; the machine is shared, so compare figures of one run, and read the load column.")
	fmt.Println("heap/lease: heap growth (after a GC) from half the leases to all, per lease; whole: from before the first acquisition to the end of the window, fixed costs included (pools, goroutines).")
	return nil
}

// scaleRun is one run of a case, on fresh servers.
func scaleRun(c scaleCase) (scaleResult, error) {
	var r scaleResult
	servers, stopServers, err := redistest.StartMain(numNodes)
	if err != nil {
		return r, err
	}
	defer stopServers()
	client, admin, closeClients, err := scaleClients(servers.Addrs())
	defer closeClients()
	if err != nil {
		return r, err
	}
	ctx := context.Background()
	heap0 := heapAlloc()
	leases := make([]*lease.Lease, c.leases)
	defer onEach(0, len(leases), func(i int) bool {
		if leases[i] != nil {
			_ = leases[i].Release(ctx)
		}
		return true
	})
	if err := acquireScale(ctx, client, leases, &r); err != nil {
		return r, err
	}
	measureScale(c, leases, admin, &r)
	for _, l := range leases {
		if errors.Is(context.Cause(l.Context()), lease.ErrLeaseLost) {
			r.lost++
		}
	}
	r.heapWhole = float64(heapAlloc()-heap0) / float64(c.leases)
	// The heap profile, to BENCH_SCALE_HEAPPROFILE if set: what the leases
	// keep (go tool pprof -sample_index=inuse_space).
	if err := writeProfile(os.Getenv("BENCH_SCALE_HEAPPROFILE"), "heap"); err != nil {
		return r, err
	}
	r.load = loadavg()
	return r, nil
}

// scaleClients makes a bootstrapped redlock Client over the servers at
// addrs and an admin client of each; closeClients closes them all, also
// after an error.
func scaleClients(addrs []string) (client *redlock.Client, admin []*redis.Client, closeClients func(), err error) {
	var nodes []redis.UniversalClient
	var closers []func() error
	closeClients = func() {
		for i := len(closers) - 1; i >= 0; i-- {
			_ = closers[i]()
		}
	}
	for _, addr := range addrs {
		nc := redis.NewClient(&redis.Options{Addr: addr, PoolSize: 16})
		ac := redis.NewClient(&redis.Options{Addr: addr})
		closers = append(closers, nc.Close, ac.Close)
		nodes, admin = append(nodes, nc), append(admin, ac)
	}
	ctx := context.Background()
	client, err = redlock.New(ctx, redlock.Config{}, nodes...)
	if err != nil {
		return nil, nil, closeClients, err
	}
	closers = append(closers, client.Close)
	return client, admin, closeClients, client.Bootstrap(ctx)
}

// acquireScale takes every lease, in two halves, and records the time it
// took, the retries and the heap per lease in r.
//
// The heap per lease is the growth from half the leases to all of them,
// each read after the acquisitions' stragglers settled: what one more
// lease costs, without the process's fixed costs (connection pools of 5 x
// 16 connections with their buffers, goroutines), which the whole growth
// from before the first acquisition also counts.
func acquireScale(ctx context.Context, client *redlock.Client, leases []*lease.Lease, r *scaleResult) error {
	var (
		errOnce sync.Once
		acqErr  error
		retries atomic.Int64
	)
	cfg := lease.Config{TTL: 10 * time.Second, ID: "scale-bench"}
	// acquire takes the leases [from, to).
	acquire := func(from, to int) {
		onEach(from, to, func(i int) bool {
			l, err := acquireOne(ctx, client, "scale:"+strconv.Itoa(i), cfg, &retries)
			if err != nil {
				errOnce.Do(func() { acqErr = err })
				return false
			}
			leases[i] = l
			return true
		})
	}
	half := len(leases) / 2
	t0 := time.Now()
	acquire(0, half)
	r.acquire = time.Since(t0) // (the pause and the heap reading are not counted)
	time.Sleep(2 * time.Second)
	heapHalf := heapAlloc()
	t0 = time.Now()
	acquire(half, len(leases))
	r.acquire += time.Since(t0)
	r.retries = retries.Load()
	if acqErr != nil {
		return acqErr
	}
	time.Sleep(2 * time.Second) // the acquisition's stragglers and notices settle
	r.heapPerLease = float64(heapAlloc()-heapHalf) / float64(len(leases)-half)
	return nil
}

// acquireOne takes the lease on key, trying up to 5 times, counting the
// retries.
func acquireOne(ctx context.Context, client *redlock.Client, key string, cfg lease.Config, retries *atomic.Int64) (*lease.Lease, error) {
	var l *lease.Lease
	var err error
	for try := 0; l == nil && try < 5; try++ {
		if try > 0 {
			retries.Add(1) // e.g. a node missed NodeTimeout on a loaded host
		}
		// Acquire makes one attempt per RetryDelay while the key is busy
		// (it is not here): no deadline needed, and a deadline would end
		// the lease with it.
		l, err = lease.Acquire(ctx, client, key, cfg)
	}
	return l, err
}

// measureScale watches the leases for the case's window, with its busy
// goroutines spinning, and records the CPU used, the script calls and the
// refreshes seen in r.
func measureScale(c scaleCase, leases []*lease.Lease, admin []*redis.Client, r *scaleResult) {
	var stop atomic.Bool
	for range c.busy {
		go func() {
			for !stop.Load() {
			}
		}()
	}
	vu := make([]time.Time, len(leases))
	for i, l := range leases {
		vu[i] = l.ValidUntil()
	}
	cpu0, srv0 := processCPU(), serverCPU(admin)
	calls0, us0 := scriptStats(admin)
	w0 := time.Now()
	// Sample the refreshes every second (ValidUntil moves at each).
	for time.Since(w0) < c.window {
		time.Sleep(time.Second)
		for i, l := range leases {
			if v := l.ValidUntil(); v.After(vu[i]) {
				r.extends++
				vu[i] = v
			}
		}
	}
	wall := time.Since(w0)
	cpu1, srv1 := processCPU(), serverCPU(admin)
	calls1, us1 := scriptStats(admin)
	stop.Store(true)
	r.clientPct = 100 * (cpu1 - cpu0).Seconds() / wall.Seconds()
	r.serverPct = 100 * (srv1 - srv0).Seconds() / wall.Seconds()
	r.calls = int64(calls1 - calls0)
	if r.calls > 0 {
		r.usPerCall = (us1 - us0) / (calls1 - calls0)
	}
}

// onEach calls f(i) for every i in [from, to) on 64 goroutines; a
// goroutine whose call returns false takes no more.
func onEach(from, to int, f func(i int) bool) {
	var wg sync.WaitGroup
	var next atomic.Int64
	next.Store(int64(from))
	for range 64 {
		wg.Go(func() {
			for i := next.Add(1) - 1; i < int64(to); i = next.Add(1) - 1 {
				if !f(int(i)) {
					return
				}
			}
		})
	}
	wg.Wait()
}

func heapAlloc() int64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return int64(ms.HeapAlloc)
}

// serverCPU sums used_cpu_sys + used_cpu_user over the servers.
func serverCPU(admin []*redis.Client) time.Duration {
	var total float64
	eachInfoField(admin, "cpu", func(k, v string) {
		if k == "used_cpu_sys" || k == "used_cpu_user" {
			f, _ := strconv.ParseFloat(v, 64)
			total += f
		}
	})
	return time.Duration(total * float64(time.Second))
}

// scriptStats sums the calls and usec of evalsha and eval over the servers.
func scriptStats(admin []*redis.Client) (calls, usec float64) {
	eachInfoField(admin, "commandstats", func(k, v string) {
		if k != "cmdstat_evalsha" && k != "cmdstat_eval" && k != "cmdstat_fcall" {
			return
		}
		for f := range strings.SplitSeq(v, ",") {
			fk, fv, _ := strings.Cut(f, "=")
			x, _ := strconv.ParseFloat(fv, 64)
			switch fk {
			case "calls":
				calls += x
			case "usec":
				usec += x
			}
		}
	})
	return calls, usec
}

// eachInfoField calls f with every "key:value" line of the INFO section of
// each server; a server that does not answer is passed over.
func eachInfoField(admin []*redis.Client, section string, f func(k, v string)) {
	for _, c := range admin {
		info, err := c.Info(context.Background(), section).Result()
		if err != nil {
			continue
		}
		for line := range strings.SplitSeq(info, "\n") {
			if k, v, ok := strings.Cut(strings.TrimSpace(line), ":"); ok {
				f(k, v)
			}
		}
	}
}
