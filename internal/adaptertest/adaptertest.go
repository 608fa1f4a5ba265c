// Package adaptertest is the scenario that the tests of the metrics
// adapters (contrib/prometheus, contrib/otel) share: the same operations
// on a real client, and a check after each step.
//
// See docs/design.md §1.2 for the internal packages.
package adaptertest

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/redlease/redlease/election"
	"github.com/redlease/redlease/internal/testnodes"
	"github.com/redlease/redlease/lease"
	"github.com/redlease/redlease/redlock"
)

// Scenario keys.
const (
	Key      = "scenario:k" // the lock of Checks.Ops
	Election = "scenario:e" // the election of Checks.Elected and Demoted
)

// Checks are called by Scenario after each of its steps; nil ones are
// skipped.
type Checks struct {
	// Ops: after, on Key, an Acquire (ok), a TryAcquire while it is held
	// (busy), an Extend (ok) and a Release (ok).
	Ops func()
	// NodeDown: after node, the first of three, was closed and an
	// acquisition and a release went on without it. Its errors may be
	// reported after the calls returned (they return at quorum): wait
	// for them.
	NodeDown func(node string)
	// Elected: during the first term of an elector of Election.
	Elected func()
	// Demoted: after that term ended (Run's context cancelled).
	Demoted func()
}

// Scenario runs the same operations for every adapter's test, on a real
// redlock.Client over three miniredis nodes reporting to h, and calls c
// after each step.
func Scenario(t testing.TB, h redlock.Hooks, c Checks) {
	t.Helper()
	ctx := context.Background()
	ms, nodes := testnodes.Minis(t, 3)
	client, err := redlock.New(ctx, redlock.Config{NodeTimeout: 200 * time.Millisecond, Hooks: h}, nodes...)
	require.NoError(t, err)
	t.Cleanup(func() { _ = client.Close() })
	require.NoError(t, client.Bootstrap(ctx))
	const ttl = 2 * time.Second

	l, err := client.Acquire(ctx, Key, ttl)
	require.NoError(t, err)
	_, err = client.TryAcquire(ctx, Key, ttl)
	require.ErrorIs(t, err, redlock.ErrNotAcquired)
	require.NoError(t, l.Extend(ctx, 0))
	_, err = l.Release(ctx)
	require.NoError(t, err)
	call(c.Ops)

	down := client.Nodes()[0]
	ms[0].Close()
	l, err = client.Acquire(ctx, Key+"2", ttl)
	require.NoError(t, err, "two of three nodes still vote")
	_, _ = l.Release(ctx)
	if c.NodeDown != nil {
		c.NodeDown(down)
	}

	e, err := election.New(client, Election, election.Config{Lease: lease.Config{ID: "scenario"}})
	require.NoError(t, err)
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- e.Run(runCtx) }()
	for ev := range e.Events() {
		if ev.Kind == redlock.EventElected {
			break
		}
	}
	call(c.Elected)
	stop()
	require.ErrorIs(t, <-done, election.ErrStopped)
	call(c.Demoted)
}

func call(f func()) {
	if f != nil {
		f()
	}
}
