package main

import (
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/redlease/redlease/election"
	"github.com/redlease/redlease/internal/redlockx"
	"github.com/redlease/redlease/redlock"
)

// nodeWarnEvery is how often `redlease run` sums up a warning that repeats
// (the same node failing for the same cause).
const nodeWarnEvery = 10 * time.Second

// runHooks logs what the client's events tell and its logs do not:
// campaign attempts that nodes could not vote on (down, unreachable,
// quarantined), naming them, and failed refreshes of the term, each
// throttled per node and cause. It also ends the campaign (giveUp) when no
// majority of nodes has answered the attempts for wait (0: never). Safe for
// concurrent use.
type runHooks struct {
	log  hclog.Logger
	warn *throttle
	wait time.Duration

	mu      sync.Mutex
	giveUp  func(error) // ends the campaign with this cause; nil: not yet campaigning
	silent  time.Time   // since when attempts have lacked a majority of answers
	lastBad time.Time   // the last such attempt
	stopped bool
}

func newRunHooks(log hclog.Logger, wait time.Duration) *runHooks {
	return &runHooks{log: log, warn: newThrottle(nodeWarnEvery), wait: wait}
}

// campaigning sets the function that ends the campaign.
func (h *runHooks) campaigning(giveUp func(error)) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.giveUp = giveUp
}

// Observe is the function for redlock.Config.Hooks.
func (h *runHooks) Observe(ev redlock.Event) {
	switch {
	case ev.Kind == redlock.EventAcquire && ev.Err != nil:
		h.acquireFailed(ev.Err)
	case ev.Kind == redlock.EventAcquire, ev.Kind == election.EventLeaderChanged:
		h.majority(true, nil) // a majority answered
	case ev.Kind == redlock.EventExtend && ev.Err != nil:
		h.refreshFailed(ev.Err)
	}
}

// acquireFailed warns about each node that could not vote in an attempt:
// the first time for a node and cause, then once per nodeWarnEvery with a
// count; and gives up once no majority has answered for too long.
func (h *runHooks) acquireFailed(err error) {
	qe, ok := errors.AsType[*redlock.QuorumError](err)
	if !ok {
		return
	}
	answered := 0
	for _, n := range qe.Nodes {
		switch {
		case errors.Is(n.Err, redlockx.ErrNotAwaited):
			// It answered too late to matter, which says nothing about it.
		case n.Err != nil:
			h.warnNode(n, cause(n.Err), qe)
		case n.Quarantined:
			answered++ // it answered; its quarantine ends by itself
			h.warnNode(n, "quarantined", qe)
		default:
			answered++
		}
	}
	h.majority(answered >= qe.Need, qe)
}

// warnNode logs that node n could not vote, throttled per node and cause.
func (h *runHooks) warnNode(n redlock.NodeResult, cause string, qe *redlock.QuorumError) {
	log, held := h.warn.allow(n.Node + "\x00" + cause)
	switch {
	case !log:
	case held == 0:
		h.log.Warn("campaign attempt: node could not vote", "node", n.Node, "cause", nodeCause(n),
			"granted", qe.Yes, "needed", qe.Need)
	default:
		h.log.Warn("campaign attempts: node still could not vote", "node", n.Node, "cause", nodeCause(n),
			"times", held, "within", nodeWarnEvery)
	}
}

// nodeCause says why node n could not vote, as its answer gives it.
func nodeCause(n redlock.NodeResult) string {
	node := n.Node
	if n.Master != "" {
		node += " (" + n.Master + ")"
	}
	if n.Quarantined {
		return fmt.Sprintf("%s: quarantined for %s", node, n.Quarantine.Round(time.Millisecond))
	}
	return fmt.Sprintf("%s: %v", node, n.Err)
}

// majority tracks how long attempts have gone without a majority of
// answers, and gives up after h.wait. An attempt after a quiet spell of
// nodeWarnEvery (a standby that only reads) starts a new count.
func (h *runHooks) majority(ok bool, qe *redlock.QuorumError) {
	h.mu.Lock()
	defer h.mu.Unlock()
	now := time.Now()
	if ok {
		h.silent = time.Time{}
		return
	}
	if h.silent.IsZero() || now.Sub(h.lastBad) >= nodeWarnEvery {
		h.silent = now
	}
	h.lastBad = now
	if h.wait <= 0 || h.stopped || h.giveUp == nil || now.Sub(h.silent) < h.wait {
		return
	}
	h.stopped = true
	h.giveUp(fmt.Errorf("%w: fewer than %d of %d nodes answered for %s (--wait-majority); last attempt: %w",
		errNoMajority, qe.Need, len(qe.Nodes), h.wait, qe))
}

// refreshFailed warns of failed refreshes of the term, throttled per
// cause: the term ends at its deadline unless one succeeds before.
func (h *runHooks) refreshFailed(err error) {
	log, held := h.warn.allow("refresh\x00" + cause(err))
	switch {
	case !log:
	case held == 0:
		h.log.Warn("refresh of the term failed; retrying until its deadline", "error", err)
	default:
		h.log.Warn("refreshes of the term still fail", "error", err, "times", held, "within", nodeWarnEvery)
	}
}
