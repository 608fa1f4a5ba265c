// Package workers runs the requests of a fan-out to one node in worker
// goroutines that outlive one request: a worker that finished waits a
// while for the node's next request instead of exiting. A fresh goroutine
// per request would start on a small stack and grow it (copying it) on its
// way down go-redis' call path, every time; a worker's stack has already
// grown (docs/design.md §4.13). Package redlock gives each node a [Pool].
package workers

import (
	"sync"
	"time"
)

// Idle is how long a worker waits for its node's next job before it
// exits. A process that calls less often than that starts a goroutine per
// job, as it would without workers.
const Idle = time.Second

// Job is one request to run: its Run does the work.
type Job interface{ Run() }

// Pool is the workers of one node. The zero Pool is not usable: make one
// with [New]. Safe for concurrent use.
type Pool[J Job] struct{ jobs chan J }

// New returns a Pool with no worker yet.
func New[J Job]() *Pool[J] { return &Pool[J]{jobs: make(chan J)} }

// Dispatch runs j in an idle worker of p, or in a new one when none is
// waiting. The job is counted in wg by the caller; a new worker counts
// itself too, so that a wg.Wait waits for it. Workers exit after Idle
// without a job, or when closing is closed.
func (p *Pool[J]) Dispatch(j J, wg *sync.WaitGroup, closing <-chan struct{}) {
	select {
	case p.jobs <- j:
	default:
		wg.Add(1)
		go p.work(j, wg, closing)
	}
}

// work runs j, then the pool's next jobs, until none came for Idle or
// closing is closed.
func (p *Pool[J]) work(j J, wg *sync.WaitGroup, closing <-chan struct{}) {
	defer wg.Done()
	var idle *time.Timer
	for {
		j.Run()
		if idle == nil {
			idle = time.NewTimer(Idle)
		} else {
			idle.Reset(Idle)
		}
		select {
		case j = <-p.jobs:
		case <-idle.C:
			return
		case <-closing:
			idle.Stop()
			return
		}
	}
}
