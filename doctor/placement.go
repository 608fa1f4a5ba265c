package doctor

import (
	"fmt"
	"slices"
	"strings"

	"github.com/redis/go-redis/v9"

	"github.com/redlease/redlease/internal/clusterkey"
)

// copyAt is where one copy of a cluster client's locks lives: copy index
// of bucket, in the slot of tag, served by master ("" if no master serves
// it).
type copyAt struct {
	index, bucket int
	tag           string
	slot          uint16
	master        string
}

// plan is the placement of a cluster client's copies (n copies in each of
// B buckets, as redlock.NewCluster computes them: clusterkey.BucketTag)
// on the masters of a CLUSTER SLOTS reply.
type plan struct {
	name       string
	n, buckets int
	copies     []copyAt // bucket after bucket, n copies each
	masters    []string // the masters that serve a slot, in slot order
}

func newPlan(slots []redis.ClusterSlot, name string, n, buckets int) *plan {
	p := &plan{name: name, n: n, buckets: buckets}
	slices.SortFunc(slots, func(a, b redis.ClusterSlot) int { return a.Start - b.Start })
	for _, r := range slots {
		if len(r.Nodes) > 0 && !slices.Contains(p.masters, r.Nodes[0].Addr) {
			p.masters = append(p.masters, r.Nodes[0].Addr)
		}
	}
	for b := range buckets {
		for i := range n {
			tag := clusterkey.BucketTag(i, b, n, buckets)
			cp := copyAt{index: i, bucket: b, tag: tag, slot: clusterkey.Slot(tag)}
			for _, r := range slots {
				if int(cp.slot) >= r.Start && int(cp.slot) <= r.End && len(r.Nodes) > 0 {
					cp.master = r.Nodes[0].Addr
				}
			}
			p.copies = append(p.copies, cp)
		}
	}
	return p
}

// scope is where the copies master serves keep their keys: the markers of
// every one, and the keys of name under the tag of its copy there (or of
// another copy where name has none there).
func (p *plan) scope(master string) scope {
	sc := scope{cluster: true}
	mine := clusterkey.Bucket(p.name, p.buckets)
	for _, cp := range p.copies {
		if cp.master != master {
			continue
		}
		sc.markers = append(sc.markers, tagMarker(cp.tag))
		if sc.tag == "" || cp.bucket == mine {
			sc.tag = cp.tag
		}
	}
	return sc
}

// placement checks that the copies of each bucket are on distinct masters
// (one master's failure costs one vote), naming where name's are.
func (p *plan) placement() Finding {
	mine := clusterkey.Bucket(p.name, p.buckets)
	var where, unserved []string
	shared, sharedMine := 0, false
	for b := range p.buckets {
		seen, dup := map[string]bool{}, false
		for _, cp := range p.copies[b*p.n : (b+1)*p.n] {
			if b == mine {
				where = append(where, fmt.Sprintf("copy %d slot %d on %s", cp.index, cp.slot, orUnknown(cp.master)))
			}
			if cp.master == "" {
				unserved = append(unserved, fmt.Sprintf("copy %d of bucket %d (slot %d)", cp.index, b, cp.slot))
				continue
			}
			dup = dup || seen[cp.master]
			seen[cp.master] = true
		}
		if dup {
			shared++
			sharedMine = sharedMine || b == mine
		}
	}
	found := fmt.Sprintf("%s (bucket %d of %d): %s", p.name, mine, p.buckets, strings.Join(where, ", "))
	f := Finding{ID: CheckPlacement, Severity: OK, Found: fmt.Sprintf("%d masters, each copy of a bucket on its own; %s", len(p.masters), found)}
	switch {
	case len(unserved) > 0:
		f.Severity, f.Found = Fail, fmt.Sprintf("no master serves %s; %s", strings.Join(unserved, ", "), found)
		f.Risk = "those copies cannot vote: the locks of their buckets have a fault fewer to spare"
		f.Fix = "assign every slot to a master (redis-cli --cluster fix)"
	case len(p.masters) < p.n:
		f.Severity, f.Found = Warn, fmt.Sprintf("%d masters for %d copies: copies share masters; %s", len(p.masters), p.n, found)
		f.Risk = "one master's failure costs several votes of a lock: with a majority of its copies there, it stops the lock"
		f.Fix = "one master per copy at least, or fewer copies (--replicas, odd)"
	case shared > 0:
		which := ""
		if sharedMine {
			which = ", this name's among them"
		}
		f.Severity, f.Found = Fail, fmt.Sprintf("%d of %d buckets have two copies on one master%s; %s", shared, p.buckets, which, found)
		f.Risk = "one master's failure costs two votes of every lock in those buckets: with 3 copies, the majority"
		f.Fix = "give each master an equal contiguous share of the slots (redis-cli --cluster rebalance), as redlock's tags assume"
	}
	return f
}
