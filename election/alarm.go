package election

import (
	"context"
	"fmt"
	"time"

	"github.com/redlease/redlease/internal/notice"
	"github.com/redlease/redlease/internal/splitbrain"
	"github.com/redlease/redlease/redlock"
)

// The split-brain alarm of a candidate (docs/design.md §6.3), and the
// time with no leader that its terms report.

// hold waits until term t ends (lost, resigned, OnElected panicked) or
// ctx ends (then it ends t). An acquire notice of another term meanwhile
// is checked: two holders at once if a majority holds it (checkOverlap).
func (c *candidate) hold(ctx context.Context, t *term) {
	alarmed := ""
	for {
		select {
		case <-t.ctx.Done():
			return
		case <-ctx.Done():
			t.cancel(stopped(ctx))
			return
		case n := <-c.sub.C():
			switch m := notice.Parse(n.Payload); m.Kind {
			case notice.Acquired:
				c.witness.Announced(m.Value)
				if m.Value != t.Value && m.Value != alarmed && c.checkOverlap(t) {
					alarmed = m.Value // one alarm per term seen
				}
			case notice.Candidate:
				c.e.reg.heard(m)
				c.maybeYield(t)
			case notice.Resign:
				c.onRequest(t, m)
			case notice.Roll:
				c.e.rollCall()
			}
		}
	}
}

// checkOverlap reads the election while this candidate holds term t: a
// majority read that began and ended within t's validity, t still held,
// and found another value on a majority, shows that the nodes granted the
// key to another acquisition while a majority of them had to hold t's
// value. The read is cut short when t ends. It reports whether it
// raised the alarm.
func (c *candidate) checkOverlap(t *term) bool {
	valid := t.ValidUntil()
	in, err := c.e.client.Inspect(t.ctx, c.e.name)
	if err != nil || in.Value == "" || in.Value == t.Value || !time.Now().Before(valid) || !t.held() {
		return false
	}
	c.alarm(splitbrain.Overlap, in.Holder, fmt.Errorf(
		"election: %q: a majority of nodes hold %s (token %d) while this elector's term (token %d) is valid for %s more: the key was granted twice",
		c.e.name, in.Holder, in.Token, t.Token, time.Until(valid).Round(time.Millisecond)))
	return true
}

// checkedRead is the observer's majority read of the election, checked
// for a completed term whose token is not above an earlier one's.
func (c *candidate) checkedRead(ctx context.Context) (redlock.Holder, error) {
	start := time.Now()
	l, err := c.e.obs.Leader(ctx)
	if err == nil {
		// Not exact: the observer's Holder does not say whether every node
		// answered, so a read term is checked but never the reference.
		if ev := c.witness.Read(l.Value, l.Token, start, time.Now(), false); ev != nil {
			c.alarm(splitbrain.Token, l, fmt.Errorf("election: %q: %w", c.e.name, ev))
		}
	}
	return l, err
}

// ownTerm checks a term of this candidate's own against the completed
// terms it knows of.
func (c *candidate) ownTerm(t *term) {
	if ev := c.witness.Own(t.Value, t.Token, t.Start); ev != nil {
		c.alarm(splitbrain.Token, t.Holder, fmt.Errorf("election: %q: this elector's %w", c.e.name, ev))
	}
}

// alarm reports evidence of two holders at once: other is the term that
// should not have been granted. Logged at Error and reported to the Hooks.
func (c *candidate) alarm(evidence string, other redlock.Holder, err error) {
	c.e.log.Error("split brain: two holders at once", "evidence", evidence, "holder", other.String(), "token", other.Token, "error", err)
	c.e.observe(redlock.Event{Kind: redlock.EventSplitBrain, Token: other.Token, Evidence: evidence, Err: err})
}

// sawLeader notes what a read found for the time with no leader: a
// leader ends it; nobody starts it, if not started yet.
func (c *candidate) sawLeader(l redlock.Holder) {
	if l.Value != "" {
		c.gone = time.Time{}
		return
	}
	c.leaderGone(time.Now())
}

// leaderGone notes that, by at, the last term known was over (a read
// found nobody, a majority of release notices came), unless already
// noted: the earlier of at and when the last leader seen lapsed.
func (c *candidate) leaderGone(at time.Time) {
	if !c.gone.IsZero() {
		return
	}
	if lapsed := c.lapsedBy(at); !lapsed.IsZero() {
		at = lapsed
	}
	c.gone = at
}

// lapsedBy is when the last leader seen had lapsed on a majority (its key
// due to expire, redlock.Holder.Expires), if before at; zero otherwise.
func (c *candidate) lapsedBy(at time.Time) time.Time {
	if c.hasView && c.view.Value != "" && !c.view.Expires.IsZero() && c.view.Expires.Before(at) {
		return c.view.Expires
	}
	return time.Time{}
}

// leaderless is how long the election had no leader before a term of
// this candidate that began at start, as far as it knows: since the last
// term it knew of ended (its own term's end, a majority of release
// notices, a read that found nobody, the last leader's key's lapse); 0
// when it knew of none (redlock.Event.Duration of EventElected).
func (c *candidate) leaderless(start time.Time) time.Duration {
	gone := c.gone
	if gone.IsZero() {
		gone = c.lapsedBy(start) // the last leader seen stopped refreshing
	}
	c.gone = time.Time{}
	if gone.IsZero() || !gone.Before(start) {
		return 0
	}
	return start.Sub(gone)
}
