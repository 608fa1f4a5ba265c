package lease

import (
	"context"
	"fmt"
	"time"

	"github.com/redlease/redlease/redlock"
)

// Info is what a majority read of a lease's key tells (see [Inspect]).
type Info struct {
	// Key is the lease's key that was read.
	Key string
	// Holder is the decoded value held on a majority of nodes; nil when no
	// value is. A value written by another Redlock client is a Holder with
	// Foreign set.
	Holder *Holder
	// Token is the holder's fencing token (the highest fencing counter among
	// the majority's nodes).
	Token uint64
	// Remaining is the validity the holder has left as far as the nodes
	// tell (lowest PTTL of the majority, minus the read's duration and the
	// drift allowance): an estimate for display and waiting, not a
	// guarantee. The holder itself gives up SafetyMargin earlier.
	Remaining time.Duration
	// Nodes has every node's view, in the client's node order (each
	// node's Value as stored; Holder is the majority's, decoded).
	Nodes []redlock.NodeState
}

// Inspect reads key on every node and reports the lease's holder found on a
// majority, if any, with every node's view. When no value is held by a
// majority (free, expiring, contended, too many nodes unreachable or
// quarantined) it returns the Info (Holder nil, Nodes set) and an error
// matching redlock.ErrNoHolder. Other errors (a closed client, an empty key)
// come with a nil Info. Inspect writes nothing; it is safe for concurrent
// use.
func Inspect(ctx context.Context, client *redlock.Client, key string) (*Info, error) {
	if client == nil {
		return nil, fmt.Errorf("%w: nil *redlock.Client", redlock.ErrInvalidArgument)
	}
	in, err := client.Inspect(ctx, key)
	if in == nil {
		return nil, err
	}
	info := &Info{Key: in.Key, Token: in.Token, Remaining: in.Remaining, Nodes: in.Nodes}
	if in.Value != "" {
		h := decodeValue(in.Value)
		info.Holder = &h
	}
	return info, err
}
