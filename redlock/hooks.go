package redlock

import (
	"errors"
	"time"
)

// Hooks receives typed events from a [Client] and from everything built on
// it: the leases of package lease, the electors of package election and
// the observers of package observer report through the Hooks of the
// Client they use (Config.Hooks), so one implementation sees every
// acquisition, extension, release, lost lease, term and node error of the
// process. Use it to count and time them in a metrics system; the modules
// contrib/prometheus and contrib/otel are ready-made adapters
// (docs/observability.md lists their metrics).
//
// Observe is called synchronously, where the event happens, from the
// goroutine of the call or of the lease or elector: it must be safe for
// concurrent use, must not block, and must not call back into the Client
// (increment a counter, observe a histogram, and return). The Event is a
// value; it may be kept.
type Hooks interface {
	Observe(Event)
}

// EventKind says what an [Event] reports. Its String is the value of the
// "op" label of the adapters' metrics.
type EventKind int

// The kinds of events, and the fields each one sets (Key always; Err is nil
// on success and otherwise says why not).
const (
	// EventAcquire: one acquisition attempt ended (every attempt of
	// [Client.Acquire], each [Client.TryAcquire], each campaign attempt of
	// an elector). Token on success; Duration is the attempt's.
	EventAcquire EventKind = iota + 1
	// EventExtend: one [Lock.Extend] ended (every refresh of a lease or
	// a term). Token; Duration; Spare.
	EventExtend
	// EventRelease: one [Lock.Release] ended. Token; Duration.
	EventRelease
	// EventLost: a lease (or an elector's term) was lost: not refreshed
	// before its deadline, or refused by a majority. Token; Err says why.
	EventLost
	// EventElected: a term of an elector began. Token.
	EventElected
	// EventDemoted: a term of an elector ended and was released. Token;
	// Duration is the term's length; Err is why it ended.
	EventDemoted
	// EventLeaderChanged: an elector or an observer's Watch saw another
	// leader. Token is the new leader's (0: nobody leads).
	EventLeaderChanged
	// EventNodeError: a node gave no valid answer to one request: a
	// timeout, a connection error or an error reply. Node; Err. Key is
	// empty: one request may serve several keys.
	EventNodeError
)

// String returns the kind as the adapters label it: "acquire", "extend",
// "release", "lost", "elected", "demoted", "leader_changed", "node_error".
func (k EventKind) String() string {
	switch k {
	case EventAcquire:
		return "acquire"
	case EventExtend:
		return "extend"
	case EventRelease:
		return "release"
	case EventLost:
		return "lost"
	case EventElected:
		return "elected"
	case EventDemoted:
		return "demoted"
	case EventLeaderChanged:
		return "leader_changed"
	case EventNodeError:
		return "node_error"
	default:
		return "unknown"
	}
}

// Event is one fact reported to [Hooks]: what happened (Kind), to which
// key or node, how long it took, and how it ended (Err, summed up by
// Outcome). Fields a kind does not set are zero.
type Event struct {
	// Kind says what happened, and which other fields are set.
	Kind EventKind
	// Key is the lock key, lease key or election name.
	Key string
	// Node is the node's name as [Client.Nodes] gives it (EventNodeError).
	Node string
	// Token is the fencing token of the lock, lease or term concerned.
	Token uint64
	// Duration is how long the call took (acquire, extend, release), or
	// how long the term lasted (demoted).
	Duration time.Duration
	// Spare is, on EventExtend, how many nodes hold the lock's copy
	// beyond the majority it needs, as far as the holder knows: N less
	// the quorum (N/2+1), less every node that answered an extend that the
	// copy is gone there (expired or deleted: an extend never re-creates
	// it), 0 at least. 0 means a bare majority: one more lost copy and the
	// lock can no longer be extended. A node that does not answer counts
	// as holding until it answers. The client also logs each change once,
	// as a warning. 0 on the other kinds.
	Spare int
	// Err is nil when the operation succeeded, and otherwise why not.
	Err error
	// Outcome sums Err up in one word, the value of the "outcome" label
	// of the adapters' metrics; set on every event this module reports:
	//   - "ok": Err is nil;
	//   - "busy": a majority of nodes answered no (the key is held by
	//     another value, or no longer ours);
	//   - "refused": an error a retry meets again (see [IsFinal]:
	//     WRONGTYPE, NOPERM, wrong credentials, a bad argument, a closed
	//     client);
	//   - "timeout": a node, or a majority, did not answer in time;
	//   - "error": anything else (unreachable nodes, quarantine, a context
	//     that ended).
	Outcome string
}

// outcome sums err up in one word: the value of Event.Outcome (see there).
func outcome(err error) string {
	if err == nil {
		return "ok"
	}
	if IsFinal(err) || finalReply(err) {
		return "refused"
	}
	if qe, ok := errors.AsType[*QuorumError](err); ok {
		no, timeouts := 0, 0
		for _, n := range qe.Nodes {
			switch {
			case n.vote() == voteNo:
				no++
			case isTimeout(n.Err):
				timeouts++
			}
		}
		switch {
		case no >= qe.Need:
			return "busy"
		case timeouts > len(qe.Nodes)-qe.Need:
			return "timeout"
		}
		return "error"
	}
	if isTimeout(err) {
		return "timeout"
	}
	return "error"
}

// isTimeout reports an error that says a wait ran out
// (context.DeadlineExceeded and net.Error timeouts say so too).
func isTimeout(err error) bool {
	t, ok := errors.AsType[interface {
		error
		Timeout() bool
	}](err)
	return ok && t.Timeout()
}

// observe reports ev to the client's Hooks, if any.
func (c *Client) observe(ev Event) {
	if c.cfg.Hooks != nil && !c.left.Load() {
		ev.Outcome = outcome(ev.Err)
		c.cfg.Hooks.Observe(ev)
	}
}
