package lease

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/redlease/redlease/internal/testing/checker"
	"github.com/redlease/redlease/internal/testing/redistest"
	"github.com/redlease/redlease/internal/testing/unsafetest"
	"github.com/redlease/redlease/internal/unsafeopt"
	"github.com/redlease/redlease/redlock"
)

// A semaphore on real servers: many contenders on several clients take K
// permits again and again, and the K-checker judges their tenures (at
// most K at once; per permit, no overlap and increasing tokens).
func TestIntegrationPermitsManyContenders(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real redis-server processes")
	}
	const k = 4
	ts := contendPermits(t, k, unsafeopt.Off{}, nil)
	require.Empty(t, checker.OverK(tenuresOf(ts), k), "more than %d holders at once", k)
	for p, per := range byPermit(ts) {
		require.Less(t, p, k, "a permit above K was taken")
		require.Empty(t, checker.Overlaps(per), "permit %d held twice at once", p)
		require.Empty(t, checker.NotIncreasing(per), "permit %d: tokens do not increase", p)
	}
	require.Len(t, byPermit(ts), k, "every permit was used")
}

// The same under faults of the servers, one at a time, while the
// contenders come and go: a server paused for a second (SIGSTOP), and a
// server killed and restarted empty (its quarantine keeps it from
// granting a permit it forgot).
func TestIntegrationPermitsFaults(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real redis-server processes")
	}
	const k = 4
	for name, fault := range map[string]func(*redistest.Rig){
		"pause": func(r *redistest.Rig) {
			require.NoError(t, r.Server(1).Pause())
			time.Sleep(time.Second) // the fault's length, not a wait for an event
			require.NoError(t, r.Server(1).Resume())
		},
		"restart-empty": func(r *redistest.Rig) { require.NoError(t, r.Server(2).Restart(true)) },
	} {
		t.Run(name, func(t *testing.T) {
			ts := contendPermits(t, k, unsafeopt.Off{}, fault)
			require.Empty(t, checker.OverK(tenuresOf(ts), k), "more than %d holders at once", k)
			for p, per := range byPermit(ts) {
				require.Empty(t, checker.Overlaps(per), "permit %d held twice at once", p)
				require.Empty(t, checker.NotIncreasing(per), "permit %d: tokens do not increase", p)
			}
		})
	}
}

// Negative control: with one permit too many (unsafeopt.PermitsPlusOne),
// K+1 contenders hold at once, and the K-checker catches it.
func TestIntegrationPermitsControl(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real redis-server processes")
	}
	const k = 4
	ts := contendPermits(t, k, unsafeopt.Off{PermitsPlusOne: true}, nil)
	require.NotEmpty(t, checker.OverK(tenuresOf(ts), k), "control: K+1 held at once, and the checker saw nothing")
}

// permitTenure is one tenure of a contender, with the permit it held.
type permitTenure struct {
	checker.Tenure
	permit int
}

// contendPermits runs 24 contenders, 6 on each of 4 clients of 3 real
// servers, for a semaphore of k permits (k+1 under the control), each
// taking a permit 8 times, and returns their tenures: from Acquire's
// return to the call of Release (or the lease's end, if earlier). The
// first holders keep their permits until as many as the semaphore allows
// hold at once (an event, so that the test surely fills the semaphore);
// later holds are short.
//
// fault, when not nil, runs once the semaphore is full, beside the
// contenders, on the rig's servers.
func contendPermits(t *testing.T, k int, off unsafeopt.Off, fault func(*redistest.Rig)) []permitTenure {
	rig := redistest.StartRig(t, 3, redistest.RigOptions{})
	ccfg := redlock.Config{NodeTimeout: 200 * time.Millisecond}
	unsafetest.TurnOff(t, &ccfg, off)
	var clients []*redlock.Client
	for range 4 {
		clients = append(clients, newClient(t, ccfg, rig.Nodes))
	}
	ct := &contention{t: t, fill: k, full: make(chan struct{})}
	if off.PermitsPlusOne {
		ct.fill = k + 1
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var wg sync.WaitGroup
	for i := range 24 {
		c := clients[i%len(clients)]
		cfg := Config{Permits: k, ID: fmt.Sprintf("c%d", i), RetryDelay: 20 * time.Millisecond, Logger: testLogger(t)}
		wg.Go(func() { ct.contend(ctx, c, cfg) })
	}
	if fault != nil {
		wg.Go(func() {
			select {
			case <-ct.full:
				fault(rig)
			case <-ctx.Done():
			}
		})
	}
	wg.Wait()
	select {
	case <-ct.full:
	default:
		t.Fatalf("the semaphore was never full (%d holders at once)", ct.fill)
	}
	return ct.out
}

// contention is what contendPermits' contenders share: full is closed
// once fill of them hold at once; out collects their tenures.
type contention struct {
	t       *testing.T
	fill    int
	holding atomic.Int32
	full    chan struct{}
	once    sync.Once
	mu      sync.Mutex
	out     []permitTenure
}

// contend takes a permit 8 times, as cfg.ID on c: the first time it holds
// until the semaphore is full, then 2ms each.
func (ct *contention) contend(ctx context.Context, c *redlock.Client, cfg Config) {
	for round := range 8 {
		l, err := Acquire(ctx, c, "sem-many", cfg)
		if err != nil {
			ct.t.Errorf("contender %s: %v", cfg.ID, err)
			return
		}
		tn := permitTenure{Tenure: checker.Tenure{Start: time.Now(), Token: l.Token()}, permit: l.Holder().Permit}
		if ct.holding.Add(1) >= int32(ct.fill) {
			ct.once.Do(func() { close(ct.full) })
		}
		hold := time.NewTimer(2 * time.Millisecond)
		if round == 0 {
			hold.Reset(time.Hour) // until the semaphore is full
		}
		select {
		case <-ct.full:
			if round > 0 {
				<-hold.C
			}
		case <-hold.C:
		case <-l.Context().Done():
		case <-ctx.Done():
		}
		hold.Stop()
		ct.holding.Add(-1)
		// The holder stops now, or stopped at its deadline if that came first.
		tn.End = earlier(time.Now(), l.ValidUntil().Add(-cfg.withDefaults().SafetyMargin))
		_ = l.Release(context.Background())
		ct.mu.Lock()
		ct.out = append(ct.out, tn)
		ct.mu.Unlock()
	}
}

func earlier(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

func tenuresOf(ts []permitTenure) []checker.Tenure {
	out := make([]checker.Tenure, len(ts))
	for i, tn := range ts {
		out[i] = tn.Tenure
	}
	return out
}

// byPermit groups tenures by permit, each group in order of start.
func byPermit(ts []permitTenure) map[int][]checker.Tenure {
	out := map[int][]checker.Tenure{}
	for _, tn := range ts {
		out[tn.permit] = append(out[tn.permit], tn.Tenure)
	}
	for _, per := range out {
		slices.SortFunc(per, func(a, b checker.Tenure) int { return a.Start.Compare(b.Start) })
	}
	return out
}
