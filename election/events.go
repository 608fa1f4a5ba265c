package election

import (
	"time"

	"github.com/redlease/redlease/observer"
)

// Event is one thing an elector reports on [Elector.Events]: the event
// type of observers too (see observer.Event). Its Kind is
// redlock.EventElected (a term of this elector began: Leader is the term
// as observers see it), redlock.EventDemoted (a term of this elector ended
// and was released: Leader is the term, Err why it ended; see
// Callbacks.OnDemoted), or redlock.EventLeaderChanged (the leader the
// elector sees changed: State and Leader; zero Leader for no leader).
// Events come in the order the elector saw them, at the same moments as
// the callbacks: EventLeaderChanged with OnLeaderChange, EventElected just
// before OnElected starts, EventDemoted just before OnDemoted. During a
// term, [Elector.Term] gives the Term itself.
type Event = observer.Event

// emit sends ev without ever waiting: a full buffer drops it.
func (e *Elector) emit(ev Event) {
	ev.At = time.Now()
	select {
	case e.events <- ev:
	default:
		e.dropped.Add(1)
	}
}
