package redlock

import "time"

// Requests of a fan-out run in per-node worker goroutines that outlive one
// request: a worker that finished waits a while for the node's next request
// instead of exiting. A fresh goroutine per request would start on a small
// stack and grow it (copying it) on its way down go-redis' call path, every
// time; a worker's stack has already grown (docs/design.md §4.13).

// workerIdle is how long a worker waits for its node's next request before
// it exits. A process that calls less often than that starts a goroutine
// per request, as it would without workers.
const workerIdle = time.Second

// job is node i of one fan-out.
type job struct {
	f *flight
	i int
}

// dispatch runs node i's request of f in an idle worker of that node, or
// in a new one when none is waiting. The request is counted in c.wg by the
// caller; a worker counts itself too, so that Close waits for it.
func (c *Client) dispatch(n *node, j job) {
	select {
	case n.jobs <- j:
	default:
		c.wg.Add(1)
		go c.work(n, j)
	}
}

// work runs j, then the node's next jobs, until none came for workerIdle
// or the client is closing.
func (c *Client) work(n *node, j job) {
	defer c.wg.Done()
	var idle *time.Timer
	for {
		j.f.run(j.i)
		if idle == nil {
			idle = time.NewTimer(workerIdle)
		} else {
			idle.Reset(workerIdle)
		}
		select {
		case j = <-n.jobs:
		case <-idle.C:
			return
		case <-c.closing:
			idle.Stop()
			return
		}
	}
}
