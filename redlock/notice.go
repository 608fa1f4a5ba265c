package redlock

import (
	"context"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redlease/redlease/internal/redlockx"
)

// Change notices: a holder PUBLISHes on a per-key channel when it acquires
// or releases, and waiters SUBSCRIBE on every node to retry at once instead
// of at their next poll. Notices are hints: they may be lost, duplicated or
// forged by anyone who can publish, so a receiver always confirms with a
// majority read or an attempt of its own.

// Publish sends message on channel to every node at once and returns how
// many nodes took it, waiting at most NodeTimeout (redlockx.Client.Publish).
func (i internal) Publish(ctx context.Context, channel, message string) (int, error) {
	c := i.c
	if err := c.enter(); err != nil {
		return 0, err
	}
	defer c.mu.RUnlock()
	answers := c.fan.Run(ctx, c.sets.forChannel(channel), func(ctx context.Context, n *node) answer {
		var err error
		if n.tag != "" {
			err = n.client.SPublish(ctx, n.lockKey(channel), message).Err()
		} else {
			err = n.client.Publish(ctx, channel, message).Err()
		}
		if err != nil {
			return answer{vote: voteError, err: err}
		}
		return answer{vote: voteYes}
	}, nil, nil)
	ok := 0
	for _, a := range answers {
		if a.vote == voteYes {
			ok++
		}
	}
	return ok, nil
}

// subscription receives the notices published on one channel on every
// node. Each node has its own goroutine, which makes the node's
// subscription (connection set-up included) and forwards its notices
// until Close or the Client's Close; the Client counts these goroutines
// (its Close waits for them). Safe for concurrent use.
type subscription struct {
	c      chan redlockx.Notice
	cancel context.CancelFunc
}

// Subscribe listens on channel on every node (redlockx.Client.Subscribe). The
// nodes' subscriptions are made concurrently, each in its node's
// goroutine; subscribe returns once a majority of them were tried (made,
// or refused), or after NodeTimeout, or when ctx ends, so that a node
// that accepts connections and never answers (a paused server, a
// black-holed address) delays nothing. Nodes that are down are retried by
// go-redis in the background. Close the subscription when done.
//
// On a cluster Client with buckets ([NewCluster]), a notice channel
// (internal/notice.Channel) is carried by the slots of its key's copies,
// where the release of a lock on key publishes its notice (releaseNotice).
// Other channels are carried in the slots of their own name.
func (i internal) Subscribe(ctx context.Context, channel string) (redlockx.Subscription, error) {
	c := i.c
	if err := c.enter(); err != nil {
		return nil, err // not a nil *subscription in an interface
	}
	// Not cut by the caller's cancellation (only by Close): a dial in
	// progress is abandoned at Close, since the context is the dial's.
	lctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	s := &subscription{c: make(chan redlockx.Notice, 64), cancel: cancel}
	nodes := c.sets.forChannel(channel)
	tried := make(chan struct{}, len(nodes))
	for _, n := range nodes {
		c.wg.Go(func() { s.listen(lctx, c.closing, n, channel, tried) })
	}
	c.mu.RUnlock() // the wait below does not hold up the Client's Close
	waitTried(ctx, tried, len(nodes)/2+1, c.cfg.NodeTimeout)
	return s, nil
}

// waitTried waits until need nodes were tried, at most d, or until ctx
// ends.
func waitTried(ctx context.Context, tried <-chan struct{}, need int, d time.Duration) {
	timer := time.NewTimer(d)
	defer timer.Stop()
	for range need {
		select {
		case <-tried:
		case <-timer.C:
			return
		case <-ctx.Done():
			return
		}
	}
}

// listen is node n's goroutine of a subscription: it subscribes (which
// blocks while go-redis connects; its socket timeouts bound that), says
// so on tried, and forwards the node's notices until ctx ends or the
// Client closes. Then it closes the node's PubSub, which may wait for a
// connection set-up in progress (bounded the same way): nobody waits for
// this goroutine but the Client's Close.
func (s *subscription) listen(ctx context.Context, closing <-chan struct{}, n *node, channel string, tried chan<- struct{}) {
	var ps *redis.PubSub
	if n.tag != "" {
		ps = n.client.SSubscribe(ctx, n.lockKey(channel))
	} else {
		ps = n.client.Subscribe(ctx, channel)
	}
	tried <- struct{}{} // buffered for every node
	defer ps.Close()
	if ctx.Err() != nil {
		return // closed during the set-up
	}
	in := ps.Channel()
	for {
		select {
		case m, ok := <-in:
			if !ok {
				return
			}
			select {
			case s.c <- redlockx.Notice{Node: n.addr, Payload: m.Payload}:
			default: // a notice is a hint; a full buffer already wakes the reader
			}
		case <-ctx.Done():
			return
		case <-closing:
			return
		}
	}
}

// C returns the notices. It is never closed; stop reading after Close.
func (s *subscription) C() <-chan redlockx.Notice { return s.c }

// Close ends the subscription on every node. It does not wait: each
// node's goroutine ends as soon as its node's connection set-up, if one
// is in progress, ends (the Client's Close waits for them). Closing twice
// is safe.
func (s *subscription) Close() error {
	s.cancel()
	return nil
}
