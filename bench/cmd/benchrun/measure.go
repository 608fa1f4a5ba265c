package main

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"
)

type caseKind int

const (
	kindSerial     caseKind = iota // one goroutine, acquire+release cycles
	kindParallel                   // g goroutines, distinct keys
	kindContention                 // g goroutines, one key
	kindGraceful                   // g graceful handovers of an election (failover.go)
	kindCrash                      // g crash takeovers of an election (failover.go)
)

// section is one case: a set of libraries measured under one condition.
type section struct {
	id, title string
	kind      caseKind
	g         int
	libs      []*lib
	// setup and teardown bracket the section in every round (the fault of
	// the fault cases).
	setup, teardown func() error
	// base names the section whose figures are this one's fault-free
	// baseline ("" = none).
	base string
	// cut and restore, in the crash case, cut a failover candidate off
	// from every server and restore it.
	cut, restore func(cand int) error
}

// result is what the rounds gathered for one library in one section.
type result struct {
	lat      []int64   // ns per successful op (cycle, or wait in a contention case), pooled over rounds
	opsPerS  []float64 // per round
	allocs   []float64 // per round: MemStats.Mallocs delta / (ops + failures)
	ops      int
	fails    int
	firstErr string
	perG     []int     // contention: acquisitions per goroutine, summed over rounds
	hung     string    // set when a call did not return: why, and in which round
	srvUs    []float64 // per round: server CPU µs per op, summed over the 5 servers (INFO cpu)
	cliUs    []float64 // per round: this process's CPU µs per op (getrusage)
}

func (r *result) p(q float64) time.Duration {
	if len(r.lat) == 0 {
		return 0
	}
	return time.Duration(r.lat[min(len(r.lat)-1, int(q*float64(len(r.lat))))])
}

func (r *result) max() time.Duration {
	if len(r.lat) == 0 {
		return 0
	}
	return time.Duration(r.lat[len(r.lat)-1])
}

func (r *result) medOps() float64    { return median(r.opsPerS) }
func (r *result) medAllocs() float64 { return median(r.allocs) }
func (r *result) medSrvUs() float64  { return median(r.srvUs) }
func (r *result) medCliUs() float64  { return median(r.cliUs) }

func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := slices.Clone(v)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// harness runs the sections in interleaved rounds.
type harness struct {
	dur, contendDur, warm, hold time.Duration
	bufs                        [][]int64 // per goroutine latency buffers, allocated once
	results                     map[string]map[string]*result
	admin                       []*redis.Client // for INFO cpu
	cmdstats                    bool            // print per-command server stats per op
	roundLoads                  []string        // 1-minute load average at the end of each round
}

// counters are read around every measurement: allocations, this process's
// CPU time, the servers' time in commands.
type counters struct {
	mallocs uint64
	cpu     time.Duration
	srvUs   int64
	cmds    map[string][2]int64 // with -cmdstats
}

// begin reads the counters at the start of a measurement: the servers
// first, so that INFO's own allocations are not counted.
func (h *harness) begin() counters {
	var c counters
	if h.cmdstats {
		c.cmds = h.cmdStats()
	}
	c.srvUs = h.serverUsec()
	c.cpu = processCPU()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	c.mallocs = ms.Mallocs
	return c
}

// end reads them at the end, in the opposite order.
func (h *harness) end() counters {
	var c counters
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	c.mallocs = ms.Mallocs
	c.cpu = processCPU()
	c.srvUs = h.serverUsec()
	if h.cmdstats {
		c.cmds = h.cmdStats()
	}
	return c
}

// serverUsec sums the CPU time (user + system, µs; INFO cpu) of the
// servers (-1 if one did not answer). Unlike INFO commandstats it counts
// the servers' network work and counts a script's nested commands once.
// With -cmdstats it also keeps the commandstats, for the diagnostics.
func (h *harness) serverUsec() int64 {
	var total int64
	for _, c := range h.admin {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		info, err := c.Info(ctx, "cpu").Result()
		cancel()
		if err != nil {
			return -1
		}
		for line := range strings.SplitSeq(info, "\n") {
			k, v, ok := strings.Cut(strings.TrimSpace(line), ":")
			if !ok || (k != "used_cpu_sys" && k != "used_cpu_user") {
				continue
			}
			f, _ := strconv.ParseFloat(v, 64)
			total += int64(f * 1e6)
		}
	}
	return total
}

// cmdStats sums INFO commandstats over the servers: calls and usec per
// command (commands run by scripts are counted too, and inside their
// script's time).
func (h *harness) cmdStats() map[string][2]int64 {
	out := map[string][2]int64{}
	for _, c := range h.admin {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		info, err := c.Info(ctx, "commandstats").Result()
		cancel()
		if err != nil {
			return nil
		}
		for line := range strings.SplitSeq(info, "\n") {
			name, rest, ok := strings.Cut(strings.TrimSpace(line), ":")
			if !ok || !strings.HasPrefix(name, "cmdstat_") {
				continue
			}
			v := out[name[len("cmdstat_"):]]
			for field := range strings.SplitSeq(rest, ",") {
				if n, ok := strings.CutPrefix(field, "calls="); ok {
					x, _ := strconv.ParseInt(n, 10, 64)
					v[0] += x
				}
				if n, ok := strings.CutPrefix(field, "usec="); ok {
					x, _ := strconv.ParseInt(n, 10, 64)
					v[1] += x
				}
			}
			out[name[len("cmdstat_"):]] = v
		}
	}
	return out
}

// stuckAfter is how long past its planned end a measurement may run before
// it is abandoned as hung (a call that never returns: see guard).
const stuckAfter = 30 * time.Second

// guard runs f and waits for it at most limit. A library call that never
// returns must not stop the run: f is then abandoned (its goroutine stays
// blocked, on latency buffers that are replaced) and guard returns false.
// The calls measured are the libraries' own, with their own contexts: the
// harness does not impose a deadline on them.
func (h *harness) guard(limit time.Duration, bufs []int, f func()) bool {
	if returnsWithin(limit, f) {
		return true
	}
	for _, i := range bufs {
		h.bufs[i] = make([]int64, 0, cap(h.bufs[i]))
	}
	return false
}

// returnsWithin runs f in a goroutine and reports whether it returned
// within d; if not, the goroutine is left running.
func returnsWithin(d time.Duration, f func()) bool {
	done := make(chan struct{})
	go func() { defer close(done); f() }()
	select {
	case <-done:
		return true
	case <-time.After(d): // collected once unreferenced (Go 1.23): no Stop
		return false
	}
}

func (h *harness) hung(s *section, l *lib, what string, round int) {
	r := h.result(s.id, l.short)
	r.hung = fmt.Sprintf("%s did not return within %s in round %d; not measured after", what, stuckAfter, round+1)
	fmt.Fprintf(os.Stderr, "%s/%s: HUNG: %s\n", s.id, l.short, r.hung)
}

// processCPU is this process's CPU time (user + system).
func processCPU() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func newHarness(dur, contendDur, warm, hold time.Duration) *harness {
	h := &harness{dur: dur, contendDur: contendDur, warm: warm, hold: hold, results: map[string]map[string]*result{}}
	h.bufs = make([][]int64, 64)
	for i := range h.bufs {
		n := 1 << 15
		if i == 0 {
			n = 1 << 19
		}
		h.bufs[i] = make([]int64, 0, n)
	}
	return h
}

func (h *harness) result(sec, lib string) *result {
	m := h.results[sec]
	if m == nil {
		m = map[string]*result{}
		h.results[sec] = m
	}
	r := m[lib]
	if r == nil {
		r = &result{}
		m[lib] = r
	}
	return r
}

// keyGen makes fresh keys, one allocation each (the string). Every cycle
// uses a key never used before: a straggling SET of a floor, or a
// straggling acquire of a library that returned at quorum, may land after
// the release, and must not meet the next cycle.
type keyGen struct {
	buf []byte
	n   int
	pre int
}

func newKeyGen(prefix string) *keyGen {
	b := make([]byte, 0, len(prefix)+24)
	b = append(b, prefix...)
	return &keyGen{buf: b, pre: len(prefix)}
}

func (k *keyGen) next() string {
	k.n++
	k.buf = strconv.AppendInt(k.buf[:k.pre], int64(k.n), 10)
	return string(k.buf)
}

// rounds runs every section nRounds times, round-major: round 1 runs every
// section for every library, then round 2, so that machine noise hits every
// library alike. Within a section the order of the libraries rotates from
// round to round.
func (h *harness) rounds(secs []*section, nRounds int, only func(sec, lib string) bool) error {
	for r := range nRounds {
		t0 := time.Now()
		for _, s := range secs {
			libs := rotate(s.libs, r)
			var run []*lib
			for _, l := range libs {
				if only(s.id, l.short) && (h.results[s.id][l.short] == nil || h.results[s.id][l.short].hung == "") {
					run = append(run, l)
				}
			}
			if len(run) == 0 {
				continue
			}
			if s.setup != nil {
				if err := s.setup(); err != nil {
					return fmt.Errorf("%s: setup: %w", s.id, err)
				}
			}
			for _, l := range run {
				prefix := fmt.Sprintf("b:%s:%s:r%d:", s.id, l.short, r)
				switch s.kind {
				case kindSerial:
					h.serial(s, l, prefix, r)
				case kindParallel:
					h.parallel(s, l, prefix, r)
				case kindContention:
					h.contention(s, l, prefix, r)
				case kindGraceful, kindCrash:
					h.failover(s, l, prefix, r)
				}
			}
			if s.teardown != nil {
				if err := s.teardown(); err != nil {
					return fmt.Errorf("%s: teardown: %w", s.id, err)
				}
			}
		}
		la := loadavg()
		h.roundLoads = append(h.roundLoads, strings.Fields(la + " ?")[0])
		fmt.Fprintf(os.Stderr, "round %d/%d done in %s (load %s)\n", r+1, nRounds, time.Since(t0).Round(time.Second), la)
	}
	return nil
}

func seq(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	return out
}

func rotate[T any](s []T, r int) []T {
	if len(s) == 0 {
		return s
	}
	r %= len(s)
	return append(slices.Clone(s[r:]), s[:r]...)
}

func (h *harness) warmUp(s *section, l *lib, kg *keyGen, round int) bool {
	ctx := context.Background()
	ok := h.guard(h.warm+stuckAfter, nil, func() {
		for n, end := 0, time.Now().Add(h.warm); n < 1 || time.Now().Before(end); n++ {
			_ = l.cycle(ctx, kg.next())
		}
	})
	if !ok {
		h.hung(s, l, "a warm-up cycle", round)
		return false
	}
	h.quiesce(l)
	return true
}

// quiesce waits for the stragglers of the cycles run so far.
func (h *harness) quiesce(l *lib) {
	l.drain()
	if l.settle > 0 {
		time.Sleep(l.settle)
	}
}

func (h *harness) record(s *section, l *lib, lat [][]int64, ops, fails int, elapsed time.Duration, c0, c1 counters, firstErr error) {
	mallocs := c1.mallocs - c0.mallocs
	r := h.result(s.id, l.short)
	for _, b := range lat {
		r.lat = append(r.lat, b...)
	}
	slices.Sort(r.lat)
	r.ops += ops
	r.fails += fails
	if firstErr != nil && r.firstErr == "" {
		r.firstErr = firstErr.Error()
		fmt.Fprintf(os.Stderr, "%s/%s: %d failures, first: %v\n", s.id, l.short, fails, firstErr)
	}
	if elapsed > 0 {
		r.opsPerS = append(r.opsPerS, float64(ops)/elapsed.Seconds())
	}
	if n := float64(ops + fails); n > 0 && c1.cmds != nil {
		var parts []string
		for name, v := range c1.cmds {
			d := [2]int64{v[0] - c0.cmds[name][0], v[1] - c0.cmds[name][1]}
			if name == "info" || d[0] == 0 {
				continue // the harness's own INFO calls are in there too
			}
			parts = append(parts, fmt.Sprintf("%s %.2f calls %.1fµs", name, float64(d[0])/n, float64(d[1])/n))
		}
		slices.Sort(parts)
		fmt.Fprintf(os.Stderr, "cmdstats %s/%s per op: %s\n", s.id, l.short, strings.Join(parts, "; "))
	}
	if n := float64(ops + fails); n > 0 {
		r.allocs = append(r.allocs, float64(mallocs)/n)
		r.cliUs = append(r.cliUs, float64((c1.cpu-c0.cpu).Microseconds())/n)
		if c0.srvUs >= 0 && c1.srvUs >= 0 {
			r.srvUs = append(r.srvUs, float64(c1.srvUs-c0.srvUs)/n)
		}
	}
}

// serial: one goroutine, cycles back to back for h.dur.
func (h *harness) serial(s *section, l *lib, prefix string, round int) {
	kg := newKeyGen(prefix)
	if !h.warmUp(s, l, kg, round) {
		return
	}
	ctx := context.Background()
	buf := h.bufs[0][:0]
	ops, fails := 0, 0
	var firstErr error
	c0 := h.begin()
	start := time.Now()
	end := start.Add(h.dur)
	if !h.guard(h.dur+stuckAfter, []int{0}, func() {
		for {
			t0 := time.Now()
			if t0.After(end) {
				break
			}
			err := l.cycle(ctx, kg.next())
			d := time.Since(t0)
			if err != nil {
				if fails++; firstErr == nil {
					firstErr = err
				}
				continue
			}
			ops++
			if len(buf) < cap(buf) {
				buf = append(buf, int64(d))
			}
		}
	}) {
		h.hung(s, l, "a cycle", round)
		return
	}
	elapsed := time.Since(start)
	h.quiesce(l) // the stragglers' allocations belong to the cycles
	c1 := h.end()
	h.record(s, l, [][]int64{buf}, ops, fails, elapsed, c0, c1, firstErr)
}

// parallel: s.g goroutines, each on its own fresh keys, for h.dur.
func (h *harness) parallel(s *section, l *lib, prefix string, round int) {
	if !h.warmUp(s, l, newKeyGen(prefix+"w:"), round) {
		return
	}
	kgs := make([]*keyGen, s.g)
	for i := range kgs {
		kgs[i] = newKeyGen(prefix + "g" + strconv.Itoa(i) + ":")
	}
	bufs := make([][]int64, s.g)
	opsG, failsG := make([]int, s.g), make([]int, s.g)
	errs := make([]error, s.g)
	var wg sync.WaitGroup
	ctx := context.Background()
	c0 := h.begin()
	start := time.Now()
	end := start.Add(h.dur)
	for i := range s.g {
		wg.Go(func() {
			buf := h.bufs[i][:0]
			for {
				t0 := time.Now()
				if t0.After(end) {
					break
				}
				err := l.cycle(ctx, kgs[i].next())
				d := time.Since(t0)
				if err != nil {
					if failsG[i]++; errs[i] == nil {
						errs[i] = err
					}
					continue
				}
				opsG[i]++
				if len(buf) < cap(buf) {
					buf = append(buf, int64(d))
				}
			}
			bufs[i] = buf
		})
	}
	if !h.guard(h.dur+stuckAfter, seq(s.g), wg.Wait) {
		h.hung(s, l, "a cycle", round)
		return
	}
	elapsed := time.Since(start)
	h.quiesce(l)
	c1 := h.end()
	ops, fails := 0, 0
	var firstErr error
	for i := range s.g {
		ops += opsG[i]
		fails += failsG[i]
		if firstErr == nil {
			firstErr = errs[i]
		}
	}
	h.record(s, l, bufs, ops, fails, elapsed, c0, c1, firstErr)
}

// contention: s.g goroutines take turns on one key for h.contendDur, each
// holding the lock for h.hold; the latency is the time from the call to
// holding the lock.
func (h *harness) contention(s *section, l *lib, prefix string, round int) {
	key := prefix + "contended"
	acq := make([]func(context.Context) (func(), error), s.g)
	for i := range acq {
		acq[i] = l.contender(key)
	}
	bufs := make([][]int64, s.g)
	counts := make([]int, s.g)
	var wg sync.WaitGroup
	c0 := h.begin()
	start := time.Now()
	ctx, cancel := context.WithDeadline(context.Background(), start.Add(h.contendDur))
	for i := range s.g {
		wg.Go(func() {
			buf := h.bufs[i][:0]
			for ctx.Err() == nil {
				t0 := time.Now()
				release, err := acq[i](ctx)
				d := time.Since(t0)
				if err != nil {
					continue // ctx ended
				}
				counts[i]++
				if len(buf) < cap(buf) {
					buf = append(buf, int64(d))
				}
				time.Sleep(h.hold)
				release()
			}
			bufs[i] = buf
		})
	}
	ok := h.guard(h.contendDur+stuckAfter, seq(s.g), wg.Wait)
	cancel()
	if !ok {
		h.hung(s, l, "an acquire or release", round)
		return
	}
	elapsed := h.contendDur
	h.quiesce(l)
	c1 := h.end()
	ops := 0
	for _, c := range counts {
		ops += c
	}
	h.record(s, l, bufs, ops, 0, elapsed, c0, c1, nil)
	r := h.result(s.id, l.short)
	if r.perG == nil {
		r.perG = make([]int, s.g)
	}
	for i, c := range counts {
		r.perG[i] += c
	}
}
