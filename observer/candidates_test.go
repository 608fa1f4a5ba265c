package observer_test

import (
	"context"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlease/redlease/election"
	"github.com/redlease/redlease/internal/testing/locktest"
	"github.com/redlease/redlease/internal/testing/testnodes"
	"github.com/redlease/redlease/lease"
	"github.com/redlease/redlease/observer"
	"github.com/redlease/redlease/redlock"
)

// TestCandidates: the roll call lists every campaigning elector with its
// priority, highest first (then by ID), and drops one that stopped; with
// nobody campaigning the list is empty, without error.
func TestCandidates(t *testing.T) {
	ctx := context.Background()
	_, nodes := testnodes.Minis(t, 3)
	c := locktest.New(t, redlock.Config{NodeTimeout: 500 * time.Millisecond, Logger: testnodes.Logger(t, hclog.Info)}, nodes, true)
	o, err := observer.New(c, "svc", observer.Config{})
	require.NoError(t, err)
	cands, err := o.Candidates(ctx)
	require.NoError(t, err)
	assert.Empty(t, cands, "nobody campaigns yet")

	stop := map[string]context.CancelFunc{}
	for id, prio := range map[string]int{"a": 1, "b": 5, "c": 5} {
		e, err := election.New(c, "svc", election.Config{Lease: lease.Config{ID: id, TTL: 2 * time.Second}, Priority: prio})
		require.NoError(t, err)
		rctx, cancel := context.WithCancel(ctx)
		done := make(chan struct{})
		go func() { defer close(done); _ = e.Run(rctx) }()
		stop[id] = func() { cancel(); <-done }
		t.Cleanup(stop[id])
	}
	ids := func(want int) []string {
		var out []string
		for i := 0; i < 20 && len(out) != want; i++ { // until every elector listens
			cands, err := o.Candidates(ctx)
			require.NoError(t, err)
			out = out[:0]
			for _, cd := range cands {
				out = append(out, cd.ID)
				assert.False(t, cd.Since.IsZero(), "candidate %s: no Since", cd.ID)
			}
		}
		return out
	}
	assert.Equal(t, []string{"b", "c", "a"}, ids(3), "highest priority first, then by ID")

	stop["b"]()
	assert.Equal(t, []string{"c", "a"}, ids(2), "a candidate that stopped does not answer")
}
