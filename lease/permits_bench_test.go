package lease_test

// BenchmarkPermits: 64 contenders on 5 real redis-servers acquire and
// release, again and again, one lock (K=1) or one of the 8 permits of a
// semaphore (K=8); each b.N iteration is one acquire + release by some
// contender (it holds for holdFor between the two).
//
//	go test -run '^$' -bench Permits -benchtime 2000x -count 1 ./lease/
//
// Metrics:
//
//	cycles/s        acquire + release cycles per second, all contenders
//	tries/cycle     acquire round trips (EventAcquire: one per permit tried) per cycle
//	wait-p50-ms     time from the call of Acquire to its return, median
//	wait-p99-ms     and 99th percentile
//	max-held        most leases held at once (must be at most K)

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redlease/redlease/internal/testing/redistest"
	"github.com/redlease/redlease/lease"
	"github.com/redlease/redlease/redlock"
)

const (
	permitsContenders = 64
	holdFor           = time.Millisecond
)

func BenchmarkPermits(b *testing.B) {
	if testing.Short() {
		b.Skip("starts real redis-server processes")
	}
	for _, k := range []int{1, 8} {
		b.Run(fmt.Sprintf("K=%d", k), func(b *testing.B) { benchPermits(b, k) })
	}
}

func benchPermits(b *testing.B, k int) {
	rig := redistest.StartRig(b, 5, redistest.RigOptions{})
	var tries atomic.Int64
	client, err := redlock.New(context.Background(), redlock.Config{NodeTimeout: 200 * time.Millisecond,
		Hooks: func(ev redlock.Event) {
			if ev.Kind == redlock.EventAcquire {
				tries.Add(1)
			}
		}}, rig.Nodes...)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = client.Close() })
	if err := client.Bootstrap(context.Background()); err != nil {
		b.Fatal(err)
	}
	cfg := lease.Config{Permits: k, RetryDelay: 20 * time.Millisecond}
	var left atomic.Int64
	left.Store(int64(b.N))
	var held, maxHeld atomic.Int64
	waits := make([][]time.Duration, permitsContenders)
	var wg sync.WaitGroup
	tries.Store(0)
	b.ResetTimer()
	t0 := time.Now()
	for i := range permitsContenders {
		wg.Go(func() {
			for left.Add(-1) >= 0 {
				start := time.Now()
				l, err := lease.Acquire(context.Background(), client, "bench-permits", cfg)
				if err != nil {
					b.Error(err)
					return
				}
				waits[i] = append(waits[i], time.Since(start))
				n := held.Add(1)
				for m := maxHeld.Load(); n > m && !maxHeld.CompareAndSwap(m, n); m = maxHeld.Load() {
				}
				time.Sleep(holdFor)
				held.Add(-1)
				_ = l.Release(context.Background())
			}
		})
	}
	wg.Wait()
	wall := time.Since(t0)
	b.StopTimer()
	all := slices.Concat(waits...)
	slices.Sort(all)
	b.ReportMetric(float64(len(all))/wall.Seconds(), "cycles/s")
	b.ReportMetric(float64(tries.Load())/float64(len(all)), "tries/cycle")
	b.ReportMetric(ms(all[len(all)/2]), "wait-p50-ms")
	b.ReportMetric(ms(all[len(all)*99/100]), "wait-p99-ms")
	b.ReportMetric(float64(maxHeld.Load()), "max-held")
	if maxHeld.Load() > int64(k) {
		b.Fatalf("%d held at once, above K=%d", maxHeld.Load(), k)
	}
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
