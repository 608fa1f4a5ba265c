package quorum

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
)

// ErrNotAwaited is the answer's error of a node that was still answering
// when the other nodes' answers had decided the round. It says nothing
// about that node: it may be healthy, only slower.
var ErrNotAwaited = errors.New("not awaited: the outcome was decided without this node")

// InlineNodes is how many nodes the per-call state of a round keeps
// inline (one allocation instead of several).
const InlineNodes = 7

// indexed is node i's answer.
type indexed[A any] struct {
	i int
	a A
}

// round is one fan-out's shared state (docs/design.md §4.1): one
// allocation for all its requests.
type round[N Node, A any] struct {
	f         *Fanout[N, A]
	ctx, nctx context.Context // the caller's; the requests' (bounded)
	cancel    context.CancelFunc
	do        func(context.Context, N) A
	late      func(N, A)
	timedOut  TimeoutError
	nodes     []N
	ch        chan indexed[A] // buffered for every node: a send never blocks
	running   atomic.Int32
	mu        sync.Mutex
	closed    bool // the caller stopped collecting: answers go to late

	ansBuf [InlineNodes]A // storage of the collected answers
	gotBuf [InlineNodes]bool
}

// Job is node i's request of one round, run by the node's workers
// (internal/workers).
type Job struct {
	r runner
	i int
}

// runner is a round, whatever its types.
type runner interface{ run(i int) }

// Run runs the request.
func (j Job) Run() { j.r.run(j.i) }

// answers returns the collector's answers and got slices, inside r for up
// to InlineNodes nodes.
func (r *round[N, A]) answers(n int) ([]A, []bool) {
	if n <= InlineNodes {
		return r.ansBuf[:n], r.gotBuf[:n]
	}
	return make([]A, n), make([]bool, n)
}

// run runs node i's request, which f.Wait counts.
func (r *round[N, A]) run(i int) {
	defer r.f.Wait.Done()
	r.request(i, r.nodes[i])
}

// request runs node i's request.
func (r *round[N, A]) request(i int, n N) {
	a := r.f.Settle(r.ctx, n, r.do(r.nctx, n), r.timedOut)
	r.mu.Lock()
	sent := !r.closed
	if sent {
		r.ch <- indexed[A]{i, a}
	}
	r.mu.Unlock()
	if r.running.Add(-1) == 0 {
		r.cancel()
	}
	if !sent && r.late != nil {
		r.late(n, a)
	}
}

// collect gathers the answers until done says so, every node answered,
// the requests' deadline passed or the caller's context ended; then it
// stops the round (see stop) and gives each node still pending the
// Missing answer saying why. answers[i] belongs to r.nodes[i].
func (r *round[N, A]) collect(done Done[A]) []A {
	answers, got := r.answers(len(r.nodes))
	cut := r.wait(answers, got, done) // why the nodes still pending get no answer
	r.stop()
	for i := range answers {
		if !got[i] {
			answers[i] = r.f.Missing(cut)
		}
	}
	return answers
}

// wait fills answers and got as the answers arrive and returns why it
// stopped before every node answered: ErrNotAwaited when done said so, the
// caller's context error, or r.timedOut at the requests' deadline (nil
// when every node answered).
func (r *round[N, A]) wait(answers []A, got []bool, done Done[A]) error {
	pending := len(r.nodes)
	take := func(x indexed[A]) bool {
		answers[x.i], got[x.i] = x.a, true
		pending--
		return done != nil && done(answers, got)
	}
	for pending > 0 {
		select {
		case x := <-r.ch:
			if take(x) {
				return ErrNotAwaited
			}
		case <-r.ctx.Done():
			return r.ctx.Err()
		case <-r.nctx.Done():
			// Answers may have arrived together with the deadline.
			for drained := false; !drained && pending > 0; {
				select {
				case x := <-r.ch:
					if take(x) {
						return ErrNotAwaited
					}
				default:
					drained = true
				}
			}
			if err := r.ctx.Err(); err != nil {
				return err
			}
			return r.timedOut
		}
	}
	return nil
}

// stop ends the collection: answers that arrive from now on, and those
// that arrived after the last look, go to late (in a goroutine f.Wait
// tracks) or nowhere.
func (r *round[N, A]) stop() {
	r.mu.Lock()
	r.closed = true
	r.mu.Unlock()
	for drained := false; !drained; {
		select {
		case x := <-r.ch:
			if r.late != nil {
				r.f.Wait.Go(func() { r.late(r.nodes[x.i], x.a) })
			}
		default:
			drained = true
		}
	}
}
