package redlock

import (
	"context"
	"sync"

	"github.com/redis/go-redis/v9"

	"github.com/redlease/redlease/internal/redlockx/link"
)

// Change notices: a holder PUBLISHes on a per-key channel when it acquires
// or releases, and waiters SUBSCRIBE on every node to retry at once instead
// of at their next poll. Notices are hints: they may be lost, duplicated or
// forged by anyone who can publish, so a receiver always confirms with a
// majority read or an attempt of its own.

// publish sends message on channel to every node at once and returns how
// many nodes took it, waiting at most NodeTimeout (internal/redlockx).
func (c *Client) publish(ctx context.Context, channel, message string) (int, error) {
	if err := c.enter(); err != nil {
		return 0, err
	}
	defer c.mu.RUnlock()
	answers := c.fanout(ctx, c.nodesForChannel(channel), func(ctx context.Context, n *node) answer {
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
// node. It owns one goroutine per node until Close. Safe for concurrent use.
type subscription struct {
	c      chan link.Notice
	subs   []*redis.PubSub
	wg     sync.WaitGroup
	cancel context.CancelFunc
	once   sync.Once
}

// subscribe listens on channel on every node (internal/redlockx). Nodes
// that are down are retried by go-redis in the background. Close the
// subscription when done.
//
// On a cluster Client with buckets ([NewCluster]), a notice channel
// (internal/notice.Channel) is carried by the slots of its key's copies,
// where the release of a lock on key publishes its notice (releaseNotice).
// Other channels are carried in the slots of their own name.
func (c *Client) subscribe(ctx context.Context, channel string) (*subscription, error) {
	if err := c.enter(); err != nil {
		return nil, err
	}
	defer c.mu.RUnlock()
	ctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	s := &subscription{c: make(chan link.Notice, 64), cancel: cancel}
	for _, n := range c.nodesForChannel(channel) {
		uc := n.client
		var ps *redis.PubSub
		if n.tag != "" {
			ps = uc.SSubscribe(ctx, n.lockKey(channel))
		} else {
			ps = uc.Subscribe(ctx, channel)
		}
		s.subs = append(s.subs, ps)
		in := ps.Channel()
		s.wg.Go(func() {
			for {
				select {
				case m, ok := <-in:
					if !ok {
						return
					}
					select {
					case s.c <- link.Notice{Node: n.addr, Payload: m.Payload}:
					default: // a notice is a hint; a full buffer already wakes the reader
					}
				case <-ctx.Done():
					return
				}
			}
		})
	}
	return s, nil
}

// C returns the notices. It is never closed; stop reading after Close.
func (s *subscription) C() <-chan link.Notice { return s.c }

// Close ends the subscription on every node and waits for its goroutines.
// Closing twice is safe.
func (s *subscription) Close() error {
	s.once.Do(func() {
		s.cancel()
		for _, ps := range s.subs {
			_ = ps.Close()
		}
		s.wg.Wait()
	})
	return nil
}
