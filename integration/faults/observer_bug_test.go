package faults

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/redlease/redlease/internal/testing/redistest"
	"github.com/redlease/redlease/lease"
	"github.com/redlease/redlease/observer"
	"github.com/redlease/redlease/redlock"
)

// TestObserverNoLeaderWhileOneLeads is the reduction of what the
// majorities-ring scenario showed: an observer that reaches nodes 0, 1 and
// 2 of five (3 and 4 do not answer) while a leader holds the key on nodes
// 2, 3 and 4 (a majority, and valid: the leader is in its term) reports
// redlock.ErrNoHolder, "nobody leads", where it can only say ErrUnknown: the two
// nodes that did not answer, with node 2, can be (and are) a majority. The
// elector's own view goes the same way (its candidate loop reads through
// the observer): election.EventLeaderChanged and OnLeaderChange report "no leader"
// while another candidate leads, and followers that route to the leader
// are told there is none.
//
// FAILS until observer.readOnce (observer/observer.go, the count of
// "ready" nodes before ErrNoHolder) returns ErrUnknown unless no value can
// be on a majority: ErrNoHolder only when, for every value seen, its
// count plus the nodes that did not answer (errors, quarantined) is below
// the quorum.
func TestObserverNoLeaderWhileOneLeads(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real redis-server processes")
	}
	ctx := context.Background()
	g := redistest.Start(t, 5)
	var direct []redis.UniversalClient
	for _, c := range g.Clients(t) {
		direct = append(direct, c)
	}
	boot, err := redlock.New(ctx, redlock.Config{MaxTTL: maxTTL}, direct...)
	require.NoError(t, err)
	require.NoError(t, boot.Bootstrap(ctx))
	require.NoError(t, boot.Close())

	// through returns a redlock.Client whose links to the nodes in cut
	// refuse every connection.
	through := func(cut ...int) *redlock.Client {
		var nodes []redis.UniversalClient
		for i, s := range g.Servers() {
			p := redistest.NewProxy(t, s.Addr())
			for _, c := range cut {
				if c == i {
					p.Disable()
				}
			}
			nodes = append(nodes, redistest.NewClient(t, &redis.Options{Addr: p.Addr(), DialTimeout: 200 * time.Millisecond,
				ReadTimeout: 300 * time.Millisecond, WriteTimeout: 300 * time.Millisecond, MaxRetries: -1}))
		}
		c, err := redlock.New(ctx, redlock.Config{NodeTimeout: nodeTimeout, MaxTTL: maxTTL}, nodes...)
		require.NoError(t, err)
		t.Cleanup(func() { _ = c.Close() })
		return c
	}
	leader := through(0, 1) // holds the key on 2, 3, 4
	l, err := lease.TryAcquire(ctx, leader, electionKey, lease.Config{TTL: maxTTL, ID: "leader"})
	require.NoError(t, err)
	defer func() { _ = l.Release(ctx) }()

	o, err := observer.New(through(3, 4), electionKey, observer.Config{}) // reads 0, 1, 2
	require.NoError(t, err)
	got, err := o.Leader(ctx)
	require.True(t, l.Held(), "the set-up outlasted the lease: the test proves nothing")
	if errors.Is(err, redlock.ErrNoHolder) {
		t.Errorf("BUG: the observer reports no leader while %q leads on a majority (nodes 2-4) that it cannot rule out: %v", l.Holder().ID, err)
		return
	}
	if err == nil {
		require.Equal(t, l.Token(), got.Token)
		return
	}
	require.ErrorIs(t, err, observer.ErrUnknown)
}
