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

// State is what a read of the election tells.
type State int

// The states of an election, as an [Event] reports them.
const (
	// StateUnknown: fewer than a majority of nodes answered; whether
	// somebody leads cannot be told (see [ErrUnknown]).
	StateUnknown State = iota
	// StateNoLeader: a majority answered and nobody leads.
	StateNoLeader
	// StateLeader: somebody leads; Event.Leader says who.
	StateLeader
)

// String returns "leader", "no leader" or "unknown".
func (s State) String() string {
	switch s {
	case StateNoLeader:
		return "no leader"
	case StateLeader:
		return "leader"
	default:
		return "unknown"
	}
}

// Event is one fact of an election: a change of leader seen by a [Watch]
// or by an elector, or the beginning or end of an elector's own term. It
// is the one event type of both streams (election.Elector.Events carries
// this type). An Event is a plain value.
type Event struct {
	// Kind is what happened: redlock.EventLeaderChanged (every event of a
	// Watch), or, on an elector's Events only, redlock.EventElected and
	// redlock.EventDemoted for its own terms.
	Kind redlock.EventKind
	// State is what the read said (EventLeaderChanged); StateLeader for
	// EventElected; StateUnknown for EventDemoted (who leads next is not
	// known yet).
	State State
	// Leader is the new leader (EventLeaderChanged with StateLeader; zero
	// otherwise), or the elector's own term as observers see it
	// (EventElected, EventDemoted: ID, Metadata, Token, Expires, Value).
	Leader Leader
	// Err says why the state is unknown (EventLeaderChanged with
	// StateUnknown; it matches [ErrUnknown]), or why the term ended
	// (EventDemoted: see election.Callbacks.OnDemoted); nil otherwise.
	Err error
	// At is when the event was seen.
	At time.Time
}

// String describes the event on one line: "leader changed: worker-1
// (token 3)", "leader changed: no leader", "leader changed: unknown: ...",
// "elected: worker-1 (token 3)", "demoted: worker-1 (token 3): ...".
func (e Event) String() string {
	var b strings.Builder
	b.WriteString(strings.ReplaceAll(e.Kind.String(), "_", " "))
	b.WriteString(": ")
	switch {
	case e.Kind != redlock.EventLeaderChanged || e.State == StateLeader:
		b.WriteString(e.Leader.describe())
	default:
		b.WriteString(e.State.String())
	}
	if e.Err != nil {
		b.WriteString(": ")
		b.WriteString(strings.ReplaceAll(e.Err.Error(), "\n", "; "))
	}
	return b.String()
}

// Watch is a stream of changes of an election, started by [Observer.Watch].
// Its goroutine owns the channel: it alone sends and closes. A Watch is safe
// for concurrent use; it cannot be restarted.
type Watch struct {
	c     chan Event
	ended chan struct{} // closed after err is set, before c is closed
	err   error
}

// C returns the events. The first event is the state when the watch
// started; then one event per change: a new leader (a new term, even of the
// same ID), no leader, or unknown. A term read before its token was written
// back (see [Leader.Token]) is reported again, with the same Value, once a
// read shows its own token. The channel is closed when the watch
// ends; [Watch.Err] then says why.
func (w *Watch) C() <-chan Event { return w.c }

// Err returns nil while the watch runs, then why it ended: the context's
// error (with its cause), or redlock.ErrClosed when the client was closed.
// It is set before [Watch.C] is closed.
func (w *Watch) Err() error {
	select {
	case <-w.ended:
		return w.err
	default:
		return nil
	}
}

// Watch streams the changes of the election until ctx ends. It subscribes
// to the key's change notices on every node and confirms each with a
// majority read, reads every PollInterval (jittered) for what Pub/Sub
// missed, and reads again when the current leader's key is due to lapse.
// Events are sent as they are seen; a reader that falls more than
// EventBuffer events behind delays the next read, and a change that came
// and went meanwhile may be missed (a Watch reports states, not every
// transition). The watch's goroutine and subscription end when ctx ends.
func (o *Observer) Watch(ctx context.Context) *Watch {
	w := &Watch{c: make(chan Event, o.cfg.EventBuffer), ended: make(chan struct{})}
	go func() {
		err := o.watch(ctx, w.c)
		w.err = err
		close(w.ended)
		close(w.c)
	}()
	return w
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
		l, err := o.Leader(ctx)
		if final(ctx, err) {
			if ctx.Err() != nil {
				return ctxErr(ctx)
			}
			return err
		}
		ev := event(l, err)
		if again, d := streak.hold(ev, !first && last.State == StateUnknown, o.cfg.UnknownGrace); again {
			timer.Reset(d) // no majority answered: read again before saying unknown
			if err := o.wait(ctx, sub, timer, last.Leader); err != nil {
				return err
			}
			continue
		}
		if first || changed(last, ev) {
			if o.hooks != nil && !first && ev.State != StateUnknown {
				o.hooks.Observe(redlock.Event{Kind: redlock.EventLeaderChanged, Key: o.name, Token: ev.Leader.Token, Outcome: o.client.Internal().Outcome(nil)})
			}
			select {
			case out <- ev:
			case <-ctx.Done():
				return ctxErr(ctx)
			}
			last, first = ev, false
		}
		timer.Reset(o.nextRead(ev.Leader))
		if err := o.wait(ctx, sub, timer, ev.Leader); err != nil {
			return err
		}
	}
}

// wait returns when a read is due: a notice that may mean a change, the
// timer, or the context's end (then with the context's error).
func (o *Observer) wait(ctx context.Context, sub redlockx.Subscription, timer *time.Timer, cur Leader) error {
	for {
		select {
		case n := <-sub.C():
			if isCurrent(n.Payload, cur) {
				continue // the current leader's own acquire notice
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

// nextRead is the time to the next poll: a jittered PollInterval, or just
// after the leader's key is due to lapse if that is sooner.
func (o *Observer) nextRead(l Leader) time.Duration {
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
func isCurrent(payload string, cur Leader) bool {
	m := notice.Parse(payload)
	return m.Kind == notice.Acquired && !cur.none() && m.Value == cur.Value
}

// final reports an error after which a watch cannot go on.
func final(ctx context.Context, err error) bool {
	return ctx.Err() != nil || errors.Is(err, redlock.ErrClosed) || errors.Is(err, redlock.ErrInvalidArgument)
}

// event is the Event of one read.
func event(l Leader, err error) Event {
	ev := Event{Kind: redlock.EventLeaderChanged, Leader: l, At: time.Now()}
	switch {
	case err == nil:
		ev.State = StateLeader
	case errors.Is(err, ErrNoLeader):
		ev.State = StateNoLeader
	default:
		ev.State, ev.Leader, ev.Err = StateUnknown, Leader{}, err
	}
	return ev
}

// changed reports whether ev is a change from last: another state,
// another term, or the same term with a higher token (a term first read
// before its token was written back, see [Leader.Token], is reported
// again once its token shows). A term's token never goes back in a Watch:
// a lower one is not reported.
func changed(last, ev Event) bool {
	if last.State == StateLeader && ev.State == StateLeader && last.Leader.Value == ev.Leader.Value {
		return ev.Leader.Token > last.Leader.Token
	}
	return last.State != ev.State || last.Leader.Value != ev.Leader.Value
}
