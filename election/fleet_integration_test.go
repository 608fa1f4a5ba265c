package election

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/redlease/redlease/internal/testing/redistest"
	"github.com/redlease/redlease/lease"
	"github.com/redlease/redlease/redlock"
)

// fleet is fleetProcs processes (a redlock client each, with its own
// go-redis clients) campaigning in the same elections on 3 real servers;
// process p prefers (priority 2) the elections i with i%fleetProcs ==
// (p+2)%fleetProcs, and caps its leaderships.
type fleet struct {
	g         *redistest.Group
	elections int
	cap       int
	procs     [][]*running // by process, by election
	histories []*history   // by election

	mu      sync.Mutex
	leading []int         // by process: the terms whose OnElected runs
	terms   int           // the terms begun
	changed chan struct{} // closed and replaced when leading changes
}

const fleetProcs = 3

// fleetWait bounds each step of TestFleetSpread: seconds are enough, but a
// term lost on a loaded machine (the nodes slow to answer) comes back
// only after its TTL and a few retries.
const fleetWait = time.Minute

func newFleet(t *testing.T, elections, cap int) *fleet {
	f := &fleet{g: redistest.Start(t, 3), elections: elections, cap: cap, procs: make([][]*running, fleetProcs),
		leading: make([]int, fleetProcs), changed: make(chan struct{})}
	for range elections {
		f.histories = append(f.histories, newHistory())
	}
	return f
}

// lead counts a term of process p beginning (+1) or ending (-1).
func (f *fleet) lead(p, d int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.leading[p] += d
	if d > 0 {
		f.terms++
	}
	close(f.changed)
	f.changed = make(chan struct{})
}

func (f *fleet) start(t *testing.T, p int) {
	c := newClient(t, redlock.Config{NodeTimeout: 500 * time.Millisecond}, realNodes(t, f.g.Addrs()))
	places := make(chan struct{}, f.cap)
	f.procs[p] = nil
	for i := range f.elections {
		id := fmt.Sprintf("p%d", p)
		// Slow timers: 90 electors share the machine, and the
		// handovers are driven by notices, not by them.
		cfg := Config{Lease: lease.Config{ID: id, TTL: 2 * time.Second, RetryDelay: 500 * time.Millisecond, Logger: testLogger(t)},
			Priority: (p - i%fleetProcs + fleetProcs + 1) % fleetProcs, YieldAfter: 500 * time.Millisecond, Leaderships: places}
		f.histories[i].record(&cfg, id, nil)
		on := cfg.OnElected
		cfg.OnElected = func(ctx context.Context, t Term) {
			f.lead(p, 1)
			defer f.lead(p, -1)
			on(ctx, t)
		}
		f.procs[p] = append(f.procs[p], start(t, newElector(t, c, fmt.Sprintf("fleet:%d", i), cfg)))
	}
}

func (f *fleet) stop(t *testing.T, p int) {
	for _, r := range f.procs[p] {
		require.ErrorIs(t, r.stop(t), context.Canceled)
	}
	f.procs[p] = nil
}

// waitLeads waits until the processes' counts of terms satisfy ok,
// woken by each term's start and end; it returns the counts.
func (f *fleet) waitLeads(t *testing.T, ok func([]int) bool, msg string) []int {
	t.Helper()
	t0 := time.Now()
	timeout := time.NewTimer(fleetWait)
	defer timeout.Stop()
	for {
		f.mu.Lock()
		n, ch := append([]int(nil), f.leading...), f.changed
		f.mu.Unlock()
		if ok(n) {
			t.Logf("%s: %v after %s", msg, n, time.Since(t0).Round(time.Millisecond))
			return n
		}
		select {
		case <-ch:
		case <-timeout.C:
			t.Fatalf("%s: the processes lead %v after %s", msg, n, fleetWait)
		}
	}
}

// nearEven reports whether every election is led and each process leads
// within one of an even share.
func (f *fleet) nearEven(n []int) bool {
	sum := 0
	for _, k := range n {
		sum += k
		if d := k*fleetProcs - f.elections; d > fleetProcs || d < -fleetProcs {
			return false
		}
	}
	return sum == f.elections
}

// TestFleetSpread: 3 processes campaign in 30 elections, each process
// preferring 10 of them and leading at most 15 at once. The leaderships
// spread within one of even (10±1 each); while one process restarts the
// other two lead all 30 (15 each, their cap); after each restart of a
// rolling restart, the spread is within one of even again. The tenure
// checker passes for every election.
func TestFleetSpread(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real redis-server processes")
	}
	t.Parallel() // servers of its own; it waits on terms, with bounds of a minute
	f := newFleet(t, 30, 15)
	for p := range fleetProcs {
		f.start(t, p)
	}
	f.waitLeads(t, f.nearEven, "spread by priority")
	for p := range fleetProcs {
		f.stop(t, p)
		others := []int{f.cap, f.cap, f.cap}
		others[p] = 0
		f.waitLeads(t, func(n []int) bool { return fmt.Sprint(n) == fmt.Sprint(others) },
			fmt.Sprintf("p%d down: the others lead all, up to their cap", p))
		f.start(t, p)
		f.waitLeads(t, f.nearEven, fmt.Sprintf("p%d back: spread again", p))
	}
	for p := range fleetProcs {
		f.stop(t, p)
	}
	for i, h := range f.histories {
		require.NoError(t, checkTenures(h.tenures()), "election %d", i)
	}
	t.Logf("%d terms in %d elections over the run", f.terms, f.elections)
}
