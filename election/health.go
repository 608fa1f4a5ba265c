package election

import (
	"fmt"
	"net/http"
	"time"
)

// Healthy reports whether the elector is in a state it should not be in
// for longer than tolerance, as an error matching [ErrUnhealthy]:
//
//   - it believes it leads (the term's context is alive) while the term's
//     deadline passed more than tolerance ago: the term should have ended
//     by its lease's local timer, so the process is stalled (CPU
//     starvation, a stuck runtime) and must not be trusted to lead;
//   - a past term's OnElected is still running more than tolerance after
//     the validity the term had when it ended: the leader's work outlives
//     its term, and another leader may be running beside it.
//
// A standby is healthy. Like client-go's leader-election healthz adaptor,
// this is meant for a liveness probe: restarting such a process is the
// remedy. Healthy is safe for concurrent use.
func (e *Elector) Healthy(tolerance time.Duration) error {
	now := time.Now()
	e.mu.Lock()
	cur, old := e.cur, e.lingering
	e.mu.Unlock()
	if cur != nil && cur.ctx.Err() == nil {
		if late := now.Sub(cur.l.Deadline()); late > tolerance {
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
	return nil
}

// HealthCheck returns an HTTP handler for a liveness probe: 200 "ok" while
// [Elector.Healthy](tolerance) is nil, 503 with the error otherwise. It is
// safe for concurrent use.
func HealthCheck(e *Elector, tolerance time.Duration) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		if err := e.Healthy(tolerance); err != nil {
			w.WriteHeader(http.StatusServiceUnavailable)
			fmt.Fprintln(w, err)
			return
		}
		fmt.Fprintln(w, "ok")
	})
}
