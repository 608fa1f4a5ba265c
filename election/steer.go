package election

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/redlease/redlease/internal/notice"
	"github.com/redlease/redlease/redlock"
)

// Steering a term's end (docs/design.md §6.4): a leader that resigns to a
// named successor publishes a handover notice on every node just before
// it releases; the other candidates that hear it stand aside for the
// window it names, and the successor tries at once on the release. The
// notice only delays attempts: every term is still won by a Redlock
// acquisition, so S1 and the tokens' order are those of any handover.

// successorOf checks Resign's optional argument: "" when none.
func (e *Elector) successorOf(to []string) (string, error) {
	switch {
	case len(to) == 0:
		return "", nil
	case len(to) > 1:
		return "", fmt.Errorf("%w: election %q: Resign takes one successor ID, got %d (%q)", redlock.ErrInvalidArgument, e.name, len(to), to)
	case to[0] == "":
		return "", fmt.Errorf("%w: election %q: Resign: the successor ID is empty", redlock.ErrInvalidArgument, e.name)
	case to[0] == e.cfg.Lease.ID:
		return "", fmt.Errorf("%w: election %q: Resign to %q: that is this elector's own ID", redlock.ErrInvalidArgument, e.name, to[0])
	}
	return to[0], nil
}

// handTo marks t as handed over to id (nothing to do for ""). Its error
// says why not: id is no live candidate (ErrInvalidArgument), or t is
// ending or handed over already (ErrNotHeld).
func (e *Elector) handTo(t *term, id string) error {
	if id == "" {
		return nil
	}
	if _, ok := e.reg.find(id); !ok {
		return fmt.Errorf("%w: election %q: Resign to %q: no such candidate campaigns (registered: %s)",
			redlock.ErrInvalidArgument, e.name, id, e.reg.ids())
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if t.ctx.Err() != nil || t.to != "" {
		return fmt.Errorf("%w: election %q: Resign to %q: the term (token %d) was ending already", redlock.ErrNotHeld, e.name, id, t.Token)
	}
	t.to = id
	return nil
}

// successor returns the candidate t is handed to ("" when none).
func (e *Elector) successor(t *term) string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return t.to
}

// announceHandover publishes, on every node, that t is about to be
// released for its successor, if it resigned to one; it returns how long
// the others stand aside (0: no handover).
func (e *Elector) announceHandover(t *term, cause error) time.Duration {
	to := e.successor(t)
	if to == "" || !errors.Is(cause, ErrResigned) {
		return 0
	}
	w := e.cfg.HandoverWindow
	m := notice.Message{Kind: notice.Handover, ID: to, Window: w}
	n, err := e.client.Internal().Publish(context.Background(), notice.Channel(e.name), m.Encode())
	e.log.Info("handing over", "token", t.Token, "successor", to, "window", w, "published", n, "error", err)
	return w
}

// onHandover takes a handover notice m: the successor tries at once on
// the release, the others stand aside for the window, at most one TTL of
// this candidate's (a longer one, or a notice forged by anyone who may
// PUBLISH on the nodes, would keep the others aside longer than a crashed
// leader's term lasts).
func (c *candidate) onHandover(m notice.Message) {
	until := time.Now().Add(min(m.Window, c.e.cfg.Lease.TTL))
	if m.ID == c.e.cfg.Lease.ID {
		c.successorUntil, c.notBefore = until, time.Time{}
		return
	}
	if until.After(c.notBefore) {
		c.notBefore = until
	}
}

// isSuccessor reports whether a handover to this candidate is under way.
func (c *candidate) isSuccessor() bool { return time.Now().Before(c.successorUntil) }

// onRequest takes a resign request m heard while leading t
// (Config.AcceptResignRequests): the term is handed over to m.ID.
func (c *candidate) onRequest(t *term, m notice.Message) {
	e := c.e
	key := m.Value + " " + m.ID
	if m.Value != t.Value || key == c.lastRequest {
		return // another term's, or a copy from another node
	}
	c.lastRequest = key
	if !e.cfg.AcceptResignRequests {
		e.log.Warn("resign request ignored: Config.AcceptResignRequests is off", "successor", m.ID)
		return
	}
	if m.ID == e.cfg.Lease.ID {
		e.log.Warn("resign request ignored: it names this elector", "successor", m.ID)
		return
	}
	if err := e.handTo(t, m.ID); err != nil {
		e.log.Warn("resign request ignored", "error", err)
		return
	}
	t.cancel(ErrResigned)
}

// maybeYield hands t over to a candidate of a higher priority ready for
// Config.YieldAfter, once t is that old (Config.YieldAfter). It yields to
// one campaign of a candidate (its ID, since and record) once in yieldAgain: one
// that does not take over (it cannot reach a majority, a forged record) is
// not yielded to again meanwhile, so that the leadership does not go back
// and forth.
func (c *candidate) maybeYield(t *term) {
	e := c.e
	y := e.cfg.YieldAfter
	if y <= 0 || time.Since(t.Start) < y {
		return
	}
	rec, ok := e.reg.above(e.cfg.Priority, y, c.yieldedTo()...)
	if !ok {
		return
	}
	if err := e.handTo(t, rec.id); err == nil {
		e.log.Info("yielding to a candidate of a higher priority", "successor", rec.id, "priority", rec.priority)
		c.yielded[rec.id] = yieldMark{since: rec.since, first: rec.first, at: time.Now()}
		t.cancel(ErrResigned)
	}
}

// yieldedTo lists this elector's ID and the candidates whose current
// campaign was yielded to within yieldAgain.
func (c *candidate) yieldedTo() []string {
	e := c.e
	not := []string{e.cfg.Lease.ID}
	again := yieldAgain * max(e.cfg.YieldAfter, e.cfg.Lease.TTL)
	for _, rec := range e.reg.live() {
		if y, ok := c.yielded[rec.id]; ok && y.since.Equal(rec.since) && y.first.Equal(rec.first) && time.Since(y.at) < again {
			not = append(not, rec.id)
		}
	}
	return not
}

// yieldMark is a yield to one campaign of a candidate: its since, and
// when its record was first heard (a record that lapsed, withdrawn at its
// Leaderships cap, is heard anew), and when the yield was made.
type yieldMark struct{ since, first, at time.Time }

// yieldAgain: a leader yields to one campaign of a candidate at most once
// in this many YieldAfters or TTLs, whichever is longer.
const yieldAgain = 10

// priorityDelay is how long a candidate waits, at a release, before it
// tries, when it knows of a live candidate of a higher priority (other
// than the leader that released): a RetryDelay, ample for that one's
// attempt and acquire notice, whose arrival ends the wait (a read then
// sees who leads). ok is false when there is none: try at once.
func (c *candidate) priorityDelay() (d time.Duration, ok bool) {
	e := c.e
	if _, ok := e.reg.above(e.cfg.Priority, 0, e.cfg.Lease.ID, c.view.ID); !ok {
		return 0, false
	}
	return e.cfg.Lease.RetryDelay, true
}

// hasPlace reports whether Config.Leaderships has a place free (or is not
// set): whether the candidate may campaign.
func (c *candidate) hasPlace() bool {
	l := c.e.cfg.Leaderships
	return l == nil || c.placed || len(l) < cap(l)
}

// takePlace takes a place in Config.Leaderships for an attempt, and
// reports false when none is free (another elector of the process took
// the last one meanwhile).
func (c *candidate) takePlace() bool {
	l := c.e.cfg.Leaderships
	if l == nil || c.placed {
		return true
	}
	select {
	case l <- struct{}{}:
		c.placed = true
		c.e.rollCall() // the record says whether a place is left
		return true
	default:
		return false
	}
}

// freePlace frees the place taken by takePlace: the attempt was lost, or
// the term was released.
func (c *candidate) freePlace() {
	if c.placed {
		<-c.e.cfg.Leaderships
		c.placed = false
		c.e.rollCall()
	}
}
