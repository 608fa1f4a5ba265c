package main

import (
	"errors"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/redlease/redlease/redlock"
)

// nodeWarnEvery is how often `redlease run` repeats a warning about the
// same nodes failing to vote.
const nodeWarnEvery = 10 * time.Second

// runHooks logs what the client's events tell and its logs do not:
// campaign attempts that nodes could not vote on (down, unreachable,
// quarantined), naming them, and failed refreshes of the term. Safe for
// concurrent use.
type runHooks struct {
	log hclog.Logger

	mu     sync.Mutex
	last   time.Time // of the last warning about nodes
	lastOf string    // the nodes it named
}

// Observe is the redlock.Hooks method.
func (h *runHooks) Observe(ev redlock.Event) {
	switch {
	case ev.Kind == redlock.EventAcquire && ev.Err != nil:
		h.acquireFailed(ev.Err)
	case ev.Kind == redlock.EventExtend && ev.Err != nil:
		h.refreshFailed(ev.Err)
	}
}

// acquireFailed warns when an attempt failed because nodes could not
// vote: once per set of nodes, and again every nodeWarnEvery.
func (h *runHooks) acquireFailed(err error) {
	qe, ok := errors.AsType[*redlock.QuorumError](err)
	if !ok {
		return
	}
	var names, why []string
	for _, n := range qe.Nodes {
		// A node "not awaited" answered too late to matter, which says
		// nothing about it.
		notAwaited := errors.Is(n.Err, redlock.ErrNotAwaited)
		if (n.Vote == redlock.VoteError && !notAwaited) || n.Vote == redlock.VoteQuarantined {
			names = append(names, n.Node)
			why = append(why, n.String())
		}
	}
	if len(names) == 0 {
		return // every node answered: somebody else leads, or a split vote
	}
	of := strings.Join(names, ",")
	h.mu.Lock()
	due := of != h.lastOf || time.Since(h.last) >= nodeWarnEvery
	if due {
		h.last, h.lastOf = time.Now(), of
	}
	h.mu.Unlock()
	if due {
		h.log.Warn("campaign attempt: nodes could not vote", "nodes", strings.Join(why, "; "),
			"granted", qe.Yes, "needed", qe.Need)
	}
}

// refreshFailed warns of every failed refresh of the term: the term ends
// at its deadline unless one succeeds before.
func (h *runHooks) refreshFailed(err error) {
	h.log.Warn("refresh of the term failed; retrying until its deadline", "error", err)
}
