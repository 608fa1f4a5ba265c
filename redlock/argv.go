package redlock

import (
	"strconv"
	"time"

	"github.com/redlease/redlease/internal/scripts"
)

// The command lines of the lock scripts, from a Client's constant
// arguments (scriptArgs) and a call's own.

// acquireCall is the acquire call of an attempt of value on key (standalone
// nodes' keys) for ttl.
func (sa *scriptArgs) acquireCall(key, value string, ttl time.Duration) *scriptCall {
	return scripts.NewCall(scripts.Acquire, []string{key, key + ":fence", markerKey},
		value, ttl.Milliseconds(), sa.maxTTL, sa.mode, sa.counterTTL, sa.fromZero, sa.layout)
}

// extendCall is the extend call of the lock of value on key (standalone
// nodes' keys), to ttl; fence: set its counter's TTL too (fenceDue).
func (sa *scriptArgs) extendCall(key, value string, ttl time.Duration, fence bool) *scriptCall {
	if fence {
		return scripts.NewCall(scripts.Extend, []string{key, markerKey, key + ":fence"},
			value, ttl.Milliseconds(), sa.maxTTL, sa.mode, sa.counterTTL)
	}
	return scripts.NewCall(scripts.Extend, []string{key, markerKey}, value, ttl.Milliseconds(), sa.maxTTL, sa.mode)
}

// extendManyCall is the extend_many call of a batch (its locks share one
// TTL), on node n's keys (nil: the keys as named, for standalone nodes);
// fence: set the fencing counters' TTL too (only then are the counters'
// keys sent).
func (sa *scriptArgs) extendManyCall(n *node, batch []extendItem, fence bool) *scriptCall {
	nk := 1 + len(batch)
	if fence {
		nk += len(batch)
	}
	keys := make([]string, 0, nk)
	args := make([]any, 0, 4+len(batch))
	if n == nil {
		keys = append(keys, markerKey)
	} else {
		keys = append(keys, n.marker())
	}
	args = append(args, sa.maxTTL, sa.mode, sa.counter(fence), strconv.FormatInt(batch[0].ttl.Milliseconds(), 10))
	for _, it := range batch {
		if n == nil {
			keys = append(keys, it.l.key)
		} else {
			keys = append(keys, n.lockKey(it.l.key))
		}
		args = append(args, it.l.value)
	}
	if fence {
		for _, it := range batch {
			if n == nil {
				keys = append(keys, it.l.key+":fence")
			} else {
				keys = append(keys, n.fenceKey(it.l.key))
			}
		}
	}
	return scripts.NewCall(scripts.ExtendMany, keys, args...)
}

// counter is the counter-TTL argument of an extend_many call: the
// counters' TTL when fence (fenceDue said so), else "0" (leave it as it
// is).
func (sa *scriptArgs) counter(fence bool) any {
	if fence {
		return sa.counterTTL
	}
	return "0"
}

// releaseCall is the release call of value on key; notice, when not "",
// is the channel its msg is published on (sharded "1": SPUBLISH).
func releaseCall(key, value, notice, msg, sharded string) *scriptCall {
	return scripts.NewCall(scripts.Release, []string{key}, value, notice, msg, sharded)
}
