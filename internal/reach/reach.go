// Package reach is what a *redlock.Client last heard from its nodes, in
// the terms of the health checks of package election and of `redlease
// status`: which of them answered when, which do not vote yet because they
// are quarantined ([Node], from redlockx.Client.Heard), and why no
// majority can vote while some are quarantined ([Waiting]).
//
// See docs/design.md §6.1 (health), §4.9 (quarantine) and §1.2 (internal
// packages).
package reach

import "time"

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
	// Function: the node runs redlease's scripts as the Function library
	// (FCALL) with its incarnation token; false: by EVALSHA
	// (docs/design.md §4.7.5).
	Function bool
}
