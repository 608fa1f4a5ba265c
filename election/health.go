package election

import (
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/redlease/redlease/internal/reach"
	"github.com/redlease/redlease/redlock"
)

// health is what Run records for the health checks.
type health struct {
	mu      sync.Mutex
	started time.Time // when Run began; zero before
	ended   error     // why Run returned; nil while it runs (or before)
	keyErr  error     // the last attempt's error when a retry meets it again, nil after any other
}

func (h *health) runStarted() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.started, h.ended = time.Now(), nil
}

func (h *health) runEnded(err error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.ended = err
}

// attempted records the outcome of a campaign attempt: an error that a
// retry meets again (WRONGTYPE, NOPERM, wrong credentials on a majority:
// redlock.IsFinal) makes the key unusable until an attempt ends otherwise.
func (h *health) attempted(err error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.keyErr = nil
	if err != nil && redlock.IsFinal(err) {
		h.keyErr = err
	}
}

func (h *health) get() (started time.Time, ended, keyErr error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.started, h.ended, h.keyErr
}

// Healthy reports, as an error matching [ErrUnhealthy] that says why,
// whether the elector is unfit to lead or to stand by: the conditions of
// liveness (see [LivenessCheck]: a stalled leader, a term's work outliving
// the term, Run returned) and those of readiness:
//
//   - the election's key is unusable: the last campaign attempt failed with
//     an error a retry meets again on a majority of nodes (WRONGTYPE: the
//     key holds another type of value; NOPERM: an ACL refuses it; wrong
//     credentials), until an attempt ends otherwise;
//   - no majority of nodes can vote because some answered that they are
//     quarantined (new to redlease, or restarted, flushed, failed over:
//     docs/design.md §4.9), the others not voting either or not having
//     answered within the TTL plus tolerance: nobody can be elected until
//     the quarantines end. The error says "waiting: 2 of 3 nodes
//     quarantined, 27s left". This holds from the first answer that says
//     so (New's start-up check included, so even before Run), with no
//     grace: a fresh deployment that was not bootstrapped is not ready for
//     MaxTTL;
//   - no majority of nodes has answered (with a vote of any kind, a
//     quarantined node's included) for longer than the TTL plus tolerance,
//     counted from the start of Run at the earliest: the elector can
//     neither be elected nor tell who leads.
//
// A leader within its term is never in the last two states (its term was
// refreshed by a majority).
//
// Each condition clears by itself when its cause does (a node answers
// again, a new Run begins); a returned Run is unhealthy until Run is called
// again. Before Run, only the quarantine is judged. Healthy is safe for
// concurrent use.
func (e *Elector) Healthy(tolerance time.Duration) error {
	if err := e.live(tolerance); err != nil {
		return err
	}
	started, _, keyErr := e.h.get()
	if keyErr != nil {
		return fmt.Errorf("%w: %q: the election's key is unusable: %w", ErrUnhealthy, e.name, keyErr)
	}
	if e.IsLeader() {
		return nil
	}
	if err := e.quarantined(started, tolerance); err != nil {
		return err
	}
	if started.IsZero() {
		return nil
	}
	since := e.client.Internal().LastMajority()
	if since.Before(started) {
		since = started
	}
	if silent := time.Since(since); silent > e.cfg.Lease.TTL+tolerance {
		return fmt.Errorf("%w: %q: no majority of nodes (%d of %d) has answered for %s (TTL %s, tolerance %s)",
			ErrUnhealthy, e.name, e.client.Internal().Quorum(), len(e.client.Internal().Nodes()), silent.Round(time.Millisecond), e.cfg.Lease.TTL, tolerance)
	}
	return nil
}

// quarantined reports a majority of nodes that cannot vote while some of
// them answered that they are quarantined (see Healthy).
func (e *Elector) quarantined(started time.Time, tolerance time.Duration) error {
	if w, ok := e.waiting(started, tolerance); ok {
		return fmt.Errorf("%w: %q: %s", ErrUnhealthy, e.name, w)
	}
	return nil
}

// waiting reports whether no majority of nodes can vote while some of them
// answered that they are quarantined, and how long until enough of them
// vote. A node counts as voting when its last answer said so, within the
// TTL plus tolerance (counted from started at the earliest).
func (e *Elector) waiting(started time.Time, tolerance time.Duration) (reach.Waiting, bool) {
	now := time.Now()
	nodes := e.client.Internal().Heard()
	voting := 0
	var left []time.Duration
	for _, n := range nodes {
		switch {
		case n.Quarantined:
			left = append(left, n.Left)
		case !n.Answered.IsZero() && now.Sub(later(n.Answered, started)) <= e.cfg.Lease.TTL+tolerance:
			voting++
		}
	}
	return reach.Wait(len(nodes), e.client.Internal().Quorum(), voting, left)
}

// later is the later of a and b.
func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// live reports the conditions of liveness: states that a restart of the
// process remedies.
//
//   - it believes it leads (the term's context is alive) while the term's
//     deadline passed more than tolerance ago: the term should have ended
//     by its lease's local timer, so the process is stalled (CPU
//     starvation, a stuck runtime) and must not be trusted to lead;
//   - a past term's OnElected is still running more than tolerance after
//     the validity the term had when it ended: the leader's work outlives
//     its term, and another leader may be running beside it;
//   - Run has returned: the elector no longer campaigns.
func (e *Elector) live(tolerance time.Duration) error {
	now := time.Now()
	e.mu.Lock()
	cur, old := e.cur, e.lingering
	e.mu.Unlock()
	if cur != nil && cur.ctx.Err() == nil {
		// The term's deadline: where its lease's timer ends it.
		if late := now.Sub(cur.l.ValidUntil().Add(-e.cfg.Lease.SafetyMargin)); late > tolerance {
			return fmt.Errorf("%w: %q: leading %s past the term's deadline (token %d, tolerance %s)",
				ErrUnhealthy, e.name, late.Round(time.Millisecond), cur.Token, tolerance)
		}
	}
	if old != nil && !closed(old.elected) {
		if late := now.Sub(old.validEnd); late > tolerance {
			return fmt.Errorf("%w: %q: OnElected of term %d still runs %s after the term's validity ended (tolerance %s)",
				ErrUnhealthy, e.name, old.Token, late.Round(time.Millisecond), tolerance)
		}
	}
	if _, ended, _ := e.h.get(); ended != nil {
		if redlock.IsFinal(ended) {
			return fmt.Errorf("%w: %q: Run returned: the election's key is unusable: %w", ErrUnhealthy, e.name, ended)
		}
		return fmt.Errorf("%w: %q: Run returned: %w", ErrUnhealthy, e.name, ended)
	}
	return nil
}

// HealthCheck returns an HTTP handler for a readiness probe: 200 "ok"
// while [Elector.Healthy](tolerance) is nil, 503 with the reason
// otherwise. It turns unhealthy when Run has returned, when the election's
// key is unusable, while no majority of nodes can vote because some are
// quarantined (the body says how many and how long is left: "waiting: 2 of
// 3 nodes quarantined, 27s left"), when no majority of nodes has answered
// within the TTL, and in the states of [LivenessCheck]; it turns ok again
// as soon as the cause clears. Mount it as the readiness probe: a Redis
// outage or a quarantine makes it fail, and restarting the process would
// not help (so [LivenessCheck] ignores both). It is safe for concurrent
// use.
func HealthCheck(e *Elector, tolerance time.Duration) http.Handler {
	return probe(func() error { return e.Healthy(tolerance) })
}

// LivenessCheck returns an HTTP handler for a liveness probe: 200 "ok",
// or 503 with the reason while the elector is in a state that restarting
// the process remedies: it leads more than tolerance past its term's
// deadline (the process is stalled), a term's OnElected runs more than
// tolerance after the term's validity ended, or Run has returned. Like
// client-go's leader-election healthz adaptor, it does not fail for a
// Redis outage nor while nodes are quarantined (see [HealthCheck] for
// those): a process restarted for them would find them as they were. It is
// safe for concurrent use.
func LivenessCheck(e *Elector, tolerance time.Duration) http.Handler {
	return probe(func() error { return e.live(tolerance) })
}

// probe is the handler of a check.
func probe(check func() error) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		if err := check(); err != nil {
			w.WriteHeader(http.StatusServiceUnavailable)
			fmt.Fprintln(w, err)
			return
		}
		fmt.Fprintln(w, "ok")
	})
}
