// Command benchrun benchmarks redlease against its peer libraries (redsync,
// rueidislock, bsm/redislock) and against the floors a Redlock cycle cannot
// beat (a bare SET NX + DEL on one node; SET NX to 5 nodes at once,
// returning at the 3rd OK, and DEL likewise), and the failover of a leader
// election with 3 candidates (redlease's election.Elector against a leader
// loop on redsync: graceful handover and crash takeover; failover.go).
//
// It starts 5 redis-servers on free 127.0.0.1 ports and a fault-proxy
// child process, runs every case for every library in interleaved rounds
// (round 1: every case, every library; round 2: ...; the order of the
// libraries rotates from round to round), and writes docs/bench/results.md
// and docs/bench/chart.svg. Run it with `make bench` from the repository
// root, or from bench/:
//
//	go run ./cmd/benchrun -out ../docs/bench
//
// -only 'uncontended/redlease|uncontended/redsync' runs a subset and prints
// the report instead of writing it (with -cpuprofile / -memprofile, for
// profiling one library in one case).
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"regexp"
	"runtime"
	"runtime/pprof"
	"sync"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/redlease/redlease/internal/testing/redistest"
)

func main() {
	if len(os.Args) == 2 && os.Args[1] == proxyChildArg {
		os.Exit(runProxyChild())
	}
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "benchrun:", err)
		os.Exit(1)
	}
}

type options struct {
	rounds                      int
	dur, contendDur, warm, hold time.Duration
	delay                       time.Duration
	out, only, note             string
	cpuProfile, memProfile      string
	blockProfile                string
	cmdstats                    bool
	handovers, crashes          int
	scale                       bool
	scaleWindow                 time.Duration
	scaleRuns                   int
}

func run() error {
	o := parseFlags()
	// go-redis logs every failed dial (the down case) on stderr.
	redis.SetLogger(quietLogger{})
	if o.scale {
		return runScale(o)
	}
	only, err := onlyFilter(o.only)
	if err != nil {
		return err
	}
	m := meta{start: time.Now(), loadStart: loadavg(), opts: o}
	cpu0 := readCPU()
	r := &benchRig{stopServers: func() {}}
	defer r.cleanup()
	r.stopOnSignal()
	fmt.Fprintf(os.Stderr, "starting %d redis-servers and the proxies (load %s)\n", numNodes, m.loadStart)
	if err := r.start(); err != nil {
		return err
	}
	secs := sections(r.e, r.proxies, o)
	h, own, err := r.measure(secs, o, only)
	if err != nil {
		return err
	}
	m.end = time.Now()
	m.loadEnd = loadavg()
	m.otherCPU = otherCPUShare(cpu0, readCPU(), own)
	md, svg := report(h, secs, m)
	return writeReport(o, md, svg, m.start)
}

// parseFlags reads the command line.
func parseFlags() options {
	var o options
	flag.IntVar(&o.rounds, "rounds", 5, "interleaved rounds")
	flag.DurationVar(&o.dur, "dur", time.Second, "measured time per library per case per round")
	flag.DurationVar(&o.contendDur, "contend-dur", 2*time.Second, "measured time of the contention case per library per round")
	flag.DurationVar(&o.warm, "warmup", 150*time.Millisecond, "warm-up per library per case per round (not measured)")
	flag.DurationVar(&o.hold, "hold", time.Millisecond, "how long a contender holds the lock")
	flag.DurationVar(&o.delay, "delay", 20*time.Millisecond, "reply latency of node 0 in the delayed case")
	flag.StringVar(&o.out, "out", "../docs/bench", "directory of results.md and chart.svg")
	flag.StringVar(&o.only, "only", "", "regexp on case/library (e.g. 'uncontended/redlease$'): run a subset, print the report, write nothing")
	flag.StringVar(&o.note, "note", "", "a note to print at the top of the report")
	flag.StringVar(&o.cpuProfile, "cpuprofile", "", "write a CPU profile of the measured rounds")
	flag.StringVar(&o.memProfile, "memprofile", "", "write an allocation profile at the end")
	flag.StringVar(&o.blockProfile, "blockprofile", "", "write a blocking profile (where goroutines wait) at the end")
	flag.IntVar(&o.handovers, "handovers", 50, "graceful handovers measured per library in all (failover case), spread over the rounds")
	flag.IntVar(&o.crashes, "crashes", 15, "crash takeovers measured per library in all (failover case), spread over the rounds")
	flag.BoolVar(&o.cmdstats, "cmdstats", false, "print the servers' per-command stats per op of every measurement (diagnostics)")
	flag.BoolVar(&o.scale, "scale", false, "run the leases-at-scale cases only (scale.go) and print their table")
	flag.DurationVar(&o.scaleWindow, "scale-window", time.Minute, "measured window of the 10,000-lease scale case")
	flag.IntVar(&o.scaleRuns, "scale-runs", 5, "runs of the 20,000-lease scale case with 2 busy goroutines")
	flag.Parse()
	return o
}

// onlyFilter is -only's filter on case/library (all when empty).
func onlyFilter(expr string) (func(sec, lib string) bool, error) {
	if expr == "" {
		return func(string, string) bool { return true }, nil
	}
	re, err := regexp.Compile(expr)
	if err != nil {
		return nil, fmt.Errorf("-only: %w", err)
	}
	return func(sec, lib string) bool { return re.MatchString(sec + "/" + lib) }, nil
}

// benchRig is the run's servers, proxies and clients.
type benchRig struct {
	servers     *redistest.Group
	stopServers func()
	proxies     *proxyCtl
	e           *env
	once        sync.Once
}

// cleanup closes the clients, the proxies and the servers, once.
func (r *benchRig) cleanup() {
	r.once.Do(func() {
		if r.e != nil {
			r.e.close()
		}
		if r.proxies != nil {
			r.proxies.close()
		}
		r.stopServers()
	})
}

// stopOnSignal stops the child processes and exits on SIGINT or SIGTERM.
func (r *benchRig) stopOnSignal() {
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	go func() {
		s := <-sig
		fmt.Fprintf(os.Stderr, "benchrun: %v: stopping the servers\n", s)
		// Only the child processes: the measuring goroutines may still be
		// using the clients.
		if r.proxies != nil {
			r.proxies.close()
		}
		r.stopServers()
		os.Exit(130)
	}()
}

// start starts the servers, the proxies and the clients.
func (r *benchRig) start() error {
	// The tests' rig: redis-servers without persistence (redis-server's
	// default noeviction policy), on free ports, stopped by PID.
	var err error
	r.servers, r.stopServers, err = redistest.StartMain(numNodes)
	if err != nil {
		return err
	}
	addrs := r.servers.Addrs()
	var paddrs []string
	r.proxies, paddrs, err = startProxies(addrs)
	if err != nil {
		return err
	}
	cands, err := r.proxies.addCandidates(addrs, numCandidates)
	if err != nil {
		return err
	}
	r.e, err = newEnv(context.Background(), addrs, paddrs, r.proxies, cands)
	return err
}

// measure runs the rounds, with the profiles asked for, and returns their
// results and the CPU time the run's own processes used meanwhile.
func (r *benchRig) measure(secs []*section, o options, only func(sec, lib string) bool) (*harness, int64, error) {
	if o.cpuProfile != "" {
		f, err := os.Create(o.cpuProfile)
		if err != nil {
			return nil, 0, err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return nil, 0, err
		}
	}
	if o.memProfile != "" {
		runtime.MemProfileRate = 1 // every allocation, to count them by site
	}
	if o.blockProfile != "" {
		runtime.SetBlockProfileRate(int(10 * time.Microsecond))
	}
	h := newHarness(o.dur, o.contendDur, o.warm, o.hold)
	h.admin = r.e.admin
	h.cmdstats = o.cmdstats
	pids := []int{os.Getpid(), r.proxies.cmd.Process.Pid}
	for _, s := range r.servers.Servers() {
		pids = append(pids, s.PID())
	}
	own0 := ownCPU(pids)
	err := h.rounds(secs, o.rounds, only)
	own1 := ownCPU(pids)
	if o.cpuProfile != "" {
		pprof.StopCPUProfile()
	}
	if err != nil {
		return nil, 0, err
	}
	if err := writeProfile(o.memProfile, "allocs"); err != nil {
		return nil, 0, err
	}
	return h, own1 - own0, writeProfile(o.blockProfile, "block")
}

// writeProfile writes the named profile to path, if path is set.
func writeProfile(path, name string) error {
	if path == "" {
		return nil
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer f.Close()
	if name == "allocs" {
		runtime.GC() // the profile is as of the last GC
	}
	return pprof.Lookup(name).WriteTo(f, 0)
}

// writeReport prints the report, and writes it and the chart to -out
// unless -only ran a subset.
func writeReport(o options, md, svg string, start time.Time) error {
	if o.only != "" {
		fmt.Print(md)
		return nil
	}
	if err := os.MkdirAll(o.out, 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(o.out, "results.md"), []byte(md), 0o644); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(o.out, "chart.svg"), []byte(svg), 0o644); err != nil {
		return err
	}
	fmt.Print(md)
	fmt.Fprintf(os.Stderr, "wrote %s and %s in %s\n", filepath.Join(o.out, "results.md"),
		filepath.Join(o.out, "chart.svg"), time.Since(start).Round(time.Second))
	return nil
}

// sections is the plan of a round, in order.
func sections(e *env, p *proxyCtl, o options) []*section {
	secs := []*section{
		{id: "uncontended", title: "Uncontended acquire+release, 1 goroutine, 5 servers", kind: kindSerial, libs: e.uncontended5},
		{id: "single", title: "Single server, 1 goroutine", kind: kindSerial, libs: e.single},
		{id: "proxied", title: "Through faultproxy, no fault", kind: kindSerial, libs: e.proxied5},
		{id: "delayed", title: fmt.Sprintf("Node 0 replies %s late", o.delay), kind: kindSerial, libs: e.proxied5, base: "proxied",
			setup:    func() error { return p.setLatency(faultyNode, o.delay) },
			teardown: func() error { return p.setLatency(faultyNode, 0) }},
		{id: "down", title: "Node 0 down", kind: kindSerial, libs: e.proxied5, base: "proxied",
			setup:    func() error { return p.disable(faultyNode) },
			teardown: func() error { return p.enable(faultyNode) }},
		{id: "parallel5", title: "64 goroutines, distinct keys, 5 servers", kind: kindParallel, g: 64, libs: e.parallel5},
		{id: "parallel1", title: "64 goroutines, distinct keys, 1 server", kind: kindParallel, g: 64, libs: e.parallel1},
		{id: "contend", title: "16 goroutines contending for one key", kind: kindContention, g: 16, libs: e.contend},
	}
	return append(secs, failoverSections(e, o)...)
}

type quietLogger struct{}

func (quietLogger) Printf(context.Context, string, ...any) {}

// meta is what the report says about the run.
type meta struct {
	start, end         time.Time
	loadStart, loadEnd string
	otherCPU           float64 // share of all CPUs used by other processes during the run; <0 unknown
	opts               options
}
