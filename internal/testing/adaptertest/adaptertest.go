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

	"github.com/alicebob/miniredis/v2"
	"github.com/stretchr/testify/require"

	"github.com/redlease/redlease/election"
	"github.com/redlease/redlease/internal/testing/hookstest"
	"github.com/redlease/redlease/internal/testing/testnodes"
	"github.com/redlease/redlease/lease"
	"github.com/redlease/redlease/redlock"
)

// Scenario keys.
const (
	Key      = "scenario:k" // the lock of Checks.Ops
	Spare    = "scenario:s" // the lock of Checks.Spare
	Election = "scenario:e" // the election of Checks.Elected and Demoted
)

// Checks are called by Scenario after each of its steps; nil ones are
// skipped.
type Checks struct {
	// Ops: after, on Key, an Acquire (ok), a TryAcquire while it is held
	// (busy), an Extend (ok) and a Release (ok).
	Ops func()
	// Spare: after extends (ok) of Spare's lock on 3 of 3 nodes
	// (Event.Spare 1), then, its copy deleted on the third node, on 2 of
	// 3 (Spare 0, at least once).
	Spare func()
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
func Scenario(t testing.TB, h func(redlock.Event), c Checks) {
	t.Helper()
	ctx := context.Background()
	ms, nodes := testnodes.Minis(t, 3)
	rec := &hookstest.Recorder{}
	client, err := redlock.New(ctx, redlock.Config{NodeTimeout: 200 * time.Millisecond, Hooks: tee{h, rec.Observe}.Observe}, nodes...)
	require.NoError(t, err)
	t.Cleanup(func() { _ = client.Close() })
	require.NoError(t, client.Bootstrap(ctx))
	const ttl = 2 * time.Second

	l, err := client.Acquire(ctx, Key, ttl)
	require.NoError(t, err)
	_, err = client.TryAcquire(ctx, Key, ttl)
	require.ErrorIs(t, err, redlock.ErrNotAcquired)
	// Every node's acquire has landed: an extend that overtook the last
	// one would find no copy there, and report a spare fewer.
	testnodes.WaitValue(t, ms, Key, l.Value())
	require.NoError(t, l.Extend(ctx, 0))
	err = l.Release(ctx)
	require.NoError(t, err)
	call(c.Ops)
	lostCopy(t, client, ms, ms[2], rec)
	call(c.Spare)

	down := client.Internal().Nodes()[0]
	ms[0].Close()
	l, err = client.Acquire(ctx, Key+"2", ttl)
	require.NoError(t, err, "two of three nodes still vote")
	_ = l.Release(ctx)
	if c.NodeDown != nil {
		c.NodeDown(down)
	}

	e, err := election.New(client, Election, election.Config{Lease: lease.Config{ID: "scenario"}})
	require.NoError(t, err)
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- e.Run(runCtx) }()
	for ev := range e.Events() {
		if ev.Kind == election.EventElected {
			break
		}
	}
	call(c.Elected)
	stop()
	require.ErrorIs(t, <-done, context.Canceled)
	call(c.Demoted)
}

// lostCopy extends the lock Spare on every node of ms, then replaces its
// copy on m by another value (a deleted copy is restored: redlock's
// restore_many never overwrites a value) and extends it until Event.Spare
// says 0 (the node's no may come after an Extend returned at a majority:
// the next one knows it).
func lostCopy(t testing.TB, client *redlock.Client, ms []*miniredis.Miniredis, m *miniredis.Miniredis, rec *hookstest.Recorder) {
	t.Helper()
	ctx := context.Background()
	l, err := client.Acquire(ctx, Spare, 2*time.Second)
	require.NoError(t, err)
	defer func() { _ = l.Release(ctx) }()
	testnodes.WaitValue(t, ms, Spare, l.Value()) // every acquire request has landed: the extend finds 3 copies
	require.NoError(t, l.Extend(ctx, 0))
	require.NoError(t, m.Set(Spare, "another"))
	require.Eventually(t, func() bool {
		require.NoError(t, l.Extend(ctx, 0))
		evs := rec.Of(redlock.EventExtend)
		return evs[len(evs)-1].Spare == 0
	}, 10*time.Second, time.Millisecond, "Event.Spare never fell to 0")
}

// tee is two hooks (redlock.Config.Hooks) as one: it passes every event
// to both.
type tee [2]func(redlock.Event)

func (h tee) Observe(ev redlock.Event) {
	h[0](ev)
	h[1](ev)
}

func call(f func()) {
	if f != nil {
		f()
	}
}
