package election

import (
	"time"

	"github.com/redlease/redlease/redlock"
)

// The kinds of an elector's events: the Kind of an [Event] on
// [Elector.Events], and of the redlock.Event its elector reports to the
// client's Hooks (where the value is the "op" label of the adapters'
// metrics). docs/notifications.md has the whole story.
const (
	// EventElected: a term of this elector began (OnElected starts).
	// Hooks: Token; Key the election's name.
	EventElected redlock.EventKind = "elected"
	// EventDemoted: a term of this elector ended and was released
	// (OnDemoted is called); Err is why. Hooks: Token; Duration is the
	// term's length; Err.
	EventDemoted redlock.EventKind = "demoted"
	// EventLeaderChanged: the elector saw another leader, or nobody
	// (OnLeaderChange is called). Its own terms are EventElected instead.
	// A term read before its token was written back comes with Token 0
	// (not known yet) and again, once, with its token when a read shows
	// it (as a Watch reports it: observer). Hooks: Token is the new
	// leader's (0: nobody leads), once per term.
	EventLeaderChanged redlock.EventKind = "leader_changed"
)

// Event is one event of an elector, as [Elector.Events] delivers it: the
// same events as the callbacks, in the same order. An Event is a plain
// value.
type Event struct {
	// Kind is [EventElected], [EventDemoted] or [EventLeaderChanged].
	Kind redlock.EventKind
	// Leader is who leads: the new leader for EventLeaderChanged (the
	// zero Holder when nobody leads), this elector's term for the others.
	Leader redlock.Holder
	// Term is the term that began or ended (EventElected, EventDemoted),
	// as OnElected and OnDemoted get it; zero for EventLeaderChanged.
	Term Term
	// Err is why the term ended (EventDemoted: the cause OnDemoted gets);
	// nil otherwise.
	Err error
	// At is when the event happened.
	At time.Time
}

// emit sends ev on the Events channel without ever waiting: a full buffer
// drops it, with a warning that counts the drops.
func (e *Elector) emit(ev Event) {
	ev.At = time.Now()
	select {
	case e.events <- ev:
	default:
		n := e.dropped.Add(1)
		e.log.Warn("event dropped: the Events channel is full (Config.EventBuffer)", "event", string(ev.Kind), "dropped", n)
	}
}
