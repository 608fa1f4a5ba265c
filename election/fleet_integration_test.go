package election

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/redlease/redlease/internal/testing/redistest"
	"github.com/redlease/redlease/lease"
	"github.com/redlease/redlease/redlock"
)

// fleet is procs processes (a client each) campaigning in the same
// elections on 3 real servers; process p prefers (priority 2) the
// elections i with i%procs == p, and caps its leaderships.
type fleet struct {
	g         *redistest.Group
	elections int
	cap       int
	procs     [][]*running // by process, by election
	histories []*history   // by election
}

const fleetProcs = 3

func (f *fleet) start(t *testing.T, p int) {
	c := newClient(t, redlock.Config{NodeTimeout: 250 * time.Millisecond}, realNodes(t, f.g.Addrs()))
	places := make(chan struct{}, f.cap)
	f.procs[p] = nil
	for i := range f.elections {
		id := fmt.Sprintf("p%d", p)
		cfg := Config{Lease: lease.Config{ID: id, TTL: time.Second, RetryDelay: 100 * time.Millisecond, Logger: testLogger(t)},
			Priority: (p - i%fleetProcs + fleetProcs + 1) % fleetProcs, YieldAfter: 300 * time.Millisecond, Leaderships: places}
		f.histories[i].record(&cfg, id, nil)
		f.procs[p] = append(f.procs[p], start(t, newElector(t, c, fmt.Sprintf("fleet:%d", i), cfg)))
	}
}

func (f *fleet) stop(t *testing.T, p int) {
	for _, r := range f.procs[p] {
		require.ErrorIs(t, r.stop(t), context.Canceled)
	}
	f.procs[p] = nil
}

// leads counts the elections each process leads.
func (f *fleet) leads() []int {
	n := make([]int, fleetProcs)
	for p, rs := range f.procs {
		for _, r := range rs {
			if r.IsLeader() {
				n[p]++
			}
		}
	}
	return n
}

// waitLeads waits until the processes lead want elections each.
func (f *fleet) waitLeads(t *testing.T, want []int, msg string) {
	t.Helper()
	t0 := time.Now()
	within(t, 20*time.Second, func() bool { return fmt.Sprint(f.leads()) == fmt.Sprint(want) }, msg)
	t.Logf("%s: %v after %s", msg, want, time.Since(t0).Round(time.Millisecond))
}

// TestFleetSpread: 3 processes campaign in 12 elections, each process
// preferring 4 of them and leading at most 6 at once. The leaderships
// spread 4/4/4; while one process restarts the other two lead all 12
// (6 each, their cap); after each restart of a rolling restart, the
// spread is 4/4/4 again. The tenure checker passes for every election.
func TestFleetSpread(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real redis-server processes")
	}
	f := &fleet{g: redistest.Start(t, 3), elections: 12, cap: 6, procs: make([][]*running, fleetProcs)}
	for range f.elections {
		f.histories = append(f.histories, newHistory())
	}
	for p := range fleetProcs {
		f.start(t, p)
	}
	even := []int{4, 4, 4}
	f.waitLeads(t, even, "spread by priority")
	for p := range fleetProcs {
		f.stop(t, p)
		others := []int{6, 6, 6}
		others[p] = 0
		f.waitLeads(t, others, fmt.Sprintf("p%d down: the others lead all, up to their cap", p))
		f.start(t, p)
		f.waitLeads(t, even, fmt.Sprintf("p%d back: spread again", p))
	}
	for p := range fleetProcs {
		f.stop(t, p)
	}
	for i, h := range f.histories {
		require.NoError(t, checkTenures(h.tenures()), "election %d", i)
	}
}
