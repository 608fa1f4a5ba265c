package redlock

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/redlease/redlease/internal/rediserr"
	"github.com/redlease/redlease/internal/scripts"
)

// Requests to one node are batched: while maxInFlight requests or pipelines
// to the node are in flight, the requests that arrive queue up, and the next
// pipeline carries all of them. A process that holds many leases therefore
// refreshes them in a few round trips per node rather than one each, while
// a request that finds the node not busy goes out at once, unbatched (a slow
// straggler of an earlier call does not hold it up). There is no goroutine
// behind this: a caller that finds room sends (it leads), and when it is
// done it hands the lead to the oldest waiting request.

// maxInFlight is how many requests or pipelines one node may have in
// flight before requests queue.
const maxInFlight = 4

// maxBatch bounds one pipeline.
const maxBatch = 512

type batchReq struct {
	call *scriptCall

	res  any
	err  error
	done chan struct{} // closed when res, err are set
	lead chan struct{} // closed when this request must send the next batch

	abandoned bool // guarded by batcher.mu: the caller stopped waiting
	leading   bool // guarded by batcher.mu
}

type batcher struct {
	mu       sync.Mutex
	queue    []*batchReq
	inFlight int // requests or pipelines being sent
}

// run sends one script call to the node, batched with concurrent ones.
// ctx bounds how long the caller waits; a request that is abandoned before
// it was sent is never sent.
func (n *node) run(ctx context.Context, sc *scriptCall) (any, error) {
	res, err := n.runBatched(ctx, sc)
	return res, annotate(sc, err)
}

func (n *node) runBatched(ctx context.Context, sc *scriptCall) (any, error) {
	b := &n.batch
	b.mu.Lock()
	if b.inFlight < maxInFlight {
		b.inFlight++
		b.mu.Unlock()
		// Alone: no pipeline. Then pass the lead on.
		res, err := sc.Run(ctx, n.client, &n.fcall)
		n.handOff(ctx)
		return res, classify(err)
	}
	r := &batchReq{call: sc, done: make(chan struct{}), lead: make(chan struct{})}
	b.queue = append(b.queue, r)
	b.mu.Unlock()

	select {
	case <-r.done:
		// Sent by another leader, and perhaps chosen to lead at the same
		// moment: then the lead must still be taken, or the node's place
		// in flight is never given back.
		b.mu.Lock()
		leading := r.leading
		b.mu.Unlock()
		if leading {
			n.send(ctx)
		}
		return r.res, r.err
	case <-r.lead:
		n.send(ctx)
		<-r.done
		return r.res, r.err
	case <-ctx.Done():
		b.mu.Lock()
		if !r.leading {
			r.abandoned = true
			b.mu.Unlock()
			return nil, ctx.Err()
		}
		b.mu.Unlock()
		// Chosen to lead at the same moment: lead anyway, so the queue
		// does not stall, then report our own timeout.
		<-r.lead
		n.send(ctx)
		return nil, ctx.Err()
	}
}

// send takes the queue (up to maxBatch requests still wanted) and sends it
// as one pipeline, then hands the lead on.
func (n *node) send(ctx context.Context) {
	b := &n.batch
	b.mu.Lock()
	var batch []*batchReq
	rest := b.queue[:0]
	for _, r := range b.queue {
		switch {
		case r.abandoned:
		case len(batch) < maxBatch:
			batch = append(batch, r)
		default:
			rest = append(rest, r)
		}
	}
	b.queue = rest
	b.mu.Unlock()

	if len(batch) > 0 {
		// The leader's own ctx may be ending; the others still wait for
		// their answers, so the pipeline gets its own bound.
		pctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), pipelineTimeout)
		pipeline(pctx, n.client, &n.fcall, batch)
		cancel()
	}
	n.handOff(ctx)
}

// pipelineTimeout bounds one batch when go-redis honours contexts; callers
// stop waiting at their own NodeTimeout whatever happens.
const pipelineTimeout = 5 * time.Second

// handOff passes the lead to the oldest waiting request, or frees a place.
func (n *node) handOff(context.Context) {
	b := &n.batch
	b.mu.Lock()
	defer b.mu.Unlock()
	for len(b.queue) > 0 && b.queue[0].abandoned {
		b.queue = b.queue[1:]
	}
	// The oldest request that is not already about to lead; a leader takes
	// the whole queue, so a request may be sent by another leader than its
	// own lead, which then finds less (or nothing) to send.
	for _, r := range b.queue {
		if !r.abandoned && !r.leading {
			r.leading = true
			close(r.lead)
			return
		}
	}
	b.inFlight--
}

// annotate names the script and its keys in an error that a permission
// refusal (ACL) caused, since Redis's own message may not say which key or
// command was refused.
func annotate(sc *scriptCall, err error) error {
	if c, ok := replyClass(err); !ok || c != rediserr.Permission {
		return err
	}
	return fmt.Errorf("%s script on keys %s (commands %s): %w",
		scripts.Name(sc.Script()), strings.Join(sc.Keys(), ", "), scripts.Commands(sc.Script()), err)
}

// pipeline runs a batch with FCALL (in FCALL mode) or EVALSHA, and again
// for the requests that met NOSCRIPT or "Function not found" (a restarted
// or flushed server): by FCALL once the library is loaded again, or else
// by EVAL, the node then in EVALSHA mode (see scripts.Call.Run). Every
// error reply is classified here, as it arrives (rediserr.go).
func pipeline(ctx context.Context, c redis.UniversalClient, mode *atomic.Bool, batch []*batchReq) {
	fcall := mode.Load()
	cmds := make([]*redis.Cmd, len(batch))
	_, _ = c.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, r := range batch {
			cmds[i] = p.Do(ctx, r.call.Argvs(fcall)...)
		}
		return nil
	})
	var retry []int
	for i, cmd := range cmds {
		if scripts.NoScript(cmd.Err()) {
			retry = append(retry, i)
		}
	}
	if len(retry) > 0 {
		loaded := fcall && scripts.Reload(ctx, c, mode)
		_, _ = c.Pipelined(ctx, func(p redis.Pipeliner) error {
			for _, i := range retry {
				if loaded {
					cmds[i] = p.Do(ctx, batch[i].call.FcallArgv()...)
				} else {
					cmds[i] = p.Do(ctx, batch[i].call.EvalArgv()...)
				}
			}
			return nil
		})
	}
	for i, r := range batch {
		var err error
		r.res, err = cmds[i].Result()
		r.err = classify(err)
		close(r.done)
	}
}
