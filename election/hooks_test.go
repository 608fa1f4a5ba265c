package election

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/redlease/redlease/internal/testing/hookstest"
	"github.com/redlease/redlease/internal/testing/testnodes"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlease/redlease/lease"
	"github.com/redlease/redlease/redlock"
)

// The client's hooks see terms, attempts, failed refreshes and the lost
// term as typed events, fed where they happen (no log line is matched).
func TestHooks(t *testing.T) {
	ms, nodes := testnodes.Minis(t, 5)
	h := &hookstest.Recorder{}
	ccfg := unitClientCfg
	ccfg.Hooks = h.Observe
	cfg := unitCfg(t, "h")
	cfg.Lease.TTL = 2 * time.Second
	e := newElector(t, newClient(t, ccfg, nodes), "hooks", cfg)
	r := start(t, e)
	waitEvent(t, e.Events(), wait, kind(EventElected))
	elected := h.Of(EventElected)
	require.Len(t, elected, 1)
	assert.Equal(t, "hooks", elected[0].Key)
	assert.Equal(t, uint64(1), elected[0].Token)
	won := h.Of(redlock.EventAcquire)
	require.NotEmpty(t, won)
	assert.Equal(t, "ok", won[len(won)-1].Outcome)
	assert.Positive(t, won[len(won)-1].Duration)

	for _, m := range ms[:3] {
		m.Close() // a majority gone: refreshes fail until the term is lost
	}
	ev := waitEvent(t, e.Events(), wait, kind(EventDemoted))
	assert.ErrorIs(t, ev.Err, lease.ErrLeaseLost)
	failed := 0
	for _, x := range h.Of(redlock.EventExtend) {
		if x.Err != nil {
			failed++
			assert.Equal(t, "hooks", x.Key)
			assert.NotEqual(t, "ok", x.Outcome)
		}
	}
	assert.Positive(t, failed, "failed refreshes are reported")
	lost := h.Of(redlock.EventLost)
	require.Len(t, lost, 1)
	assert.ErrorIs(t, lost[0].Err, lease.ErrLeaseLost)
	demoted := h.Of(EventDemoted)
	require.Len(t, demoted, 1)
	assert.ErrorIs(t, demoted[0].Err, lease.ErrLeaseLost)
	assert.Positive(t, demoted[0].Duration)
	nodeErrs := h.Of(redlock.EventNodeError)
	require.NotEmpty(t, nodeErrs, "the closed nodes' errors are reported")
	assert.NotEmpty(t, nodeErrs[0].Node)
	require.ErrorIs(t, r.stop(t), context.Canceled)
}

func TestHealthCheck(t *testing.T) {
	_, nodes := testnodes.Minis(t, 3)
	unblock := make(chan struct{})
	clientCfg := unitClientCfg
	clientCfg.NodeTimeout = 200 * time.Millisecond
	cfg := unitCfg(t, "hc")
	cfg.Lease.TTL = time.Second
	cfg.StopTimeout = time.Millisecond
	cfg.OnElected = func(context.Context, Term) { <-unblock }
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
	require.ErrorIs(t, r.stop(t), context.Canceled)
	close(unblock)
}
