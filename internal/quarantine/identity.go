package quarantine

import (
	"fmt"
	"slices"
	"sync"
)

// Incarnation is one quarantine marker of a node, as its answers show it:
// the run_id of the server that wrote it, and when.
type Incarnation struct {
	Server  int64 // the first 48 bits of the server's run_id (0: unknown)
	Created int64 // when the marker was written (0: no marker seen)
}

// Identity is what a node's answers said about the server behind it, so
// that a change (another server, a marker written anew) is logged once per
// node and event, whichever call sees it first, and the raise of a
// quarantined node's fencing floor once per marker. The zero Identity has
// seen nothing. Safe for concurrent use.
type Identity struct {
	mu     sync.Mutex
	seen   []Incarnation // most recent last, a few kept
	raised []int64       // markers whose floor raise was logged
}

// keptIncarnations bounds what an Identity remembers: calls in flight at a
// change may report the previous marker after the new one, and must not
// make it look like a change again.
const keptIncarnations = 4

// Observe records the marker an answer reports and returns the previous
// incarnation and true when it is one this node has not shown before,
// after a first one (the first is the start-up probe's, logged there).
func (id *Identity) Observe(inc Incarnation) (Incarnation, bool) {
	if inc.Created == 0 {
		return Incarnation{}, false // quarantine off, or no answer
	}
	id.mu.Lock()
	defer id.mu.Unlock()
	if slices.Contains(id.seen, inc) {
		return Incarnation{}, false
	}
	var prev Incarnation
	if len(id.seen) > 0 {
		prev = id.seen[len(id.seen)-1]
	}
	id.seen = append(id.seen, inc)
	if len(id.seen) > keptIncarnations {
		id.seen = slices.Delete(id.seen, 0, 1)
	}
	return prev, prev.Created != 0
}

// FirstRaise reports whether the raise of marker created is the first one
// logged for this node.
func (id *Identity) FirstRaise(created int64) bool {
	id.mu.Lock()
	defer id.mu.Unlock()
	if slices.Contains(id.raised, created) {
		return false
	}
	id.raised = append(id.raised, created)
	if len(id.raised) > keptIncarnations {
		id.raised = slices.Delete(id.raised, 0, 1)
	}
	return true
}

// RunIDText prints a server's id (the first 48 bits of its run_id) as the
// run_id it begins ("...": the scripts report 12 hex digits of the 40).
func RunIDText(id int64) string { return fmt.Sprintf("%012x...", id) }
