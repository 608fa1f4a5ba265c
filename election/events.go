package election

import "time"

// EventKind says what an [Event] reports.
type EventKind int

// The kinds of events.
const (
	// EventElected: a term of this elector began (Event.Term).
	EventElected EventKind = iota + 1
	// EventDemoted: a term of this elector ended and was released
	// (Event.Term, Event.Cause).
	EventDemoted
	// EventLeaderChanged: the leader the elector sees changed
	// (Event.Leader; zero for no leader).
	EventLeaderChanged
)

// String returns "elected", "demoted" or "leader changed".
func (k EventKind) String() string {
	switch k {
	case EventElected:
		return "elected"
	case EventDemoted:
		return "demoted"
	case EventLeaderChanged:
		return "leader changed"
	default:
		return "unknown"
	}
}

// Event is one thing an elector reports on [Elector.Events]. Events come
// in the order the elector saw them, at the same moments as the
// callbacks: EventLeaderChanged with OnLeaderChange, EventElected just
// before OnElected starts, EventDemoted just before OnDemoted.
type Event struct {
	Kind EventKind
	At   time.Time
	// Term is the term that began or ended (EventElected, EventDemoted).
	Term Term
	// Cause is why the term ended (EventDemoted): see Callbacks.OnDemoted.
	Cause error
	// Leader is the new leader (EventLeaderChanged); zero for no leader.
	Leader Leader
}

// emit sends ev without ever waiting: a full buffer drops it.
func (e *Elector) emit(ev Event) {
	ev.At = time.Now()
	select {
	case e.events <- ev:
	default:
		e.dropped.Add(1)
	}
}
