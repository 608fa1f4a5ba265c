package election

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redlease/redlease/internal/testnodes"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlease/redlease/lease"
)

// countHooks counts what the hooks report.
type countHooks struct {
	NopHooks
	elected, demoted, won, lost, refreshFailed atomic.Int64
	dropped                                    atomic.Uint64
}

func (h *countHooks) Elected(Term)        { h.elected.Add(1) }
func (h *countHooks) Demoted(Term, error) { h.demoted.Add(1) }
func (h *countHooks) AcquireAttempt(_ time.Duration, err error) {
	if err == nil {
		h.won.Add(1)
	} else {
		h.lost.Add(1)
	}
}
func (h *countHooks) RefreshFailed(error) { h.refreshFailed.Add(1) }
func (h *countHooks) EventDropped(Event)  { h.dropped.Add(1) }

// The hooks see terms, attempts and failed refreshes (the latter from the
// lease's logs: this test breaks if the lease stops reporting them there).
func TestHooks(t *testing.T) {
	ms, nodes := testnodes.Minis(t, 5)
	h := &countHooks{}
	cfg := unitCfg(t, "h")
	cfg.TTL = 2 * time.Second
	cfg.Hooks = h
	e := newElector(t, newClient(t, unitClientCfg, nodes), "hooks", cfg)
	r := start(t, e)
	waitEvent(t, e.Events(), wait, kind(EventElected))
	assert.Equal(t, int64(1), h.elected.Load())
	assert.Equal(t, int64(1), h.won.Load())

	for _, m := range ms[:3] {
		m.Close() // a majority gone: refreshes fail until the term is lost
	}
	ev := waitEvent(t, e.Events(), wait, kind(EventDemoted))
	assert.ErrorIs(t, ev.Cause, lease.ErrLeaseLost)
	assert.Positive(t, h.refreshFailed.Load())
	assert.Equal(t, int64(1), h.demoted.Load())
	within(t, wait, func() bool { return h.lost.Load() > 0 }, "failed attempts are reported")
	require.ErrorIs(t, r.stop(t), ErrStopped)
}

func TestHealthCheck(t *testing.T) {
	_, nodes := testnodes.Minis(t, 3)
	unblock := make(chan struct{})
	clientCfg := unitClientCfg
	clientCfg.NodeTimeout = 200 * time.Millisecond
	cfg := unitCfg(t, "hc")
	cfg.TTL = time.Second
	cfg.StopTimeout = time.Millisecond
	cfg.Callbacks.OnElected = func(context.Context, Term) { <-unblock }
	e := newElector(t, newClient(t, clientCfg, nodes), "health", cfg)
	h := HealthCheck(e, 0)
	get := func() (int, string) {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/healthz", nil))
		return w.Code, w.Body.String()
	}
	code, body := get()
	assert.Equal(t, http.StatusOK, code)
	assert.Equal(t, "ok\n", body)

	r := start(t, e)
	waitEvent(t, e.Events(), wait, kind(EventElected))
	code, _ = get()
	assert.Equal(t, http.StatusOK, code, "a leader within its term is healthy")
	require.NoError(t, e.Resign(context.Background()))
	code, body = get()
	assert.Equal(t, http.StatusServiceUnavailable, code)
	assert.Contains(t, body, "OnElected of term 1 still runs")
	require.ErrorIs(t, r.stop(t), ErrStopped)
	close(unblock)
}
