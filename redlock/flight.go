package redlock

import (
	"context"
	"sync"
	"sync/atomic"

	"github.com/redlease/redlease/internal/redlockx"
)

// indexed is node i's answer.
type indexed struct {
	i int
	a answer
}

// flight is one fan-out's shared state (docs/design.md §4.1): one
// allocation for all its requests.
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

// collect gathers the answers until done says so, every node answered,
// the requests' deadline passed or the caller's context ended; then it
// stops the flight (see stop) and gives each node still pending an error
// vote saying why. answers[i] belongs to f.nodes[i].
func (f *flight) collect(done func(answers []answer, got []bool) bool) []answer {
	answers, got := f.answers(len(f.nodes))
	cut := f.wait(answers, got, done) // why the nodes still pending get no answer
	f.stop()
	for i := range answers {
		if !got[i] {
			answers[i] = answer{vote: voteError, err: cut}
		}
	}
	return answers
}

// wait fills answers and got as the answers arrive and returns why it
// stopped before every node answered: redlockx.ErrNotAwaited when done said so, the
// caller's context error, or f.timedOut at the requests' deadline (nil
// when every node answered).
func (f *flight) wait(answers []answer, got []bool, done func([]answer, []bool) bool) error {
	pending := len(f.nodes)
	take := func(r indexed) bool {
		answers[r.i], got[r.i] = r.a, true
		pending--
		return done != nil && done(answers, got)
	}
	for pending > 0 {
		select {
		case r := <-f.ch:
			if take(r) {
				return redlockx.ErrNotAwaited
			}
		case <-f.ctx.Done():
			return f.ctx.Err()
		case <-f.nctx.Done():
			// Answers may have arrived together with the deadline.
			for drained := false; !drained && pending > 0; {
				select {
				case r := <-f.ch:
					if take(r) {
						return redlockx.ErrNotAwaited
					}
				default:
					drained = true
				}
			}
			if err := f.ctx.Err(); err != nil {
				return err
			}
			return f.timedOut
		}
	}
	return nil
}

// stop ends the collection: answers that arrive from now on, and those
// that arrived after the last look, go to late (in a goroutine c.wg
// tracks) or nowhere.
func (f *flight) stop() {
	f.mu.Lock()
	f.closed = true
	f.mu.Unlock()
	for drained := false; !drained; {
		select {
		case r := <-f.ch:
			if f.late != nil {
				f.c.wg.Go(func() { f.late(f.nodes[r.i], r.a) })
			}
		default:
			drained = true
		}
	}
}
