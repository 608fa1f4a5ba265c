package redlock

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// Sentinel errors. Errors returned by this package wrap one of them, so
// callers test with errors.Is, except the *[QuorumError] of an Extend or a
// Release that left the lock as it was (its Op says which).
var (
	// ErrNotAcquired: no majority granted the lock within its validity.
	// A *[QuorumError] with every node's answer is in the chain.
	ErrNotAcquired = errors.New("redlock: not acquired")

	// ErrNotHeld: the lock is no longer held (its local deadline passed,
	// it was released, or a majority no longer holds our value).
	ErrNotHeld = errors.New("redlock: lock not held")

	// ErrNoHolder: Inspect found no value held by a majority of nodes.
	ErrNoHolder = errors.New("redlock: no holder")

	// ErrInvalidArgument: an argument of a call is invalid: a key, TTL
	// or option, a Config (of this package or of the packages built on
	// it: New, Acquire and the like say which field and value), or the node list
	// given to New.
	ErrInvalidArgument = errors.New("redlock: invalid argument")

	// ErrClosed: the Client was closed.
	ErrClosed = errors.New("redlock: client closed")

	// ErrAccessDenied: nodes refused our credentials (WRONGPASS, NOAUTH)
	// or an ACL refused a command or key (NOPERM). Final until an operator
	// changes them: [New] returns it when a node refuses at start-up, and
	// a *[QuorumError] matches it when such refusals left no majority, so
	// Acquire (and the election's Run) return it without retrying.
	ErrAccessDenied = errors.New("redlock: access denied")
)

// vote is one node's answer to one request.
type vote int

// The votes a node can give.
const (
	voteError       vote = iota // no valid answer: timeout, connection or Redis error
	voteYes                     // granted (acquire, extend) or deleted (release)
	voteNo                      // held by another value, or no longer ours
	voteQuarantined             // the node may have forgotten locks: it does not vote yet
)

func (v vote) String() string {
	switch v {
	case voteYes:
		return "yes"
	case voteNo:
		return "no"
	case voteQuarantined:
		return "quarantined"
	default:
		return "error"
	}
}

// NodeResult is one node's answer to one request: to a vote (acquire,
// extend, release: in a [QuorumError]) yes (Yes), an error (Err),
// quarantined (Quarantined), or else no (the key is held by another value,
// or no longer ours); to a read ([Client.Inspect]) its view of the key
// (Value, TTL, Counter), an error, and whether it votes.
type NodeResult struct {
	// Node is the node's stable name, the same in every result, event
	// and log: the address of a redis.Client, the seed addresses of a
	// ClusterClient; for a copy of a [NewCluster] Client, "slot <n>" (one
	// bucket) or "copy <i>" (several). A client whose options name no
	// server (one made by redis.NewFailoverClient for a Sentinel group,
	// or a type redlock does not know) is named by its position,
	// "failover#0" ("node#0"). Errors and logs add the server that
	// answered last, such as "failover#0@10.0.0.5:6379" (the address the
	// server says the connection reached, CLIENT INFO laddr;
	// "failover#0@run_id:<12 hex digits>..." where CLIENT is refused),
	// which follows a Sentinel group's master. Names are for people:
	// nodes are told apart by run_id.
	Node string
	// Master is, for a copy of a NewCluster Client, the address of the
	// master serving its slot as redlock last saw it (at start-up, after
	// a node error, after a reply from another server than before, and
	// at least every 10s in use); "" if unknown, and for other nodes.
	Master string
	// Yes: the node granted (acquire, extend) or deleted (release); not
	// set by Inspect.
	Yes bool
	// Err is why the node gave no valid answer (a timeout, a connection
	// error, an error reply); nil when it answered.
	Err error
	// Quarantined: the node may have forgotten its locks (restarted empty,
	// flushed, failed over) and does not vote yet: it is in its
	// quarantine, or its fencing floor is not raised yet to the highest
	// token of a healthy majority. Raising it needs no lock traffic: any
	// call of a Client (Inspect included) raises it, in the background,
	// from its quarantine onwards, or, when no healthy majority could give
	// a floor then, within one call of its quarantine's end; a Client in
	// use checks every 10s in any case (docs/design.md §4.9).
	Quarantined bool
	// Quarantine is how long the node still refuses to vote, when
	// Quarantined (0: over, awaiting its fencing floor to be raised).
	Quarantine time.Duration
	// Value is, for Inspect, the key's value on the node: "" when the key
	// is absent (or the node is in error).
	Value string
	// TTL is, for Inspect, the key's PTTL on the node; 0 when absent.
	TTL time.Duration
	// Counter is, for Inspect, the node's fencing counter for the key.
	Counter uint64
}

// vote is r's vote.
func (r NodeResult) vote() vote {
	switch {
	case r.Err != nil:
		return voteError
	case r.Quarantined:
		return voteQuarantined
	case r.Yes:
		return voteYes
	}
	return voteNo
}

// describe says what r answered, for errors and logs.
func (r NodeResult) describe() string {
	node := r.Node
	if r.Master != "" {
		node += " (" + r.Master + ")"
	}
	switch r.vote() {
	case voteError:
		return fmt.Sprintf("%s: %v", node, r.Err)
	case voteQuarantined:
		return fmt.Sprintf("%s: quarantined for %s", node, r.Quarantine.Round(time.Millisecond))
	default:
		return fmt.Sprintf("%s: %s", node, r.vote())
	}
}

// QuorumError reports a request that did not reach a majority, with every
// node's answer (test with errors.As). An acquire's matches (errors.Is)
// [ErrNotAcquired]. An extend's ([Lock.Extend], [Client.ExtendAll]) says
// that the lock keeps its previous deadline and may be extended again
// before it; a release's ([Lock.Release]), that some nodes could not be
// reached, and their copies expire with the TTL. Any of them matches
// [ErrAccessDenied] too when refused credentials or permissions left too
// few nodes for a majority.
type QuorumError struct {
	Op     string       // "acquire", "extend", "release", "fence"
	Key    string       // the lock's key
	Need   int          // votes needed: N/2+1
	Yes    int          // votes granted
	Nodes  []NodeResult // every node's answer, in the order given to New
	Reason string       // why it failed when the votes alone do not say (e.g. validity)
	target error
}

// Error says what failed, the votes, and why each node that did not
// grant did not.
func (e *QuorumError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%v: %s %q: %d of %d nodes agreed, %d needed", e.target, e.Op, e.Key, e.Yes, len(e.Nodes), e.Need)
	if e.Reason != "" {
		fmt.Fprintf(&b, " (%s)", e.Reason)
	}
	sep := ": "
	for _, n := range e.Nodes {
		if n.Yes {
			continue
		}
		b.WriteString(sep)
		b.WriteString(n.describe())
		sep = "; "
	}
	return b.String()
}

// Unwrap returns the operation's sentinel error, and [ErrAccessDenied]
// when refused credentials or permissions left too few nodes for a
// majority, for errors.Is.
func (e *QuorumError) Unwrap() []error {
	denied := 0
	for _, n := range e.Nodes {
		if accessDenied(n.Err) {
			denied++
		}
	}
	if denied > len(e.Nodes)-e.Need {
		return []error{e.target, ErrAccessDenied}
	}
	return []error{e.target}
}

// The operations' errors in the *QuorumError of an Extend or a Release that
// left the lock's state as it was (named in its message).
var (
	// errNotExtended: an extend did not reach a majority; the lock keeps
	// its previous deadline and may be extended again before it.
	errNotExtended = errors.New("redlock: not extended")

	// errNotReleased: some nodes could not be reached by a release; their
	// copies of the lock expire with its TTL.
	errNotReleased = errors.New("redlock: not released on every node")
)
