package sim

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"

	"github.com/redlease/redlease/internal/testing/checker"
	"github.com/redlease/redlease/internal/testing/checker/wire"
	"github.com/redlease/redlease/internal/testing/sim"
	"github.com/redlease/redlease/internal/testing/unsafetest"
	"github.com/redlease/redlease/internal/unsafeopt"
	"github.com/redlease/redlease/redlock"
)

// result is what one run of a schedule found.
type result struct {
	violations []string
	trace      []string
	stats      sim.Stats
	terms      int
	handovers  handovers
	digest     string        // the run's history without the times of beliefs: replays compare it
	overlap    time.Duration // the longest time two holders acted at once (checker.LongestOverlap)
}

// run is one schedule running in a synctest bubble.
type run struct {
	s     *schedule
	w     *sim.World
	epoch time.Time

	mu      sync.Mutex
	evs     []wire.Event
	trace   []string
	stopped bool

	successor string    // the successor a leader's handover named, until the next election
	handovers handovers // the named handovers and where they landed

	primary, spare []*sim.Server
	procs          []*proc
	snaps          map[int]*sim.Snapshot
}

func addr(i int) string { return fmt.Sprintf("n%d:6379", i+1) }

func (r *run) now() int64 { return int64(time.Since(r.epoch)) }

// of converts a time of the bubble into the history's clock (ns since the
// run began); 0 for the zero time.
func (r *run) of(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return int64(t.Sub(r.epoch))
}

func (r *run) emit(ev wire.Event) {
	if ev.T == 0 {
		ev.T = r.now()
	}
	r.mu.Lock()
	r.evs = append(r.evs, ev)
	r.mu.Unlock()
}

func (r *run) note(format string, args ...any) {
	line := fmt.Sprintf("%9s  %s", time.Duration(r.now()).Round(time.Microsecond), fmt.Sprintf(format, args...))
	r.mu.Lock()
	r.trace = append(r.trace, line)
	r.mu.Unlock()
}

// runSchedule runs s in virtual time and checks its history.
func runSchedule(t *testing.T, s *schedule) result {
	var res result
	synctest.Test(t, func(t *testing.T) {
		res = execute(s)
	})
	return res
}

func execute(s *schedule) result {
	o := sim.Options{Seed: s.seed}
	var r *run
	if s.serverLog {
		o.Log = func(line string) { r.note("  %s", line) }
	}
	switch s.control {
	case "no-failback-check":
		o.Lie.FixedReplID = true
	case "extend-recreates":
		o.Mutate, o.Variant = recreateOnExtend, "extend-recreates"
	}
	o.Lie.DenyScriptInfo = s.denyInfo
	o.Lie.OneInfoSection = s.oldInfo
	r = &run{s: s, w: sim.NewWorld(o), epoch: time.Now(), snaps: map[int]*sim.Snapshot{}}
	for i := range s.nodes {
		p := r.w.NewServer(fmt.Sprintf("n%d", i+1))
		sp := r.w.NewServer(fmt.Sprintf("n%d'", i+1))
		sp.ReplicaOf(p, s.lag[i])
		r.w.Listen(addr(i), p)
		r.primary, r.spare = append(r.primary, p), append(r.spare, sp)
	}
	ctx, cancel := context.WithCancel(context.Background())
	r.bootstrap(ctx)
	var apps sync.WaitGroup
	for i := range s.clients {
		p := r.newProc(ctx, i)
		r.procs = append(r.procs, p)
		apps.Go(func() { p.work(ctx) })
	}
	driver := make(chan struct{})
	go func() {
		defer close(driver)
		r.drive()
	}()
	time.Sleep(s.horizon)
	<-driver
	r.mu.Lock()
	r.stopped = true
	r.mu.Unlock()
	r.healAll()
	cancel()
	apps.Wait()
	for _, p := range r.procs {
		p.close()
	}
	// go-redis retries failed dials in the background every second until
	// it sees its client closed.
	time.Sleep(2 * time.Second)
	res := r.check()
	r.w.Close()
	return res
}

// recreateOnExtend is the control that lets extend re-create a missing
// key (docs/design.md S4): the compare of extend.lua (and extend_many.lua) also accepts a missing key, which it
// then sets.
func recreateOnExtend(script, src string) string {
	if script == "library" { // the same scripts, as functions
		return recreateOnExtend("extend", recreateOnExtend("extend_many", src))
	}
	if script == "extend_many" { // the leases' batched refresh
		const cmp = "if got[i] == ARGV[i + 4] then"
		if !strings.Contains(src, cmp) {
			panic("control extend-recreates: extend_many.lua no longer has its compare; update the mutation")
		}
		return strings.Replace(src, cmp, "if not got[i] then redis.call('SET', KEYS[i + 1], ARGV[i + 4], 'PX', ttl); got[i] = ARGV[i + 4] end\n  "+cmp, 1)
	}
	if script != "extend" {
		return src
	}
	const cmp = "if redis.call('GET', KEYS[1]) ~= ARGV[1] then"
	if !strings.Contains(src, cmp) {
		panic("control extend-recreates: extend.lua no longer has its compare; update the mutation")
	}
	return strings.Replace(src, cmp, "if not redis.call('GET', KEYS[1]) then redis.call('SET', KEYS[1], ARGV[1], 'PX', ttl) end\n"+cmp, 1)
}

// redisClient is one process's go-redis client of one node.
func (r *run) redisClient(proc string, i int) *redis.Client {
	return redis.NewClient(&redis.Options{Addr: addr(i), Dialer: r.w.Dialer(proc), Protocol: 2,
		DisableIdentity: true, MaxRetries: 2, MinRetryBackoff: -1, MaxRetryBackoff: -1,
		DialTimeout: 100 * time.Millisecond, ReadTimeout: 200 * time.Millisecond, WriteTimeout: 200 * time.Millisecond,
		ReadBufferSize: 4096, WriteBufferSize: 4096,
		PoolSize: 100, PoolTimeout: 200 * time.Millisecond, // (a pool that never waits: go-redis keeps the timers of its waits in a process-wide sync.Pool, which synctest bubbles must not share)
		// (No endpoint detection: it resolves the address's host name.)
		MaintNotificationsConfig: &maintnotifications.Config{Mode: maintnotifications.ModeDisabled}})
}

func (r *run) redlockConfig(rnd *lockedRand) redlock.Config {
	cfg := redlock.Config{MaxTTL: r.s.maxTTL, DisableQuarantine: r.s.control == "no-quarantine" || r.s.noQuarantine,
		DisableFencing: r.s.noFencing}
	cfg.Retry = func(int) (time.Duration, bool) { return rnd.dur(50*time.Millisecond, 150*time.Millisecond), true }
	cfg.DisableFunctions = r.s.evalsha
	// The controls of the replaced dataset turn the incarnation token off
	// too: it catches the failback (a full resync loads the library anew)
	// and the reload.
	off := unsafeopt.Off{CounterTTL: r.s.counterTTL, FastPathMinority: r.s.control == "fencing-minority",
		IncarnationToken: r.s.control == "no-failback-check" || r.s.control == "no-token",
		ClockSanity:      r.s.control == "no-clock-check", PermitsPlusOne: r.s.control == "permits-plus-one"}
	unsafetest.Set(&cfg, off)
	return cfg
}

// bootstrap declares the fresh nodes ready (no lock can have existed), so
// that schedules do not spend MaxTTL in the first quarantine.
func (r *run) bootstrap(ctx context.Context) {
	var nodes []redis.UniversalClient
	for i := range r.s.nodes {
		c := r.redisClient("admin", i)
		defer c.Close()
		nodes = append(nodes, c)
	}
	rc, err := redlock.New(ctx, r.redlockConfig(newLockedRand(r.s.seed, 99)), nodes...)
	if err != nil {
		panic(err)
	}
	defer rc.Close()
	if err := rc.Bootstrap(ctx); err != nil {
		panic(err)
	}
}

// lockedRand is one seeded source shared by a process's goroutines.
type lockedRand struct {
	mu sync.Mutex
	r  *rand.Rand
}

func newLockedRand(seed, stream uint64) *lockedRand {
	return &lockedRand{r: rand.New(rand.NewPCG(seed, stream))}
}

func (l *lockedRand) dur(lo, hi time.Duration) time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	return dur(l.r, lo, hi)
}

// drive applies the schedule's faults at their times.
func (r *run) drive() {
	type action struct {
		at time.Duration
		do func()
	}
	var acts []action
	for i, f := range r.s.faults {
		apply, heal := r.fault(i, f)
		if f.kind == "restart-snapshot" || f.kind == "reload" {
			acts = append(acts, action{f.snapAt, func() { r.snaps[i] = r.primary[f.node].Snapshot() }})
		}
		acts = append(acts, action{f.at, func() {
			r.note("fault: %s", f)
			r.w.Fault(f.kind)
			apply()
		}})
		if heal != nil {
			acts = append(acts, action{f.at + f.d, heal})
		}
	}
	slices.SortStableFunc(acts, func(a, b action) int { return int(a.at - b.at) })
	for _, a := range acts {
		if a.at >= r.s.horizon {
			break
		}
		if d := a.at - time.Duration(r.now()); d > 0 {
			time.Sleep(d)
		}
		a.do()
	}
}

// fault returns how to apply f, and how to heal it (nil: it stays).
func (r *run) fault(i int, f fault) (apply, heal func()) {
	var srv *sim.Server
	at := func() *sim.Server { srv = r.primary[f.node]; return srv }
	pname := fmt.Sprintf("c%d", f.client+1)
	switch f.kind {
	case "pause":
		return func() { at().Pause() }, func() { srv.Resume(); r.note("heal: resume %s", srv.Name()) }
	case "partition":
		return func() { r.w.Partition(pname, addr(f.node)) },
			func() { r.w.Heal(pname, addr(f.node)); r.note("heal: %s and n%d reconnected", pname, f.node+1) }
	case "slow":
		return func() { at().Slow(f.slow) }, func() { srv.Slow(0); r.note("heal: %s no longer slow", srv.Name()) }
	case "restart-empty":
		return func() { at().Crash() }, func() { srv.Restart(nil); r.note("heal: %s restarted empty", srv.Name()) }
	case "restart-snapshot":
		return func() { at().Crash() }, func() {
			srv.Restart(r.snaps[i])
			r.note("heal: %s restarted from its snapshot", srv.Name())
		}
	case "flushall":
		return func() { at().FlushAll() }, nil
	case "reload":
		return func() { at().Reload(r.snaps[i]) }, nil
	case "failover":
		return func() { r.failover(f) }, nil
	case "replicaof":
		var m *sim.Server
		return func() { m = r.primary[f.other]; at().ReplicaOf(m, r.s.lag[f.node]) }, func() {
			srv.Promote(false)
			r.note("heal: REPLICAOF NO ONE on %s", srv.Name())
		}
	case "client-pause":
		p := r.procs[f.client]
		return func() {
				p.freeze(true)
				for n := range r.s.nodes {
					r.w.Partition(pname, addr(n))
				}
				r.emit(wire.Event{Ev: checker.Pause, PID: p.pid})
			}, func() {
				for n := range r.s.nodes {
					r.w.Heal(pname, addr(n))
				}
				r.emit(wire.Event{Ev: checker.Resume, PID: p.pid})
				p.freeze(false)
				r.note("heal: %s resumed", pname)
			}
	case "lose-reply":
		return func() { r.w.LoseReplies(pname, addr(f.node), f.n) }, nil
	case "duplicate":
		return func() { r.w.Duplicate(pname, addr(f.node), 1, f.d) }, nil
	case "clock-drift":
		return func() { at().ClockRate(f.rate) }, nil
	case "clock-jump", "clock-step":
		return func() { at().ClockJump(f.d) }, nil
	}
	panic("unknown fault " + f.kind)
}

// failover promotes the node's replica, routes the node's address to it,
// and makes the old master its replica (a full resync), as Sentinel does.
// A second failover of the same node is a failback.
func (r *run) failover(f fault) {
	p, sp := r.primary[f.node], r.spare[f.node]
	if !sp.Up() || sp.Master() != p {
		r.note("  (skipped: %s is not a replica of %s)", sp.Name(), p.Name())
		return
	}
	sp.Promote(f.lose)
	r.w.Route(addr(f.node), sp)
	if p.Up() {
		p.ReplicaOf(sp, r.s.lag[f.node])
	}
	r.primary[f.node], r.spare[f.node] = sp, p
}

// healAll ends every fault that can end, so that the processes can stop.
func (r *run) healAll() {
	for _, s := range append(slices.Clone(r.primary), r.spare...) {
		s.Resume()
		s.Slow(0)
	}
	for _, p := range r.procs {
		for n := range r.s.nodes {
			r.w.Heal(p.name, addr(n))
		}
		p.freeze(false)
	}
}

// check runs the checkers over the history.
func (r *run) check() result {
	r.mu.Lock()
	evs := slices.Clone(r.evs)
	trace := slices.Clone(r.trace)
	r.mu.Unlock()
	ts, orphans := checker.Terms(evs)
	var v []string
	if r.s.kind == "permits" {
		v = append(v, checker.Semaphore(ts, orphans, r.s.permits, !r.s.noFencing)...)
	} else {
		v = append(v, checker.C1(ts, orphans)...)
		if !r.s.noFencing {
			v = append(v, checker.C2(ts)...)
		}
	}
	v = append(v, checker.C4(ts, 0)...)
	st := r.w.Stats()
	v = append(v, st.Violations...)
	for _, u := range st.Unknown {
		v = append(v, "unknown command sent to a simulated server: "+u)
	}
	var d strings.Builder
	for _, ev := range evs {
		switch ev.Ev {
		case wire.Elected, wire.Demoted:
			fmt.Fprintf(&d, "%s %s %d|", ev.Ev, ev.ID, ev.Token)
		}
	}
	return result{violations: v, trace: r.history(evs, trace), stats: st, terms: len(ts), handovers: r.handovers, digest: d.String(),
		overlap: checker.LongestOverlap(ts)}
}

// history merges the notes and the terms' events into one trace.
func (r *run) history(evs []wire.Event, notes []string) []string {
	type line struct {
		t int64
		s string
	}
	var ls []line
	for _, n := range notes {
		d, _ := time.ParseDuration(strings.TrimSpace(n[:9]))
		ls = append(ls, line{int64(d), n})
	}
	name := map[int]string{}
	for _, p := range r.procs {
		name[p.pid] = p.name
	}
	for _, ev := range evs {
		var s string
		switch ev.Ev {
		case wire.Elected:
			s = fmt.Sprintf("%s holds, token %d, valid until %s", ev.ID, ev.Token, time.Duration(ev.VU))
			if r.s.permits > 0 {
				s += fmt.Sprintf(", permit %d", ev.Permit)
			}
		case wire.Stepdown:
			s = fmt.Sprintf("%s sees its term (token %d) end", name[ev.PID], ev.Token)
		case wire.Demoted:
			s = fmt.Sprintf("%s demoted (token %d): %s", name[ev.PID], ev.Token, ev.Cause)
		case checker.Pause:
			s = fmt.Sprintf("%s paused", name[ev.PID])
		default:
			continue
		}
		ls = append(ls, line{ev.T, fmt.Sprintf("%9s  %s", time.Duration(ev.T).Round(time.Microsecond), s)})
	}
	slices.SortStableFunc(ls, func(a, b line) int { return int(a.t - b.t) })
	out := make([]string, len(ls))
	for i, l := range ls {
		out[i] = l.s
	}
	return out
}
