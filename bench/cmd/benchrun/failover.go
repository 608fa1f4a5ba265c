package main

// The failover cases (issue 8): leader election among numCandidates
// candidates on the 5 servers, each candidate with clients of its own (as
// separate processes would have), redlease's election.Elector against a
// leader loop on redsync written the way redsync's README suggests.
//
//   - graceful: the leader hands over (Elector.Resign; redsync: Unlock);
//     measured from that call to the next leader's start (OnElected;
//     redsync: the return of a standby's Lock).
//   - crash: the leader is cut off from every server right after it was
//     elected (its proxies reset every connection: it can neither refresh
//     nor release, as a dead process), a full TTL to wait; measured from
//     the cut to the next leader's start.

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/go-redsync/redsync/v4"
	redsyncredis "github.com/go-redsync/redsync/v4/redis"
	rsgoredis "github.com/go-redsync/redsync/v4/redis/goredis/v9"
	"github.com/redis/go-redis/v9"

	"github.com/redlease/redlease/election"
	"github.com/redlease/redlease/lease"
	"github.com/redlease/redlease/redlock"
)

const (
	numCandidates = 3
	// failoverTTL is the lease TTL of both libraries in both failover
	// cases (redlease election.Config.Lease.TTL; redsync WithExpiry).
	failoverTTL = 500 * time.Millisecond
	// failoverRetryDelay is redlease's RetryDelay (lease.Config's default,
	// set explicitly); redsync keeps its own retry delay (random 50-250ms,
	// 32 tries per Lock).
	failoverRetryDelay = 100 * time.Millisecond
	// redleaseResignDelay is how long a redlease leader that resigned
	// stands aside: its default, 2*RetryDelay.
	redleaseResignDelay = 2 * failoverRetryDelay
	// redsyncStandAside is how long a redsync leader that unlocked waits
	// before it calls Lock again: longer than redsync's longest retry delay
	// (250ms), so that a standby takes over (its standbys sleep between
	// tries: an ex-leader calling Lock at once would win again).
	redsyncStandAside = 300 * time.Millisecond
	// paceMargin: graceful handovers are paced stand-aside + paceMargin
	// apart, so that the last leader stands by again: every handover finds
	// the 2 other candidates campaigning.
	paceMargin = 50 * time.Millisecond
	// failoverWait: a handover or takeover not seen within it fails (and
	// ends the library's measurement of the round).
	failoverWait = 5 * time.Second
	// crashTarget is redlease's target for a crash takeover.
	crashTarget = failoverTTL + failoverRetryDelay*3/2 + 100*time.Millisecond
)

// electedAt is a term's start: which candidate, and when (in OnElected, or
// right after Lock returned).
type electedAt struct {
	cand int
	at   time.Time
}

// cluster is the running candidates of one election.
type cluster struct {
	elected chan electedAt // every term, as it starts
	// resign makes candidate i, the leader, hand over; it returns when the
	// handover call returned, with the moment it was made.
	resign func(i int) (time.Time, error)
	// pace is the least time between two graceful handovers: the
	// ex-leader's stand-aside, and a margin.
	pace time.Duration
	// stop ends every candidate (a leader hands over) and reports whether
	// they all returned within stopWait.
	stop func() bool
}

const stopWait = 10 * time.Second

// notify reports a term's start; never blocks (the buffer is far larger
// than the terms of one measurement between two reads).
func (c *cluster) notify(i int) {
	select {
	case c.elected <- electedAt{i, time.Now()}:
	default:
	}
}

// next waits at most d for the next term's start.
func (c *cluster) next(d time.Duration) (electedAt, bool) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case ev := <-c.elected:
		return ev, true
	case <-t.C:
		return electedAt{}, false
	}
}

// latest drops the notices already queued (terms that began without a
// handover or crash of the harness: a term lost under load) and returns
// the leader they leave, or leader if there were none.
func (c *cluster) latest(id string, leader int) int {
	for {
		select {
		case ev := <-c.elected:
			fmt.Fprintf(os.Stderr, "%s: candidate %d was elected unprompted (candidate %d was leading)\n", id, ev.cand, leader)
			leader = ev.cand
		default:
			return leader
		}
	}
}

// candidateClients are the failover candidates' clients: per candidate, 5
// go-redis clients straight to the servers and 5 through the candidate's
// own proxies (the crash case), and a bootstrapped redlock.Client over each
// set.
type candidateClients struct {
	direct, proxied     [][]*redis.Client
	rlDirect, rlProxied []*redlock.Client
}

// pick returns a if cond holds, else b.
func pick[T any](cond bool, a, b T) T {
	if cond {
		return a
	}
	return b
}

func (e *env) candidates(ctx context.Context, direct []string, proxied [][]string) (*candidateClients, error) {
	cc := &candidateClients{}
	dial := func(addrs []string) []*redis.Client {
		var out []*redis.Client
		for _, a := range addrs {
			c := redis.NewClient(&redis.Options{Addr: a})
			e.closers = append(e.closers, func() { _ = c.Close() })
			out = append(out, c)
		}
		return out
	}
	rl := func(clients []*redis.Client) (*redlock.Client, error) {
		nodes := make([]redis.UniversalClient, len(clients))
		for i, c := range clients {
			nodes[i] = c
		}
		c, err := redlock.New(ctx, redlock.Config{}, nodes...)
		if err != nil {
			return nil, fmt.Errorf("failover candidate: %w", err)
		}
		e.closers = append(e.closers, func() { _ = c.Close() })
		if err := c.Bootstrap(ctx); err != nil {
			return nil, fmt.Errorf("failover candidate: bootstrap: %w", err)
		}
		return c, nil
	}
	for i := range numCandidates {
		d, p := dial(direct), dial(proxied[i])
		rd, err := rl(d)
		if err != nil {
			return nil, err
		}
		rp, err := rl(p)
		if err != nil {
			return nil, err
		}
		cc.direct, cc.proxied = append(cc.direct, d), append(cc.proxied, p)
		cc.rlDirect, cc.rlProxied = append(cc.rlDirect, rd), append(cc.rlProxied, rp)
	}
	return cc, nil
}

// failoverLibs are the two libraries of the failover cases.
func failoverLibs(cc *candidateClients) []*lib {
	return []*lib{
		{name: "redlease (election.Elector)", short: "redlease", kind: "redlease", nodes: "5 servers", elect: redleaseElection(cc)},
		{name: "redsync leader loop", short: "redsync", kind: "peer", nodes: "5 servers", elect: redsyncElection(cc)},
	}
}

// redleaseElection: one election.Elector per candidate, TTL failoverTTL,
// RetryDelay failoverRetryDelay, every other setting its default;
// OnElected reports the term's start and waits for the term's end.
func redleaseElection(cc *candidateClients) func(name string, proxied bool) (*cluster, error) {
	return func(name string, proxied bool) (*cluster, error) {
		rcs := pick(proxied, cc.rlProxied, cc.rlDirect)
		c := &cluster{elected: make(chan electedAt, 256), pace: redleaseResignDelay + paceMargin}
		els := make([]*election.Elector, len(rcs))
		for i, rc := range rcs {
			cfg := election.Config{
				Lease: lease.Config{ID: fmt.Sprintf("c%d", i), TTL: failoverTTL, RetryDelay: failoverRetryDelay},
				OnElected: func(ctx context.Context, _ election.Term) {
					c.notify(i)
					<-ctx.Done()
				},
			}
			el, err := election.New(rc, name, cfg)
			if err != nil {
				return nil, err
			}
			els[i] = el
		}
		ctx, cancel := context.WithCancel(context.Background())
		var wg sync.WaitGroup
		for _, el := range els {
			wg.Go(func() { _ = el.Run(ctx) })
		}
		c.resign = func(i int) (time.Time, error) {
			rctx, rcancel := context.WithTimeout(context.Background(), failoverWait)
			defer rcancel()
			t0 := time.Now()
			return t0, els[i].Resign(rctx)
		}
		c.stop = func() bool { cancel(); return returnsWithin(stopWait, wg.Wait) }
		return c, nil
	}
}

// resigned is a redsync leader's answer to a resign request.
type resigned struct {
	at  time.Time // just before Unlock
	err error
}

// redsyncElection: per candidate, a redsync over its 5 clients and one
// Mutex (WithExpiry(failoverTTL), every other option its default), run by
// redsyncCandidate.
func redsyncElection(cc *candidateClients) func(name string, proxied bool) (*cluster, error) {
	return func(name string, proxied bool) (*cluster, error) {
		sets := pick(proxied, cc.proxied, cc.direct)
		c := &cluster{elected: make(chan electedAt, 256), pace: redsyncStandAside + paceMargin}
		ctx, cancel := context.WithCancel(context.Background())
		var wg sync.WaitGroup
		reqs := make([]chan chan resigned, len(sets))
		for i, clients := range sets {
			pools := make([]redsyncredis.Pool, len(clients))
			for j, cl := range clients {
				pools[j] = rsgoredis.NewPool(cl)
			}
			m := redsync.New(pools...).NewMutex(name, redsync.WithExpiry(failoverTTL))
			reqs[i] = make(chan chan resigned)
			wg.Go(func() { redsyncCandidate(ctx, m, reqs[i], func() { c.notify(i) }) })
		}
		c.resign = func(i int) (time.Time, error) {
			reply := make(chan resigned, 1)
			t := time.NewTimer(failoverWait)
			defer t.Stop()
			select {
			case reqs[i] <- reply:
			case <-t.C:
				return time.Time{}, fmt.Errorf("redsync candidate %d is not leading", i)
			}
			select {
			case r := <-reply:
				return r.at, r.err
			case <-t.C:
				return time.Time{}, fmt.Errorf("redsync candidate %d: Unlock did not return within %s", i, failoverWait)
			}
		}
		c.stop = func() bool { cancel(); return returnsWithin(stopWait, wg.Wait) }
		return c, nil
	}
}

// redsyncCandidate is one candidate of the leader loop redsync's README
// suggests: call Lock (its default 32 tries, 50-250ms apart) again and
// again until it holds the mutex; then lead, extending every TTL/3 (as
// redlease refreshes), until an Extend fails (the lock is lost: back to
// Lock), it is asked to resign (Unlock, then stand aside
// redsyncStandAside), or ctx ends (Unlock).
func redsyncCandidate(ctx context.Context, m *redsync.Mutex, resign <-chan chan resigned, elected func()) {
	for ctx.Err() == nil {
		if err := m.LockContext(ctx); err != nil {
			continue // its tries ran out (or ctx ended): call again
		}
		elected()
		redsyncLead(ctx, m, resign)
	}
}

func redsyncLead(ctx context.Context, m *redsync.Mutex, resign <-chan chan resigned) {
	t := time.NewTicker(failoverTTL / 3)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			_, _ = m.UnlockContext(context.Background())
			return
		case reply := <-resign:
			at := time.Now()
			ok, err := m.UnlockContext(ctx)
			if !ok && err == nil {
				err = errors.New("unlock: no majority")
			}
			reply <- resigned{at, err}
			st := time.NewTimer(redsyncStandAside)
			select {
			case <-st.C:
			case <-ctx.Done():
				st.Stop()
			}
			return
		case <-t.C:
			if ok, _ := m.ExtendContext(ctx); !ok {
				return // lost
			}
		}
	}
}

// failover measures s.g handovers (graceful) or takeovers (crash) of
// library l: it starts the candidates of a new election, waits for the
// first leader, then hands over or crashes the leader s.g times in a row,
// then stops the candidates.
func (h *harness) failover(s *section, l *lib, prefix string, round int) {
	r := h.result(s.id, l.short)
	var (
		lat      []int64
		fails    int
		firstErr error
	)
	fail := func(err error) {
		if fails++; firstErr == nil {
			firstErr = err
		}
	}
	c, err := l.elect(prefix+"election", s.kind == kindCrash)
	if err != nil {
		fail(err)
	} else {
		if ev, ok := c.next(failoverWait); !ok {
			fail(fmt.Errorf("no leader within %s of the start", failoverWait))
		} else if s.kind == kindCrash {
			lat = h.crashes(s, c, ev.cand, fail)
		} else {
			lat = h.handovers(s, c, ev.cand, fail)
		}
		if !c.stop() {
			h.hung(s, l, "stopping the candidates", round)
		}
	}
	r.lat = append(r.lat, lat...)
	slices.Sort(r.lat)
	r.ops += len(lat)
	r.fails += fails
	if firstErr != nil && r.firstErr == "" {
		r.firstErr = firstErr.Error()
		fmt.Fprintf(os.Stderr, "%s/%s: %d failures, first: %v\n", s.id, l.short, fails, firstErr)
	}
}

// handovers: one warm-up handover, then s.g measured ones, paced c.pace
// apart; from the resign call to the next leader's start.
func (h *harness) handovers(s *section, c *cluster, leader int, fail func(error)) []int64 {
	lat := make([]int64, 0, s.g)
	var last time.Time
	for k := -1; k < s.g; k++ {
		time.Sleep(time.Until(last.Add(c.pace)))
		leader = c.latest(s.id, leader)
		t0, err := c.resign(leader)
		if t0.IsZero() {
			fail(err)
			return lat
		}
		if err != nil {
			// Some nodes did not answer the release: the handover waits
			// for their copies to lapse.
			fmt.Fprintf(os.Stderr, "%s: resign: %v\n", s.id, err)
		}
		last = t0
		ev, ok := c.next(failoverWait)
		if !ok {
			fail(fmt.Errorf("no leader within %s of the handover", failoverWait))
			return lat
		}
		if ev.cand == leader {
			fail(fmt.Errorf("candidate %d resigned and was elected again", leader))
			continue
		}
		if k >= 0 {
			lat = append(lat, int64(ev.at.Sub(t0)))
		}
		leader = ev.cand
	}
	return lat
}

// crashes: s.g times, cut the leader off right after it was elected,
// wait for the next leader, restore the cut one (it campaigns again).
func (h *harness) crashes(s *section, c *cluster, leader int, fail func(error)) []int64 {
	lat := make([]int64, 0, s.g)
	for range s.g {
		leader = c.latest(s.id, leader)
		t0 := time.Now()
		err := s.cut(leader)
		var (
			ev electedAt
			ok bool
		)
		if err == nil {
			ev, ok = c.next(failoverWait)
		}
		if rerr := s.restore(leader); err == nil {
			err = rerr
		}
		switch {
		case err != nil:
			fail(err)
			return lat
		case !ok:
			fail(fmt.Errorf("no takeover within %s of the crash", failoverWait))
			return lat
		case ev.cand == leader:
			fail(fmt.Errorf("candidate %d was elected while cut off", leader))
			return lat
		}
		lat = append(lat, int64(ev.at.Sub(t0)))
		leader = ev.cand
	}
	return lat
}

// perRound spreads total over n rounds.
func perRound(total, n int) int { return max(1, (total+n-1)/max(1, n)) }

// failoverSections are the election cases, measured after the lock cases
// in every round.
func failoverSections(e *env, o options) []*section {
	return []*section{
		{id: "failover-graceful", title: "Graceful handover, 3 candidates", kind: kindGraceful,
			g: perRound(o.handovers, o.rounds), libs: e.failover},
		{id: "failover-crash", title: "Crash takeover, 3 candidates", kind: kindCrash,
			g: perRound(o.crashes, o.rounds), libs: e.failover, cut: e.cutCandidate, restore: e.restoreCandidate},
	}
}

// failoverTargets writes the failover rows of the targets table.
func failoverTargets(w func(string, ...any), get func(sec, lib string) *result) {
	g, gs := get("failover-graceful", "redlease"), get("failover-graceful", "redsync")
	rs := func(r *result) string {
		if r == nil {
			return "not run"
		}
		return fmt.Sprintf("p50 %s, p99 %s, max %s (%d)", dur(r.p(0.5)), dur(r.p(0.99)), dur(r.max()), r.ops)
	}
	quot := func(a, b *result, q float64) float64 {
		if a == nil || b == nil {
			return math.NaN()
		}
		return float64(a.p(q)) / float64(b.p(q))
	}
	v := "n/a"
	if g != nil {
		v = metMissed(g.p(0.5) <= 2*time.Millisecond && g.p(0.99) <= 10*time.Millisecond)
	}
	w("| Graceful handover (Resign → the next leader's OnElected; 3 candidates, TTL %s): p50 ≤ 2ms and p99 ≤ 10ms | redlease %s; redsync leader loop (Unlock → a standby's Lock returns) %s; redlease ÷ redsync: p50 %s, p99 %s | %s |\n",
		failoverTTL, rs(g), rs(gs), ratio(quot(g, gs, 0.5)), ratio(quot(g, gs, 0.99)), v)
	c, cs := get("failover-crash", "redlease"), get("failover-crash", "redsync")
	v = "n/a"
	if c != nil {
		v = metMissed(c.max() < crashTarget)
	}
	w("| Crash takeover (leader cut off right after its election, never releases) < TTL + 1.5 × RetryDelay + 100ms = %s (TTL %s, RetryDelay %s), every takeover (max) | redlease %s; redsync leader loop (same TTL, its own retry delay) %s; redlease ÷ redsync: p50 %s, p99 %s | %s |\n",
		crashTarget, failoverTTL, failoverRetryDelay, rs(c), rs(cs), ratio(quot(c, cs, 0.5)), ratio(quot(c, cs, 0.99)), v)
}

// failoverReport writes the failover section.
func failoverReport(w func(string, ...any), h *harness, bySec map[string]*section, m meta) {
	w("## Failover (election)\n\n")
	w("%d candidates of one election on the 5 servers, each with clients of its own (as separate processes would have); a new election (key) for every library in every round. "+
		"**redlease**: one `election.Elector` per candidate, TTL %s, RetryDelay %s, every other setting its default (ResignDelay %s); OnElected reports the term's start and waits for its end. "+
		"**redsync leader loop**, as redsync's README suggests: each candidate calls `LockContext` (its default 32 tries, 50-250ms apart) again and again until it holds the mutex (`WithExpiry(%s)`, every other option its default); the leader `ExtendContext`s every TTL/3 until an Extend fails. "+
		"Graceful: the leader calls `Resign` (redsync: `UnlockContext`, then it waits %s, longer than redsync's longest retry delay, before calling Lock again, so that a standby takes over); measured from that call to the next leader's start (OnElected; redsync: a standby's Lock returns). "+
		"Handovers are paced stand-aside + %s apart, so that each finds the 2 other candidates campaigning; one warm-up handover per round is not measured. "+
		"Crash: right after a candidate was elected, its own proxies (one per server, in the proxy child) reset every connection and refuse new ones, so it can neither refresh nor release, as if its process died (a full TTL to wait: the worst case); measured from that cut to the next leader's start; the cut candidate is then restored and campaigns again, and the new leader is cut next. "+
		"Counts: %d handovers and %d crashes per library in all (-handovers, -crashes), spread over the %d rounds (%d and %d per round).\n\n",
		numCandidates, failoverTTL, failoverRetryDelay, redleaseResignDelay, failoverTTL, redsyncStandAside, paceMargin,
		m.opts.handovers, m.opts.crashes, m.opts.rounds, perRound(m.opts.handovers, m.opts.rounds), perRound(m.opts.crashes, m.opts.rounds))
	w("| Library | Case | Measured | p50 | p99 | max | min | p50 ÷ redsync | p99 ÷ redsync |\n|---|---|---|---|---|---|---|---|---|\n")
	for _, id := range []string{"failover-graceful", "failover-crash"} {
		s := bySec[id]
		if s == nil {
			continue
		}
		label := map[string]string{"failover-graceful": "graceful handover", "failover-crash": "crash takeover"}[id]
		unit := map[string]string{"failover-graceful": "handovers", "failover-crash": "crashes"}[id]
		peer := h.results[id]["redsync"]
		for _, l := range s.libs {
			r := h.results[id][l.short]
			name := l.name
			if l.kind == "redlease" {
				name = "**" + name + "**"
			}
			if r != nil && r.fails > 0 {
				name += fmt.Sprintf(" (%d failed)", r.fails)
			}
			if r == nil || r.ops == 0 {
				w("| %s | %s | not run |\n", name, label)
				continue
			}
			q50, q99 := math.NaN(), math.NaN()
			if peer != nil && peer.ops > 0 {
				q50, q99 = float64(r.p(0.5))/float64(peer.p(0.5)), float64(r.p(0.99))/float64(peer.p(0.99))
			}
			w("| %s | %s | %d %s | %s | %s | %s | %s | %s | %s |\n", name, label, r.ops, unit,
				dur(r.p(0.5)), dur(r.p(0.99)), dur(r.max()), dur(time.Duration(r.lat[0])), ratio(q50), ratio(q99))
		}
	}
	w("\nWith 100 samples or fewer, p99 is the largest. redlease's crash takeover target is TTL + 1.5 × RetryDelay + 100ms = %s; the standbys try again 1ms after the leader's key is due to lapse.\n\n", crashTarget)
}

// cutCandidate disables candidate i's proxies (a crash: every connection
// reset, new ones refused); restoreCandidate enables them again.
func (e *env) cutCandidate(i int) error {
	for _, k := range e.candProxies[i] {
		if err := e.proxyCtl.disable(k); err != nil {
			return err
		}
	}
	return nil
}

func (e *env) restoreCandidate(i int) error {
	for _, k := range e.candProxies[i] {
		if err := e.proxyCtl.enable(k); err != nil {
			return err
		}
	}
	return nil
}
