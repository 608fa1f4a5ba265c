package redlock

import (
	"context"
	"sync"
	"sync/atomic"
)

// indexed is node i's answer.
type indexed struct {
	i int
	a answer
}

// flight is one fan-out's shared state: one allocation for all its
// requests.
type flight struct {
	c         *Client
	ctx, nctx context.Context // the caller's; the requests' (bounded)
	cancel    context.CancelFunc
	do        call
	late      func(n *node, a answer)
	timedOut  errNodeTimeout
	nodes     []*node
	ch        chan indexed // buffered for every node: a send never blocks
	running   atomic.Int32
	mu        sync.Mutex
	closed    bool // the caller stopped collecting: answers go to late

	ansBuf [inlineNodes]answer // storage of the collected answers
	gotBuf [inlineNodes]bool
}

// answers returns the collector's answers and got slices, inside f for up
// to inlineNodes nodes.
func (f *flight) answers(n int) ([]answer, []bool) {
	if n <= inlineNodes {
		return f.ansBuf[:n], f.gotBuf[:n]
	}
	return make([]answer, n), make([]bool, n)
}

// run runs node i's request, which c.wg counts.
func (f *flight) run(i int) {
	defer f.c.wg.Done()
	f.request(i, f.nodes[i])
}

// request runs node i's request.
func (f *flight) request(i int, n *node) {
	a := f.c.settle(f.ctx, n, f.do(f.nctx, n), f.timedOut)
	f.mu.Lock()
	sent := !f.closed
	if sent {
		f.ch <- indexed{i, a}
	}
	f.mu.Unlock()
	if f.running.Add(-1) == 0 {
		f.cancel()
	}
	if !sent && f.late != nil {
		f.late(n, a)
	}
}
