package redlock

import (
	"slices"
	"time"

	"github.com/redlease/redlease/internal/reach"
)

// epoch is the origin of the nodes' answer times: a reading of the
// monotonic clock, so that the times stored as integers keep it.
var epoch = time.Now()

func init() {
	reach.Register(func(c any) time.Time { return c.(*Client).lastMajority() })
}

// answered records that n gave a valid answer (a vote) now.
func (n *node) answered() { n.lastAnswer.Store(int64(time.Since(epoch)) + 1) }

// lastMajority returns when a majority of the nodes last answered: the
// quorum-th latest of their last answers; the zero Time if never.
func (c *Client) lastMajority() time.Time {
	at := make([]int64, len(c.nodes))
	for i, n := range c.nodes {
		at[i] = n.lastAnswer.Load()
	}
	slices.Sort(at)
	t := at[len(at)-c.quorum]
	if t == 0 {
		return time.Time{}
	}
	return epoch.Add(time.Duration(t - 1))
}
