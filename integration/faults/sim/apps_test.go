package sim

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redlease/redlease/election"
	"github.com/redlease/redlease/internal/testing/checker/wire"
	"github.com/redlease/redlease/lease"
	"github.com/redlease/redlease/redlock"
)

// proc is one client process: a go-redis client per node, a redlock
// client, and its application (an election candidate, a lease holder, or a
// raw lock user) that records what it believes in the history.
type proc struct {
	r     *run
	idx   int
	pid   int
	name  string
	rnd   *lockedRand
	nodes []*redis.Client
	rc    *redlock.Client

	mu     sync.Mutex
	frozen chan struct{} // non-nil while the process is paused: closed on resume
}

func (r *run) newProc(ctx context.Context, i int) *proc {
	p := &proc{r: r, idx: i, pid: i + 1, name: fmt.Sprintf("c%d", i+1), rnd: newLockedRand(r.s.seed, uint64(i+1))}
	var ns []redis.UniversalClient
	for n := range r.s.nodes {
		c := r.redisClient(p.name, n)
		p.nodes = append(p.nodes, c)
		ns = append(ns, c)
	}
	rc, err := redlock.New(ctx, r.redlockConfig(p.rnd), ns...)
	if err != nil {
		panic(err)
	}
	p.rc = rc
	return p
}

func (p *proc) close() {
	_ = p.rc.Close()
	for _, c := range p.nodes {
		_ = c.Close()
	}
}

// freeze pauses (or resumes) the application's own code, as SIGSTOP
// would; the library's goroutines go on (see README: what the simulator's
// client pause is).
func (p *proc) freeze(on bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case on && p.frozen == nil:
		p.frozen = make(chan struct{})
	case !on && p.frozen != nil:
		close(p.frozen)
		p.frozen = nil
	}
}

// gate waits while the process is paused.
func (p *proc) gate() {
	p.mu.Lock()
	f := p.frozen
	p.mu.Unlock()
	if f != nil {
		<-f
	}
}

// margin is the SafetyMargin of the leases and terms (lease.Config's
// default, set explicitly so that the events can report each deadline:
// ValidUntil - margin).
func (p *proc) margin() time.Duration { return p.r.s.ttl / 20 }

func (p *proc) ignoreDeadline() bool { return p.r.s.control == "ignore-deadline" }

func (p *proc) work(ctx context.Context) {
	switch p.r.s.kind {
	case "election":
		p.elect(ctx)
	case "lease", "permits":
		p.leases(ctx)
	default:
		p.locks(ctx)
	}
}

// sleep waits d or until ctx ends; false when ctx ended.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// term is what the application knows of the term it holds.
type held struct {
	ts, vu int64
	token  uint64
}

// sampler records the application's beliefs every few ms while it runs:
// look() says whether it believes it holds, in which term, and that term's
// validity now.
func (p *proc) sampler(ctx context.Context, look func() (held, bool)) {
	var last held
	for sleep(ctx, p.rnd.dur(5*time.Millisecond, 30*time.Millisecond)) {
		p.gate()
		t := p.r.now()
		h, ok := look()
		if !ok {
			continue
		}
		if h.ts == last.ts && h.vu != last.vu && h.vu != 0 {
			p.r.emit(wire.Event{Ev: wire.Refresh, ID: p.name, PID: p.pid, TS: h.ts, Token: h.token, VU: h.vu})
		}
		last = h
		p.r.emit(wire.Event{Ev: wire.Belief, ID: p.name, PID: p.pid, TS: h.ts, First: t, Last: t, N: 1})
	}
}

// elect runs an election candidate.
func (p *proc) elect(ctx context.Context) {
	var flag atomic.Pointer[held] // the control's own belief
	var e *election.Elector
	cfg := election.Config{Lease: lease.Config{ID: p.name, TTL: p.r.s.ttl, SafetyMargin: p.margin()}, OnElected: func(tctx context.Context, t election.Term) {
		p.gate()
		h := &held{ts: p.r.of(t.Start), vu: p.r.of(t.ValidUntil()), token: t.Token}
		p.r.emit(wire.Event{Ev: wire.Elected, ID: p.name, PID: p.pid, TS: h.ts, Token: t.Token, VU: h.vu, DL: p.r.of(t.ValidUntil().Add(-p.margin()))})
		p.r.elected(p.name)
		if p.ignoreDeadline() {
			flag.Store(h)
		}
		// Resign after a while, so that terms change hands.
		resign := time.NewTimer(p.rnd.dur(p.r.s.ttl/2, 4*p.r.s.ttl))
		defer resign.Stop()
		select {
		case <-tctx.Done():
		case <-resign.C:
			p.gate()
			p.resign(tctx, e)
			<-tctx.Done()
		}
		if p.ignoreDeadline() {
			return // NEGATIVE CONTROL: believes until OnDemoted
		}
		p.r.emit(wire.Event{Ev: wire.Stepdown, ID: p.name, PID: p.pid, TS: h.ts, Token: t.Token})
	},
		OnDemoted: func(t election.Term, cause error) {
			p.gate()
			ts := p.r.of(t.Start)
			if p.ignoreDeadline() {
				flag.Store(nil)
				p.r.emit(wire.Event{Ev: wire.Stepdown, ID: p.name, PID: p.pid, TS: ts, Token: t.Token})
			}
			p.r.emit(wire.Event{Ev: wire.Demoted, ID: p.name, PID: p.pid, TS: ts, Token: t.Token, VU: p.r.of(t.ValidUntil()), Cause: fmt.Sprint(cause)})
		}}
	p.steerConfig(&cfg)
	e, err := election.New(p.rc, "elect", cfg)
	if err != nil {
		panic(err)
	}
	var wg sync.WaitGroup
	wg.Go(func() {
		p.sampler(ctx, func() (held, bool) { return p.electBelief(e, &flag) })
	})
	_ = e.Run(ctx)
	wg.Wait()
}

// electBelief is what candidate e believes it holds; with the negative
// control, flag's term (set from OnElected to OnDemoted).
func (p *proc) electBelief(e *election.Elector, flag *atomic.Pointer[held]) (held, bool) {
	if p.ignoreDeadline() {
		if h := flag.Load(); h != nil {
			if t, ok := e.Term(); ok && p.r.of(t.Start) == h.ts {
				h.vu = p.r.of(t.ValidUntil())
			}
			return *h, true
		}
		return held{}, false
	}
	if !e.IsLeader() {
		return held{}, false
	}
	t, ok := e.Term()
	if !ok {
		return held{}, false
	}
	return held{ts: p.r.of(t.Start), vu: p.r.of(t.ValidUntil()), token: t.Token}, true
}

// leases acquires a lease (a semaphore's permit, in schedules of kind
// "permits"), holds it a while, releases it, and again.
func (p *proc) leases(ctx context.Context) {
	var cur atomic.Pointer[lease.Lease]
	var believed atomic.Pointer[held]
	var wg sync.WaitGroup
	wg.Go(func() {
		p.sampler(ctx, func() (held, bool) {
			l := cur.Load()
			if l == nil {
				return held{}, false
			}
			h := believed.Load()
			if h == nil {
				return held{}, false
			}
			c := *h
			c.vu = p.r.of(l.ValidUntil())
			if p.ignoreDeadline() {
				return c, true // NEGATIVE CONTROL: believes until it releases
			}
			return c, l.Held()
		})
	})
	defer wg.Wait()
	for ctx.Err() == nil {
		p.gate()
		l, err := lease.Acquire(ctx, p.rc, "lease", lease.Config{TTL: p.r.s.ttl, ID: p.name, SafetyMargin: p.margin(), Permits: p.r.s.permits})
		if err != nil {
			sleep(ctx, p.rnd.dur(10*time.Millisecond, 100*time.Millisecond)) // (a final error returns at once)
			continue
		}
		h := &held{ts: p.r.now(), vu: p.r.of(l.ValidUntil()), token: l.Token()}
		p.r.emit(wire.Event{Ev: wire.Elected, ID: p.name, PID: p.pid, TS: h.ts, Token: h.token, VU: h.vu, DL: p.r.of(l.ValidUntil().Add(-p.margin())),
			Permit: l.Holder().Permit})
		believed.Store(h)
		cur.Store(l)
		p.holdLease(ctx, l, h, &believed)
		rctx, cancel := context.WithTimeout(context.Background(), time.Second)
		_ = l.Release(rctx)
		cancel()
		cur.Store(nil)
		sleep(ctx, p.rnd.dur(0, p.r.s.ttl))
	}
}

// holdLease holds l, believed as h, a while: until it is lost (never,
// with the negative control, which believes until it releases), its hold
// ends or ctx ends; then the belief steps down.
func (p *proc) holdLease(ctx context.Context, l *lease.Lease, h *held, believed *atomic.Pointer[held]) {
	hold := time.NewTimer(p.rnd.dur(p.r.s.ttl/2, 3*p.r.s.ttl))
	defer hold.Stop()
	stepdown := func(cause string) {
		believed.Store(nil)
		p.r.emit(wire.Event{Ev: wire.Stepdown, ID: p.name, PID: p.pid, TS: h.ts, Token: h.token})
		p.r.emit(wire.Event{Ev: wire.Demoted, ID: p.name, PID: p.pid, TS: h.ts, Token: h.token, VU: p.r.of(l.ValidUntil()), Cause: cause})
	}
	done := l.Context().Done()
	if p.ignoreDeadline() {
		done = nil
	}
	select {
	case <-done:
		p.gate()
		stepdown(fmt.Sprint(context.Cause(l.Context())))
	case <-hold.C:
		p.gate()
		stepdown("released")
	case <-ctx.Done():
		stepdown("stopped")
	}
}

// locks takes the raw redlock lock, extends it every TTL/3 while it holds
// it a while, and releases it.
func (p *proc) locks(ctx context.Context) {
	var believed atomic.Pointer[held]
	var curLock atomic.Pointer[redlock.Lock]
	var wg sync.WaitGroup
	wg.Go(func() {
		p.sampler(ctx, func() (held, bool) {
			h, l := believed.Load(), curLock.Load()
			if h == nil || l == nil {
				return held{}, false
			}
			c := *h
			c.vu = p.r.of(l.ValidUntil())
			if p.ignoreDeadline() {
				return c, true // NEGATIVE CONTROL: believes until an extend fails
			}
			return c, l.Held()
		})
	})
	defer wg.Wait()
	ttl := p.r.s.ttl
	for ctx.Err() == nil {
		p.gate()
		l, err := p.rc.Acquire(ctx, "lock", ttl)
		if err != nil {
			sleep(ctx, p.rnd.dur(10*time.Millisecond, 100*time.Millisecond)) // (a final error returns at once)
			continue
		}
		h := &held{ts: p.r.now(), vu: p.r.of(l.ValidUntil()), token: l.Token()}
		p.r.emit(wire.Event{Ev: wire.Elected, ID: p.name, PID: p.pid, TS: h.ts, Token: h.token, VU: h.vu, DL: h.vu})
		believed.Store(h)
		curLock.Store(l)
		cause := p.holdLock(ctx, l)
		believed.Store(nil)
		p.r.emit(wire.Event{Ev: wire.Stepdown, ID: p.name, PID: p.pid, TS: h.ts, Token: h.token})
		p.r.emit(wire.Event{Ev: wire.Demoted, ID: p.name, PID: p.pid, TS: h.ts, Token: h.token, VU: p.r.of(l.ValidUntil()), Cause: cause})
		rctx, cancel := context.WithTimeout(context.Background(), time.Second)
		_ = l.Release(rctx)
		cancel()
		curLock.Store(nil)
		sleep(ctx, p.rnd.dur(0, ttl))
	}
}

// holdLock holds l for a while, extending it every TTL/3; it returns why
// the holder stopped: its validity ran out (its own timer), an extend
// failed, the hold ended, or ctx. Under the ignore-deadline control it
// has no validity timer: it believes until an extend fails.
func (p *proc) holdLock(ctx context.Context, l *redlock.Lock) string {
	ttl := p.r.s.ttl
	hold := time.NewTimer(p.rnd.dur(ttl/2, 3*ttl))
	defer hold.Stop()
	for {
		var validC <-chan time.Time
		if !p.ignoreDeadline() {
			valid := time.NewTimer(time.Until(l.ValidUntil()))
			defer valid.Stop()
			validC = valid.C
		}
		renew := time.NewTimer(ttl / 3)
		select {
		case <-validC:
			renew.Stop()
			return "validity ended"
		case <-hold.C:
			renew.Stop()
			p.gate()
			return "released"
		case <-ctx.Done():
			renew.Stop()
			return "stopped"
		case <-renew.C:
		}
		p.gate()
		extended := make(chan error, 1)
		go func() { extended <- l.Extend(ctx, ttl) }()
		select {
		case <-validC:
			return "validity ended during an extend"
		case err := <-extended:
			if err != nil {
				return "extend failed: " + err.Error()
			}
		case <-ctx.Done():
			return "stopped"
		}
	}
}
