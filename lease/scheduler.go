package lease

import (
	"container/heap"
	"context"
	"slices"
	"sync"
	"time"

	"github.com/redlease/redlease/internal/lockrule"
	"github.com/redlease/redlease/redlock"
)

// The scheduler refreshes every lease of one redlock.Client (docs/design.md §5.2):
// one goroutine per Client, not one per lease, with a heap of the leases
// by when their next refresh is due. When the first lease falls due, every
// lease due within its batch window (RenewInterval/10: refreshes come at
// most that much early) goes out with it, in one redlock.ExtendAll: one
// multi-key script call per node per MaxExtendBatch leases. Leases acquired
// together stay together: the next refresh of each is due RenewInterval
// after the start of the batch that refreshed it.
//
// Under overload (slow servers, a starved process) it serves the nearest
// deadline first and bounds retries: every refresh spends a token from a
// bucket that fills at twice the steady rate (the sum of 1/RenewInterval
// over the leases), so refreshes per second stay within twice the steady
// rate whatever fails; a lease that finds the bucket empty waits for it
// (its local deadline still ends it on time). At most maxRounds batches
// are in flight at once.
//
// The goroutine starts with the Client's first lease and returns when the
// Client has no lease left. Each lease's deadline is its own timer (see
// Lease.expire), never the scheduler's: a late scheduler delays refreshes,
// not the end of a lease (S2).

// maxRounds bounds the batches in flight at once, per Client.
const maxRounds = 4

// roundHook, when set (by tests), runs at the start of every batch, in the
// scheduler's goroutine: a test stalls the scheduler with it.
var roundHook func()

var (
	schedMu    sync.Mutex
	schedulers = map[*redlock.Client]*scheduler{}
)

type scheduler struct {
	client   *redlock.Client
	noBudget bool          // the token bucket is off (a negative control: internal/unsafeopt)
	wake     chan struct{} // buffered: a poke never blocks

	mu       sync.Mutex
	due      leaseHeap
	rounds   int     // batches in flight
	rate     float64 // steady refreshes per second of the leases in the heap or in flight
	leases   int     // how many leases those are
	tokens   float64
	refilled time.Time
	running  bool
}

// schedule hands a new lease to its client's scheduler, starting it if
// needed; the lease's first refresh is due at due.
func schedule(l *Lease, due time.Time) {
	schedMu.Lock()
	s := schedulers[l.client]
	if s == nil {
		s = &scheduler{client: l.client, wake: make(chan struct{}, 1),
			noBudget: noRefreshBudget(l.client)}
		schedulers[l.client] = s
	}
	s.mu.Lock()
	l.sched, l.due, l.hidx = s, mono(due), -1
	s.rate += float64(time.Second) / float64(l.renew)
	s.leases++
	heap.Push(&s.due, l)
	start := !s.running
	s.running = true
	s.mu.Unlock()
	schedMu.Unlock()
	if start {
		go s.run()
	}
	s.poke()
}

// unschedule takes an ended lease out of the scheduler.
func (s *scheduler) unschedule(l *Lease) {
	s.mu.Lock()
	if !l.gone {
		l.gone = true
		s.rate -= float64(time.Second) / float64(l.renew)
		s.leases--
		if l.hidx >= 0 {
			heap.Remove(&s.due, int(l.hidx))
		}
		if rs := l.round; rs != nil {
			// In flight: once every lease of the batch has ended, nobody
			// waits for its answers.
			l.round = nil
			if rs.live--; rs.live == 0 {
				rs.cancel()
			}
		}
	}
	s.mu.Unlock()
	s.poke()
}

func (s *scheduler) poke() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// run is the scheduler's goroutine.
func (s *scheduler) run() {
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		s.mu.Lock()
		if len(s.due) == 0 && s.rounds == 0 && s.stop() {
			return
		}
		wait := time.Hour
		if len(s.due) > 0 && s.rounds < maxRounds {
			now := time.Now()
			if wait = s.due[0].due.time().Sub(now); wait <= 0 {
				batch := s.take(now)
				if len(batch) > 0 {
					s.rounds++
					ctx, cancel := context.WithCancel(context.Background())
					rs := &roundState{live: len(batch), cancel: cancel}
					for _, l := range batch {
						l.round = rs
					}
					s.mu.Unlock()
					if roundHook != nil {
						roundHook()
					}
					go s.round(ctx, rs, now, batch)
					continue
				}
				wait = s.due[0].due.time().Sub(now)
			}
		}
		s.mu.Unlock()
		timer.Reset(max(wait, 0))
		select {
		case <-timer.C:
		case <-s.wake:
			if !timer.Stop() {
				<-timer.C
			}
		}
	}
}

// stop ends the goroutine if no lease came meanwhile; called with s.mu
// held, it returns with it released when it stops, held otherwise.
func (s *scheduler) stop() bool {
	s.mu.Unlock()
	schedMu.Lock()
	s.mu.Lock()
	if len(s.due) > 0 || s.rounds > 0 {
		schedMu.Unlock()
		return false
	}
	s.running = false
	delete(schedulers, s.client)
	s.mu.Unlock()
	schedMu.Unlock()
	return true
}

// take pops the leases due by now plus their batch window, nearest
// deadline first, as many as the token bucket allows; the others go back
// to wait for tokens. Called with s.mu held.
func (s *scheduler) take(now time.Time) []*Lease {
	var batch []*Lease
	for len(s.due) > 0 && !s.due[0].due.time().After(now.Add(s.due[0].renew/10)) {
		l := heap.Pop(&s.due).(*Lease)
		batch = append(batch, l)
	}
	// The bucket fills at twice the steady rate and holds one refresh per
	// lease (at least a full batch): leases that all fall due at once, as
	// they do when acquired together, are never held back, and failures
	// retried at every RetryInterval drain it within one RenewInterval.
	limit := float64(max(s.leases, lockrule.MaxExtendBatch))
	if !s.refilled.IsZero() {
		s.tokens = min(limit, s.tokens+2*s.rate*now.Sub(s.refilled).Seconds())
	} else {
		s.tokens = limit
	}
	s.refilled = now
	if float64(len(batch)) <= s.tokens || s.noBudget {
		s.tokens -= float64(len(batch))
		return batch
	}
	slices.SortFunc(batch, func(a, b *Lease) int { return a.deadline().Compare(b.deadline()) })
	n := int(s.tokens)
	s.tokens -= float64(n)
	// The rest waits until the bucket holds a batch's worth again.
	later := now.Add(time.Duration(float64(min(len(batch)-n, lockrule.MaxExtendBatch)) / (2 * s.rate) * float64(time.Second)))
	for _, l := range batch[n:] {
		l.due = mono(later)
		heap.Push(&s.due, l)
	}
	return batch[:n]
}

// round refreshes one batch and schedules the next refresh of each lease.
func (s *scheduler) round(ctx context.Context, rs *roundState, start time.Time, batch []*Lease) {
	defer rs.cancel()
	locks := make([]*redlock.Lock, len(batch))
	for i, l := range batch {
		locks[i] = l.lock
		l.setInflight(true)
	}
	// Each request waits up to the shortest RetryInterval of the batch, or
	// NodeTimeout if longer (the locks were acquired with
	// redlockx.ExtendWait). Not cut at the validity of the lease nearest
	// its end: one lease about to end would fail the whole batch (each
	// lease's own timer ends it on time, and a late yes does not revive
	// it).
	errs := s.client.ExtendAll(ctx, locks)
	next := make([]time.Time, len(batch))
	for i, l := range batch {
		next[i] = l.refreshed(start, errs[i])
	}
	s.mu.Lock()
	for i, l := range batch {
		if l.round == rs {
			l.round = nil
		}
		if !l.gone && !next[i].IsZero() {
			l.due = mono(next[i])
			heap.Push(&s.due, l)
		}
	}
	s.rounds--
	s.mu.Unlock()
	s.poke()
}

// roundState is one batch in flight: its context is cancelled when every
// lease of the batch has ended meanwhile (Release, loss, the parent
// context), so that an ended lease's refresh does not hold the client
// (Close waits for calls in flight) for the batch's whole wait.
type roundState struct {
	live   int // leases of the batch not ended; under scheduler.mu
	cancel context.CancelFunc
}

// leaseHeap orders leases by when their next refresh is due.
type leaseHeap []*Lease

func (h leaseHeap) Len() int           { return len(h) }
func (h leaseHeap) Less(i, j int) bool { return h[i].due < h[j].due }
func (h leaseHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].hidx, h[j].hidx = int32(i), int32(j)
}
func (h *leaseHeap) Push(x any) {
	l := x.(*Lease)
	l.hidx = int32(len(*h))
	*h = append(*h, l)
}
func (h *leaseHeap) Pop() any {
	old := *h
	l := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	l.hidx = -1
	return l
}

// monoTime is an instant on the monotonic clock in 8 bytes (a time.Time
// takes 24): nanoseconds since the package's epoch. A scheduler keeps one
// per lease, and a process may hold 100,000 leases.
type monoTime int64

// epoch is the origin of monoTime, read with its monotonic clock.
var epoch = time.Now()

func mono(t time.Time) monoTime { return monoTime(t.Sub(epoch)) }

func (m monoTime) time() time.Time { return epoch.Add(time.Duration(m)) }
