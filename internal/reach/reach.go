// Package reach lets the packages built on redlock ask a *redlock.Client
// when a majority of its nodes last answered (with a vote of any kind:
// yes, no, or quarantined), without an exported method: the health checks
// of package election read it.
//
// See docs/design.md §6.1 (health) and §1.2 (internal packages).
package reach

import "time"

// lastMajority is registered by package redlock (see Register).
var lastMajority func(client any) time.Time

// Register is called once, by package redlock's init, with the function
// that answers LastMajority.
func Register(f func(client any) time.Time) { lastMajority = f }

// LastMajority returns when a majority of client's nodes (a
// *redlock.Client) last answered a request, on the monotonic clock; the
// zero Time when that never happened.
func LastMajority(client any) time.Time {
	if lastMajority == nil {
		panic("reach: package redlock is not linked in")
	}
	return lastMajority(client)
}
