// Package reach lets the packages built on redlock ask a *redlock.Client
// what its nodes last said, without an exported method: when a majority of
// them last answered (with a vote of any kind: yes, no, or quarantined),
// and which of them do not vote yet because they are quarantined. The
// health checks of package election read it.
//
// See docs/design.md §6.1 (health), §4.9 (quarantine) and §1.2 (internal
// packages).
package reach

import "time"

// Funcs are the functions package redlock registers; client is a
// *redlock.Client.
type Funcs struct {
	LastMajority func(client any) time.Time
	Nodes        func(client any) []Node
}

// Node is what a client last heard from one of its voters.
type Node struct {
	// Answered is when the node last answered a request (a vote of any
	// kind, a quarantined one included); the zero Time if never.
	Answered time.Time
	// Quarantined: the last answer that read the node's quarantine marker
	// said that it does not vote yet.
	Quarantined bool
	// Left is, when Quarantined, how long its quarantine still runs (0:
	// over, its fencing floor not raised yet).
	Left time.Duration
}

var funcs *Funcs

// Register is called once, by package redlock's init.
func Register(f Funcs) { funcs = &f }

func get() *Funcs {
	if funcs == nil {
		panic("reach: package redlock is not linked in")
	}
	return funcs
}

// LastMajority returns when a majority of client's nodes (a
// *redlock.Client) last answered a request, on the monotonic clock; the
// zero Time when that never happened.
func LastMajority(client any) time.Time { return get().LastMajority(client) }

// Nodes returns what client (a *redlock.Client) last heard from each of
// its voters (one bucket's copies on a bucketed cluster), in the order of
// its nodes.
func Nodes(client any) []Node { return get().Nodes(client) }
