package observer

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/redlease/redlease/internal/backoff"
	"github.com/redlease/redlease/internal/notice"
	"github.com/redlease/redlease/internal/redlockx"
	"github.com/redlease/redlease/redlock"
)

// Event is one change of an election seen by [Observer.Watch]: a new
// leader (a new term, even of the same ID), no leader, or unknown. An
// Event is a plain value.
type Event struct {
	// Leader is the new leader; the zero Holder (Value empty) when nobody
	// leads, when who leads is unknown, and for a semaphore.
	Leader redlock.Holder
	// Holders is, for an observer of a semaphore (Config.Permits above 1),
	// the holder of each permit, Holders[i] of permit i (Permit i, Key its
	// permit's key; Value empty and nothing else set for a free permit); nil
	// when unknown (Err) and for an election. A new event is sent when any
	// permit changes.
	Holders []redlock.Holder
	// Err is nil when the read could tell who leads (Leader, or nobody),
	// and otherwise says why it could not: it matches [ErrUnknown] (fewer
	// than a majority of nodes answered), or, in the last event before
	// the channel closes, redlock.ErrClosed (the client was closed).
	Err error
	// At is when the change was seen.
	At time.Time
}

// String describes the event on one line: "leader worker-1 (token 3)",
// "no leader", "unknown: ..."; for a semaphore "2 of 4 permits held (2
// free): 0 worker-1 (token 3), 3 worker-5 (token 9)".
func (e Event) String() string {
	switch {
	case e.Err != nil:
		return "unknown: " + strings.ReplaceAll(e.Err.Error(), "\n", "; ")
	case e.Holders != nil:
		return describePermits(e.Holders)
	case e.Leader.Value == "":
		return "no leader"
	}
	return "leader " + describe(e.Leader)
}

// unknown reports whether the event says who leads is unknown.
func (e Event) unknown() bool { return e.Err != nil }

// Watch streams the changes of the election until ctx ends: the path of
// standbys and dashboards, which never campaign (a candidate has its
// elector's callbacks and Events, metrics the client's Hooks; a Watch
// reports to the Hooks only the split-brain alarm, redlock.EventSplitBrain,
// below: docs/notifications.md). The first event
// is the state when the watch started; then one event per change: a new
// leader (a new term, even of the same ID), no leader, or unknown. A term
// read before its token was written back (see redlock.Holder.Token) is
// reported again, with the same Value, once a read shows its own token.
//
// It subscribes to the key's change notices on every node and confirms
// each with a majority read, reads every PollInterval (jittered) for what
// Pub/Sub missed, and reads again when the current leader's key is due to
// lapse. Events are sent as they are seen; a reader that falls more than
// EventBuffer events behind delays the next read, and a change that came
// and went meanwhile may be missed (a Watch reports states, not every
// transition).
//
// The split-brain alarm: a term whose acquire notice came before a read
// that found it on a majority is known to have completed; if its token
// is not above that of a term known completed and seen on a majority
// before it, the nodes granted the key without remembering the earlier
// term (a node forgot its locks and voted: two holders may overlap). The
// watch then logs it at Error and reports redlock.EventSplitBrain to the
// client's Hooks (docs/design.md §6.3).
//
// The channel is closed, and the watch's goroutine and subscription end,
// when ctx ends, or after an event whose Err matches redlock.ErrClosed
// when the client was closed.
func (o *Observer) Watch(ctx context.Context) <-chan Event {
	c := make(chan Event, o.cfg.EventBuffer)
	go func() {
		defer close(c)
		if err := o.watch(ctx, c); ctx.Err() == nil {
			select { // the end's reason, unless ctx's end says it
			case c <- Event{Err: err, At: time.Now()}:
			case <-ctx.Done():
			}
		}
	}()
	return c
}

// watch is the goroutine of a Watch; it returns why it ended.
func (o *Observer) watch(ctx context.Context, out chan<- Event) error {
	sub, err := o.client.Internal().Subscribe(ctx, notice.Channel(o.name))
	if err != nil {
		return err
	}
	defer sub.Close()
	// Since Go 1.23 a Reset timer never delivers a stale tick.
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()

	var last Event
	var streak unknownStreak
	first := true
	for {
		ev, err := o.read(ctx)
		if final(ctx, err) {
			if ctx.Err() != nil {
				return ctxErr(ctx)
			}
			return err
		}
		if again, d := streak.hold(ev, !first && last.unknown(), o.cfg.UnknownGrace); again {
			timer.Reset(d) // no majority answered: read again before saying unknown
			if err := o.wait(ctx, sub, timer, last.Leader); err != nil {
				return err
			}
			continue
		}
		if first || changed(last, ev) {
			select {
			case out <- ev:
			case <-ctx.Done():
				return ctxErr(ctx)
			}
			last, first = ev, false
		}
		timer.Reset(o.nextRead(lapsing(ev)))
		if err := o.wait(ctx, sub, timer, ev.Leader); err != nil {
			return err
		}
	}
}

// wait returns when a read is due: a notice that may mean a change, the
// timer, or the context's end (then with the context's error).
func (o *Observer) wait(ctx context.Context, sub redlockx.Subscription, timer *time.Timer, cur redlock.Holder) error {
	for {
		select {
		case n := <-sub.C():
			switch m := notice.Parse(n.Payload); m.Kind {
			case notice.Acquired:
				o.witness.Announced(m.Value) // a completed acquisition
			case notice.Candidate, notice.Handover, notice.Resign, notice.Roll:
				continue // the candidates' steering (election): no change of leader
			}
			if isCurrent(n.Payload, cur) && o.witness.IsReference(cur.Value) {
				continue // the current leader's own acquire notice, the term known complete
			}
			redlockx.Drain(sub)
			return nil
		case <-timer.C:
			return nil
		case <-ctx.Done():
			return ctxErr(ctx)
		}
	}
}

// read is one read of a watch: of the leader ([Observer.Leader]), or of
// every permit of a semaphore (readPermits).
func (o *Observer) read(ctx context.Context) (Event, error) {
	if o.cfg.Permits > 1 {
		return o.readPermits(ctx)
	}
	l, err := o.Leader(ctx)
	return event(l, err), err
}

// nextRead is the time to the next poll: a jittered PollInterval, or just
// after the leader's key is due to lapse if that is sooner.
func (o *Observer) nextRead(l redlock.Holder) time.Duration {
	poll := backoff.Jitter(o.cfg.PollInterval)
	if l.Expires.IsZero() {
		return poll
	}
	if d := time.Until(l.Expires) + lapseSlack; d > 0 && d < poll {
		return d
	}
	return poll
}

// lapseSlack: read this long after a key is due to lapse, for the
// servers' timers.
const lapseSlack = time.Millisecond

// isCurrent reports whether a notice payload is the acquire notice of the
// leader already known.
func isCurrent(payload string, cur redlock.Holder) bool {
	m := notice.Parse(payload)
	return m.Kind == notice.Acquired && cur.Value != "" && m.Value == cur.Value
}

// final reports an error after which a watch cannot go on.
func final(ctx context.Context, err error) bool {
	return ctx.Err() != nil || errors.Is(err, redlock.ErrClosed) || errors.Is(err, redlock.ErrInvalidArgument)
}

// event is the Event of one read.
func event(l redlock.Holder, err error) Event {
	ev := Event{Leader: l, At: time.Now()}
	if err != nil {
		ev.Leader = redlock.Holder{}
		if !errors.Is(err, redlock.ErrNoHolder) {
			ev.Err = err
		}
	}
	return ev
}

// changed reports whether ev is a change from last: another state,
// another term, or the same term with a higher token (a term first read
// before its token was written back, see [Leader.Token], is reported
// again once its token shows). A term's token never goes back in a Watch:
// a lower one is not reported.
func changed(last, ev Event) bool {
	if last.unknown() || ev.unknown() {
		return last.unknown() != ev.unknown()
	}
	if last.Holders != nil || ev.Holders != nil {
		return permitsChanged(last.Holders, ev.Holders)
	}
	if last.Leader.Value == ev.Leader.Value && ev.Leader.Value != "" {
		return ev.Leader.Token > last.Leader.Token
	}
	return last.Leader.Value != ev.Leader.Value
}
