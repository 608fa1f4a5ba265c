package redlock

import (
	"errors"
	"fmt"
	"time"
)

// EventKind says what an [Event] reports: its value is the value of the
// "op" label of the adapters' metrics. Package redlock defines the kinds of
// a lock below; package election defines its own (election.EventElected,
// EventDemoted, EventLeaderChanged), which its electors report here too.
type EventKind string

// The kinds of a lock's events, and the fields each one sets (Key always;
// Err is nil on success and otherwise says why not).
const (
	// EventAcquire: one acquisition attempt ended (every attempt of
	// [Client.Acquire], each [Client.TryAcquire], each campaign attempt of
	// an elector). Token on success; Duration is the attempt's.
	EventAcquire EventKind = "acquire"
	// EventExtend: one [Lock.Extend] ended (every refresh of a lease or
	// a term). Token; Duration; Spare; Validity.
	EventExtend EventKind = "extend"
	// EventRelease: one [Lock.Release] ended. Token; Duration.
	EventRelease EventKind = "release"
	// EventLost: a lease (or an elector's term) was lost: not refreshed
	// before its deadline, or refused by a majority. Token; Err says why.
	EventLost EventKind = "lost"
	// EventNodeError: a node gave no valid answer to one request: a
	// timeout, a connection error or an error reply. Node; Err. Key is
	// empty: one request may serve several keys. With Evidence
	// "clock_slow", the answer was valid but showed the server's clock
	// run slow or step back against this process's monotonic clock
	// (logged as a warning; it costs no safety: copies outlive their
	// deadline; docs/design.md §6.5).
	EventNodeError EventKind = "node_error"
	// EventQuarantine: an answer showed a node begin a quarantine (it may
	// have forgotten its locks: restarted empty, flushed, replaced; it
	// votes no for MaxTTL, then until its fencing floor is raised), or
	// vote again. Node; Err says why it does not vote, nil once it votes
	// again; Duration is the quarantine it had left when it began. A
	// quarantine that ran out is reported over at the node's next answer.
	// With Evidence "clock_fast", the server's clock was seen jump
	// forward or run fast against this process's monotonic clock (logged
	// at Error): its copies may have expired early, so they stop counting
	// toward the validity of this client's locks, a lock left without a
	// majority ends at once, and its marker is made anew (it votes no for
	// MaxTTL; docs/design.md §6.5).
	EventQuarantine EventKind = "quarantine"
	// EventSplitBrain: an elector or an observer's Watch (packages
	// election, observer) saw evidence that two holders held the key at
	// once: a safety assumption failed (a node that forgot its locks and
	// voted, a server clock that jumped, a key deleted by hand). Key;
	// Token, the other term's; Evidence says which rule; Err describes
	// both terms. Logged at Error too. docs/design.md §6.3 has the
	// rules, and why each is evidence and not a guess.
	EventSplitBrain EventKind = "split_brain"
)

// Event is one fact reported to [Config.Hooks]: what happened (Kind), to which
// key or node, how long it took, and how it ended (Err, summed up by
// Outcome). Fields a kind does not set are zero.
type Event struct {
	// Kind says what happened, and which other fields are set.
	Kind EventKind
	// Key is the lock key, lease key or election name.
	Key string
	// Node is the node's name, as [NodeResult.Node] (EventNodeError).
	Node string
	// Token is the fencing token of the lock, lease or term concerned (of
	// the new leader for election.EventLeaderChanged; 0: nobody leads).
	Token uint64
	// Duration is how long the call took (acquire, extend, release), or
	// how long the term lasted (election.EventDemoted), or how long the
	// election had no leader before the term began, as far as the
	// elector knows (election.EventElected; 0: unknown).
	Duration time.Duration
	// Spare is, on EventExtend, how many nodes hold the lock's copy
	// beyond the majority it needs, as far as the holder knows: N less
	// the quorum (N/2+1), less every node that answered an extend that the
	// copy is gone there (expired or deleted: an extend never re-creates
	// it; the holder restores it there after an extend that succeeded,
	// where no other value and no higher counter holds the key, and it
	// counts again once restored, docs/design.md §4.3), 0 at least. 0 means a bare majority: one more lost copy and the
	// lock can no longer be extended. A node that does not answer counts
	// as holding until it answers. The client also logs each change once,
	// as a warning. 0 on the other kinds.
	Spare int
	// Validity is, on EventExtend, the validity the lock had left, by
	// its deadline before the extend, when the extend returned: the
	// margin by which it was refreshed (a refresh that succeeds with
	// little left came close to losing the lock). 0 on the other kinds.
	Validity time.Duration
	// Evidence is, on EventSplitBrain, which rule saw two holders at
	// once: "overlap" (a holder's majority read found another value on a
	// majority within its own validity) or "token" (a completed term's
	// token not above an earlier completed term's); on EventQuarantine,
	// "clock_fast", and on EventNodeError "clock_slow", when a server's
	// clock was seen jump forward or run slow (see those kinds). "" on the
	// other kinds and events.
	Evidence string
	// Err is nil when the operation succeeded, and otherwise why not
	// (EventSplitBrain: the evidence, both terms described).
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

// reportQuarantines has every node of c report to the Hooks the answers
// that show it begin a quarantine or vote again (EventQuarantine).
func (c *Client) reportQuarantines() {
	if c.cfg.Hooks == nil {
		return
	}
	for _, n := range c.all {
		n.heard.OnChange = func(quarantined bool, left time.Duration) {
			ev := Event{Kind: EventQuarantine, Node: n.addr, Duration: left}
			if quarantined {
				ev.Err = fmt.Errorf("redlock: node %s is quarantined: it may have forgotten its locks; it votes no for %s, then until its fencing floor is raised",
					n.addr, left.Round(time.Millisecond))
			}
			c.observe(ev)
		}
	}
}

// observe reports ev to the client's Hooks, if any.
func (c *Client) observe(ev Event) {
	if c.cfg.Hooks != nil && !c.left.Load() {
		ev.Outcome = outcome(ev.Err)
		c.cfg.Hooks(ev)
	}
}
