package election

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/redlease/redlease/internal/backoff"
	"github.com/redlease/redlease/internal/notice"
	"github.com/redlease/redlease/internal/reach"
	"github.com/redlease/redlease/internal/redlockx"
	"github.com/redlease/redlease/internal/splitbrain"
	"github.com/redlease/redlease/internal/unfenced"
	"github.com/redlease/redlease/lease"
	"github.com/redlease/redlease/redlock"
)

// candidate is the state of Run's loop between terms.
//
// A round is an attempt and/or a majority read; then the candidate waits
// for the next reason to look again:
//   - release notices from a majority of nodes, since their last acquire
//     notices (the leader resigned, and its key is gone from a majority):
//     try at once (if it lost its last race: half of the time, else after
//     raceDelay unless another term began meanwhile). Fewer (notices lost,
//     or the late notice of an older release): the next poll looks;
//   - an acquire notice of another term: read (who leads now);
//   - the leader's key due to lapse on a majority (it crashed, or stopped
//     refreshing): try a millisecond after;
//   - an attempt lost (another candidate won, or the contenders split the
//     votes): no read at once, which would slow the winner down; its
//     acquire notice says who won, and if none comes within a few attempt
//     durations (random, to desynchronise contenders), read and try again
//     if nobody leads, a few times;
//   - no majority can vote because nodes are quarantined: try when enough
//     quarantines end, then at once and at doubling intervals while their
//     fencing floors are raised, whatever the back-off (quarantineDelay);
//   - otherwise a jittered RetryDelay: read when a leader is known, try
//     when not (or when unknown).
//
// It never tries while it stands aside after Resign (ResignDelay), nor
// while the OnElected or OnDemoted of its previous term still runs.
type candidate struct {
	e        *Elector
	d        *dispatcher
	sub      redlockx.Subscription
	leaseCtx context.Context

	view     redlock.Holder // the last leader seen (zero: none)
	hasView  bool
	maxToken uint64 // the highest token seen, own terms included

	prev           *term                // the last term; no attempt while its callbacks run
	notBefore      time.Time            // no attempt before (standing aside)
	successorUntil time.Time            // a handover to this candidate is under way until then (steer.go)
	lastRequest    string               // the term and successor of the last resign request taken (steer.go)
	placed         bool                 // holds a place in Config.Leaderships (steer.go)
	yielded        map[string]yieldMark // the candidates yielded to (steer.go)

	notices   map[string]notice.Kind // per node, the kind of its last notice: Released or Acquired
	triggered bool                   // an attempt was made for the current release

	splits      int           // lost attempts in a row, nobody seen leading
	floorWait   *backoff.Exp  // tries since the quarantines that kept a majority from voting ended (nil: none yet)
	quarantined bool          // the last wait was for quarantines or their floors (quarantineDelay)
	lastAttempt time.Duration // how long the last attempt took
	lostRace    bool          // the last attempt was lost

	// failing: the last read found no majority of nodes answering; the
	// waits then back off (fails) until a read succeeds again.
	failing bool
	fails   backoff.Exp

	// witness judges the terms this candidate knows completed (its own,
	// and those whose acquire notices came) for evidence of two holders
	// (alarm.go).
	witness splitbrain.Witness
	// gone is when the last term this candidate knew of was known over
	// (zero while a leader is known, or before any): the start of the
	// time with no leader that its next term reports (alarm.go).
	gone time.Time
}

const (
	// quickRetries: lost attempts in a row, with nobody seen leading,
	// followed by a quick look rather than a RetryDelay.
	quickRetries = 3
	// lapseSlack: try this long after the leader's key is due to lapse.
	lapseSlack = time.Millisecond
)

func (c *candidate) loop(ctx context.Context) error {
	try := true
	for {
		if ctx.Err() != nil {
			return stopped(ctx)
		}
		var (
			ld   redlock.Holder
			rerr error
		)
		if !try || !c.mayTry() {
			ld, rerr = c.read(ctx)
			if err := c.fatal(ctx, rerr); err != nil {
				return err
			}
			try = errors.Is(rerr, redlock.ErrNoHolder)
		}
		tried := false
		if try && c.mayTry() {
			won, err := c.attempt(ctx)
			if err != nil {
				return err
			}
			if won {
				c.afterTerm()
			}
			switch {
			case won && time.Now().Before(c.notBefore):
				// It resigned: the successor's acquire notice will say who
				// leads, and a read now would only slow the successor
				// down. The timer reads if no notice comes.
				ld, rerr = redlock.Holder{}, errNotRead
			case won: // the term was lost: look at once
				try = false
				continue
			default:
				// Lost: another candidate won, or the votes were split.
				// The winner's acquire notice will say who; a read now
				// would slow the winner down. The timer reads (and tries
				// if nobody leads) soon if no notice comes.
				tried = true
				ld, rerr = redlock.Holder{}, errNotRead
			}
		}
		var err error
		if try, err = c.wait(ctx, ld, rerr, tried); err != nil {
			return err
		}
	}
}

// afterTerm forgets the notices received during the term, and counts its
// own release as one already tried for.
func (c *candidate) afterTerm() {
	redlockx.Drain(c.sub)
	for _, n := range c.e.client.Internal().Nodes() {
		c.notices[n] = notice.Released
	}
	c.triggered = true
}

// mayTry reports whether the candidate may campaign now.
func (c *candidate) mayTry() bool {
	if time.Now().Before(c.notBefore) || !c.hasPlace() {
		return false
	}
	return c.prev == nil || (closed(c.prev.elected) && closed(c.prev.demoted))
}

// attempt makes one campaign attempt, and runs the term when it wins. It
// reports whether it won; it returns an error only when the campaign
// cannot go on.
func (c *candidate) attempt(ctx context.Context) (bool, error) {
	e := c.e
	if !c.takePlace() {
		return false, nil // Config.Leaderships is full: no attempt
	}
	t0 := time.Now()
	l, err := lease.TryAcquire(c.leaseCtx, e.client, e.name, e.cfg.Lease)
	c.lastAttempt = time.Since(t0)
	c.lostRace = err != nil
	e.h.attempted(err)
	if err != nil {
		c.freePlace()
		if finalAttempt(err) {
			return false, fmt.Errorf("election: %q: %w", e.name, err)
		}
		e.log.Trace("attempt failed", "error", err, "elapsed", c.lastAttempt)
		return false, nil
	}
	c.splits = 0
	c.runTerm(ctx, l)
	c.freePlace() // the term was released (or never began)
	return true, nil
}

// errNotRead stands for a read that was not made: the next timer reads.
var errNotRead = errors.New("election: not read")

// read is a majority read of the election; it reports a change of leader.
// A new term whose token is not above the highest seen is read again
// (internal/unfenced, as the observer does, which does not know this
// elector's own terms): its token is being written back.
func (c *candidate) read(ctx context.Context) (redlock.Holder, error) {
	l, _, err := unfenced.Read(ctx, func() (redlock.Holder, error) { return c.checkedRead(ctx) }, c.unfenced)
	if errors.Is(err, unfenced.ErrCut) {
		return redlock.Holder{}, ctxErr(ctx)
	}
	c.failing = err != nil && !errors.Is(err, redlock.ErrNoHolder)
	if !c.failing {
		c.fails.Reset()
	}
	switch {
	case err == nil:
		c.splits = 0 // somebody won: the next lost attempt is a new race
		c.see(l)
	case errors.Is(err, redlock.ErrNoHolder):
		c.see(redlock.Holder{})
	default:
		c.e.log.Debug("leader unknown", "error", err)
	}
	return l, err
}

// unfenced reports a new term with a token that is not above the highest
// seen.
func (c *candidate) unfenced(l redlock.Holder) bool {
	return l.Token != 0 && l.Token <= c.maxToken && (!c.hasView || l.Value != c.view.Value)
}

// see records the leader seen, and reports it when it changed.
func (c *candidate) see(l redlock.Holder) {
	c.sawLeader(l)
	c.maxToken = max(c.maxToken, l.Token)
	if c.hasView && l.Value == c.view.Value {
		// The same term; reported again, once, when its token shows after
		// a read that came before it was written back (Token 0), as a
		// Watch does (observer).
		known := c.view.Token == 0 && l.Token != 0
		c.view = l
		if !known {
			return
		}
	} else if c.hasView { // a change, not the first look
		c.e.observe(redlock.Event{Kind: EventLeaderChanged, Token: l.Token})
	}
	c.view, c.hasView = l, true
	c.e.log.Debug("leader changed", "leader", l.String(), "token", l.Token)
	c.e.emit(Event{Kind: EventLeaderChanged, Leader: l})
	if f := c.e.cfg.OnLeaderChange; f != nil {
		c.d.push(func() { c.d.call("OnLeaderChange", func() { f(l) }) })
	}
}

// own records this elector's term as the leader seen, without a change of
// leader: EventElected reports the term (once on each path).
func (c *candidate) own(t *term) {
	c.maxToken = max(c.maxToken, t.Token)
	c.view, c.hasView = t.Holder, true
}

// fatal returns the error that ends the campaign after a read, if any.
func (c *candidate) fatal(ctx context.Context, err error) error {
	switch {
	case ctx.Err() != nil:
		return stopped(ctx)
	case errors.Is(err, redlock.ErrClosed), errors.Is(err, redlock.ErrInvalidArgument):
		return fmt.Errorf("election: %q: %w", c.e.name, err)
	}
	return nil
}

// wait waits for the next reason to look at the election (see candidate)
// and reports whether to try (true) or only read (false).
func (c *candidate) wait(ctx context.Context, ld redlock.Holder, rerr error, tried bool) (bool, error) {
	d, tryOnTimer := c.delay(ld, rerr, tried)
	timer := time.NewTimer(d)
	defer timer.Stop()

	// The previous term's callbacks, while they run: their return may
	// allow an attempt.
	var prevElected, prevDemoted <-chan struct{}
	if c.prev != nil && !closed(c.prev.elected) {
		prevElected = c.prev.elected
	}
	if c.prev != nil && !closed(c.prev.demoted) {
		prevDemoted = c.prev.demoted
	}
	for {
		select {
		case <-ctx.Done():
			return false, stopped(ctx)
		case <-timer.C:
			return tryOnTimer, nil
		case <-prevElected:
			prevElected = nil
			if rerr != nil && c.mayTry() {
				return true, nil
			}
		case <-prevDemoted:
			prevDemoted = nil
			if rerr != nil && c.mayTry() {
				return true, nil
			}
		case n := <-c.sub.C():
			if try, done := c.onNotice(n, timer, &tryOnTimer); done {
				return try, nil
			}
		}
	}
}

// delay is how long wait waits at most, given the last read (the leader
// ld, or why none: rerr) and whether an attempt was made, and whether to
// try when that time is up.
func (c *candidate) delay(ld redlock.Holder, rerr error, tried bool) (d time.Duration, tryOnTimer bool) {
	d = backoff.Jitter(c.e.cfg.Lease.RetryDelay)
	if c.failing { // no majority answered: back off, up to 8 RetryDelays
		d = c.fails.Next()
	}
	tryOnTimer = rerr != nil && rerr != errNotRead // nobody leads, or unknown
	if w, ok := c.e.waiting(time.Time{}, 0); ok {
		d, tryOnTimer = min(d, c.quarantineDelay(w)), true
		c.quarantined = true
	} else {
		c.floorWait = nil
		if c.quarantined && rerr != nil {
			// The quarantines that kept a majority from voting ended and
			// their floors were raised since the last attempt (by the
			// readiness pass it started): try again on the scale of an
			// attempt, not after the back-off.
			d, tryOnTimer = max(c.lastAttempt, time.Millisecond), true
		}
		c.quarantined = false
	}
	switch {
	case rerr == nil:
		if !ld.Expires.IsZero() {
			if x := time.Until(ld.Expires) + lapseSlack; x > 0 && x < d {
				d, tryOnTimer = x, true
			}
		}
	case rerr == errNotRead && tried:
		if c.splits++; c.splits <= quickRetries {
			// A lost attempt: wait for the winner's acquire notice, or,
			// if the contenders split the votes, try again soon, on the
			// scale of an attempt and at random to desynchronise them
			// (their partial votes are being released meanwhile).
			a := max(c.lastAttempt, time.Millisecond/4)
			d = backoff.Uniform(a, 4*a)
		}
	}
	if now := time.Now(); c.notBefore.After(now) && c.notBefore.Sub(now) < d {
		d, tryOnTimer = c.notBefore.Sub(now), true
	}
	return d, tryOnTimer
}

// quarantineDelay is how long to wait at most while no majority votes
// because nodes are quarantined (w): until enough quarantines end; once
// they have, the floors are being raised (by the readiness pass that the
// last attempt started, which may take a while on a loaded host), so
// tries that start on the scale of an attempt and double up to
// RetryDelay, without the failures' back-off (floors that cannot be
// raised yet wait for a node that did not answer).
func (c *candidate) quarantineDelay(w reach.Waiting) time.Duration {
	if w.Left > 0 {
		c.floorWait = nil
		return w.Left + lapseSlack
	}
	if c.floorWait == nil {
		a := max(c.lastAttempt, time.Millisecond)
		c.floorWait = &backoff.Exp{Base: a, Cap: max(a, c.e.cfg.Lease.RetryDelay)}
	}
	return c.floorWait.Next()
}

// onNotice takes a notice n that came during wait: done says that wait
// returns try; otherwise it waits on, perhaps with timer reset and
// tryOnTimer set.
func (c *candidate) onNotice(n redlockx.Notice, timer *time.Timer, tryOnTimer *bool) (try, done bool) {
	m := notice.Parse(n.Payload)
	switch m.Kind {
	case notice.Released:
		if c.released(n.Node) {
			if c.isSuccessor() {
				return true, true // handed over to: at once
			}
			if d, ok := c.priorityDelay(); ok {
				timer.Reset(d) // a higher priority waits: let it go first
				*tryOnTimer = true
				return false, false
			}
			if !c.lostRace || rand.N(2) == 0 {
				return true, true
			}
			// Lost the last race: let the others go first, half of
			// the time (see raceDelay).
			timer.Reset(c.raceDelay())
			*tryOnTimer = true
		}
		return false, false
	case notice.Acquired:
		c.witness.Announced(m.Value) // a completed acquisition
		c.acquired(n.Node)
		if c.isCurrent(m) {
			return false, false // the term already known
		}
		return false, true // another term began: read who leads
	case notice.Candidate:
		c.e.reg.heard(m)
		return false, false
	case notice.Handover:
		c.onHandover(m)
		return false, false
	case notice.Resign:
		return false, false // for the leader
	case notice.Roll:
		c.e.rollCall()
		return false, false
	default:
		return false, true // a notice of another kind: read
	}
}

// raceDelay is how long a standby that lost its last race waits, half of
// the time, before it tries for a release: long enough for the winner's
// acquire notice to arrive (an attempt and a notice), which cancels the
// attempt. Simultaneous attempts slow each other down (each costs the
// nodes and the clients work, and losers undo their partial votes), so
// halving their number makes the winner faster; a standby that won its
// last race (a lone standby always does) never waits.
func (c *candidate) raceDelay() time.Duration {
	a := max(2*c.lastAttempt, 500*time.Microsecond)
	return min(backoff.Uniform(a, 2*a), c.e.cfg.Lease.RetryDelay)
}

// isCurrent reports whether an acquire notice is that of the term the
// candidate already knows.
func (c *candidate) isCurrent(m notice.Message) bool {
	return c.hasView && c.view.Value != "" && m.Value == c.view.Value
}

// finalAttempt reports whether a failed attempt means that no later one
// can succeed: redlock's own rule (a closed client, a bad argument or
// configuration, a majority refusing the key for good).
func finalAttempt(err error) bool {
	return redlock.IsFinal(err)
}

// released records a release notice from node, and reports whether an
// attempt is due: a majority of nodes are released (their last notice),
// and no attempt was made for this release yet. A node's notices come in
// order, so the late notices of a release already tried for do not make
// another attempt.
func (c *candidate) released(node string) bool {
	c.notices[node] = notice.Released
	if c.releasedCount() < c.e.client.Internal().Quorum() || c.triggered {
		return false
	}
	c.triggered = true
	c.leaderGone(time.Now())
	return true
}

// acquired records an acquire notice from node: once fewer than a majority
// are released, the next release is a new one to try for.
func (c *candidate) acquired(node string) {
	c.notices[node] = notice.Acquired
	if c.releasedCount() < c.e.client.Internal().Quorum() {
		c.triggered = false
	}
}

func (c *candidate) releasedCount() int {
	n := 0
	for _, v := range c.notices {
		if v == notice.Released {
			n++
		}
	}
	return n
}
