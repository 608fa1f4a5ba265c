package redlock

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// Sentinel errors. Errors returned by this package wrap one of them, so
// callers test with errors.Is.
var (
	// ErrNotAcquired: no majority granted the lock within its validity.
	// A *[QuorumError] with every node's answer is in the chain.
	ErrNotAcquired = errors.New("redlock: not acquired")

	// ErrNotHeld: the lock is no longer held (its local deadline passed,
	// it was released, or a majority no longer holds our value).
	ErrNotHeld = errors.New("redlock: lock not held")

	// ErrNoHolder: Inspect found no value held by a majority of nodes.
	ErrNoHolder = errors.New("redlock: no holder")

	// ErrInvalidConfig: a Config or the node list given to New is invalid.
	ErrInvalidConfig = errors.New("redlock: invalid config")

	// ErrInvalidArgument: a key, TTL or option given to a call is invalid.
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

// Vote is one node's answer to one request.
type Vote int

// The votes a node can give.
const (
	VoteError       Vote = iota // no valid answer: timeout, connection or Redis error
	VoteYes                     // granted (acquire, extend) or deleted (release)
	VoteNo                      // held by another value, or no longer ours
	VoteQuarantined             // the node may have forgotten locks: it does not vote yet
)

func (v Vote) String() string {
	switch v {
	case VoteYes:
		return "yes"
	case VoteNo:
		return "no"
	case VoteQuarantined:
		return "quarantined"
	default:
		return "error"
	}
}

// NodeResult is one node's answer to one request.
type NodeResult struct {
	// Node is the node's address as [Client.Nodes] reports it; for a copy
	// of a [NewCluster] Client, "slot <n>" (one bucket) or "copy <i>"
	// (several), which never changes.
	Node string
	// Master is, for a copy of a NewCluster Client, the address of the
	// master serving its slot as redlock last saw it (at start-up, after
	// a node error, after a reply from another server than before, and
	// at least every 10s in use); "" if unknown, and for other nodes.
	Master string
	Vote   Vote
	// Err is the node's error when Vote is VoteError.
	Err error
	// Quarantine is how long the node still refuses to vote, when Vote is
	// VoteQuarantined (0: over, awaiting its fencing floor to be raised).
	Quarantine time.Duration
}

func (r NodeResult) String() string {
	node := r.Node
	if r.Master != "" {
		node += " (" + r.Master + ")"
	}
	switch r.Vote {
	case VoteError:
		return fmt.Sprintf("%s: %v", node, r.Err)
	case VoteQuarantined:
		return fmt.Sprintf("%s: quarantined for %s", node, r.Quarantine.Round(time.Millisecond))
	default:
		return fmt.Sprintf("%s: %s", node, r.Vote)
	}
}

// ErrNotAwaited is the Err of a [NodeResult] (with VoteError) whose node
// was still answering when the other nodes' answers had decided the
// outcome. It says nothing about that node: it may be healthy, only slower.
var ErrNotAwaited = errors.New("not awaited: the outcome was decided without this node")

// QuorumError reports a request that did not reach a majority, with every
// node's answer. It matches (errors.Is) the sentinel of its operation:
// ErrNotAcquired for acquire, ErrNotHeld for extend.
type QuorumError struct {
	Op     string // "acquire", "extend", "fence"
	Key    string
	Need   int // votes needed: N/2+1
	Yes    int // votes granted
	Nodes  []NodeResult
	Reason string // why it failed when the votes alone do not say (e.g. validity)
	target error
}

func (e *QuorumError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%v: %s %q: %d of %d nodes agreed, %d needed", e.target, e.Op, e.Key, e.Yes, len(e.Nodes), e.Need)
	if e.Reason != "" {
		fmt.Fprintf(&b, " (%s)", e.Reason)
	}
	sep := ": "
	for _, n := range e.Nodes {
		if n.Vote == VoteYes {
			continue
		}
		b.WriteString(sep)
		b.WriteString(n.String())
		sep = "; "
	}
	return b.String()
}

// Unwrap returns the operation's sentinel error.
func (e *QuorumError) Unwrap() error { return e.target }

// Is reports whether target is [ErrAccessDenied] and refused credentials
// or permissions left too few nodes for a majority.
func (e *QuorumError) Is(target error) bool {
	if target != ErrAccessDenied {
		return false
	}
	denied := 0
	for _, n := range e.Nodes {
		if n.Vote == VoteError && accessDenied(n.Err) {
			denied++
		}
	}
	return denied > len(e.Nodes)-e.Need
}

// Quarantined returns the nodes that refused to vote because they may have
// forgotten their locks, with how long each still waits.
func (e *QuorumError) Quarantined() []NodeResult {
	var out []NodeResult
	for _, n := range e.Nodes {
		if n.Vote == VoteQuarantined {
			out = append(out, n)
		}
	}
	return out
}

// Errors of Extend and Release that leave the lock's state as it was.
var (
	// ErrNotExtended: an extend did not reach a majority; the lock keeps
	// its previous deadline and may be extended again before it.
	ErrNotExtended = errors.New("redlock: not extended")

	// ErrNotReleased: some nodes could not be reached by a release; their
	// copies of the lock expire with its TTL.
	ErrNotReleased = errors.New("redlock: not released on every node")
)
