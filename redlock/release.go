package redlock

import (
	"context"
	"time"
)

// unlock is what a release deletes: value on key (standalone nodes' name
// of it), and the notice it publishes, msg on channel notice ("": none).
type unlock struct{ key, value, notice, msg string }

// on runs release.lua through fan on every node of set but those that
// skip reports (nil: none); done decides when to stop waiting (nil: for
// every node, bounded by NodeTimeout). Skipped nodes answer
// errStillAcquiring. answers[i] belongs to set[i].
func (u unlock) on(ctx context.Context, fan *fanout, set []*node, done func([]answer, []bool) bool, skip func(i int) bool) []answer {
	nodes := set
	if skip != nil {
		nodes = make([]*node, 0, len(set))
		for i, n := range set {
			if !skip(i) {
				nodes = append(nodes, n)
			}
		}
	}
	plain := u.call(nil)
	answers := fan.Run(ctx, nodes, func(ctx context.Context, n *node) answer {
		sc := plain
		if n.tag != "" {
			sc = u.call(n)
		}
		return releaseReply(n.run(ctx, sc))
	}, done, nil)
	if len(nodes) == len(set) {
		return answers
	}
	all := make([]answer, len(set))
	for i := range all {
		all[i] = answer{vote: voteError, err: errStillAcquiring}
	}
	for j, n := range nodes {
		all[n.idx] = answers[j]
	}
	return all
}

// call is the release on node n (nil: any standalone node); a cluster's
// copy publishes its notice in the copy's slot (SPUBLISH).
func (u unlock) call(n *node) *scriptCall {
	if n == nil || n.tag == "" {
		return releaseCall(u.key, u.value, u.notice, u.msg, "0")
	}
	ch, sharded := u.notice, "0"
	if u.notice != "" {
		ch, sharded = n.lockKey(u.notice), "1"
	}
	return releaseCall(n.lockKey(u.key), u.value, ch, u.msg, sharded)
}

// all undoes a failed or lost acquisition on every node, with its own
// bounded context (docs/design.md S8); used in the background.
func (u unlock) all(fan *fanout, nodes []*node) {
	u.on(context.Background(), fan, nodes, nil, nil)
}

func releaseReply(res any, err error) answer {
	v, err := intReply(res, err)
	return yesNo(v, err, func(v int64) error { return badReply(v) })
}

// runAlone runs sc on n bounded by d, its answer dropped: a straggler's
// release or settle, in the background.
func (n *node) runAlone(d time.Duration, sc *scriptCall) {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	n.run(ctx, sc)
}
