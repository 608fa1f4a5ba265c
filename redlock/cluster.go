package redlock

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redlease/redlease/internal/clusterkey"
	"github.com/redlease/redlease/internal/notice"
)

// NewCluster returns a Client that keeps every lock as n copies (n odd, from
// 1 to 15; 0 means 3) in n hash slots of one Redis Cluster, each copy one
// vote.
//
// Keys are spread over B buckets (Config.Buckets; default 16): key k is in
// bucket FNV-1a(k) mod B, and copy i of k lives in the slot of a hash tag
// T(i, b, n, B): keys "{T}:<key>", "{T}:<key>:fence" and the marker
// "{T}:marker" (docs/design.md §4.11). A tag is a pure function of (i, b, n,
// B), never of the observed topology, so every client computes the same
// keys. The n*B tags are spread evenly over the 16384 slots, and the n
// copies of a bucket are 16384/n slots apart, so that with the standard
// contiguous slot layout they fall on n different masters, and lock traffic
// on every master. Keys that carry a hash tag of their own keep working (the
// copy's tag comes first). Every client sharing the cluster must use the
// same n and B: each marker records them, and a client with another layout
// is refused by every script that meets such a marker, with an error naming
// both layouts (two layouts would keep a key in different slots, and could
// grant it twice); NewCluster also records the layout in the key
// "{rl-layout}:marker" and refuses another one found there (delete that key,
// with every client stopped, to change the layout). NewCluster touches the
// n*B markers, so that their quarantines start together. Clients of redlease
// before buckets used the layout of Buckets 1 and record no layout: upgrade
// them with Buckets 1, or stop every one of them before the first client of
// another layout starts.
//
// Redlock checks which master serves each copy (CLUSTER SLOTS) at start-up
// and whenever the topology may have changed under a copy: after a node
// error, after a reply to an acquisition that came from another server than
// the copy's previous one (its run_id, which the reply carries anyway:
// go-redis follows MOVED and ASK redirects by itself, so a migrated slot
// shows there first), and at least every 10s while the Client is used (every
// second for 10s after a copy answered from a new server while the slot map
// still named the old one: a slot half-way through a migration). It logs a
// warning, once per change, when two copies of a bucket share a master (a
// failure of that master then costs two votes for the keys of that bucket)
// or a copy's master is unknown, and errors, logs and [Client.Inspect] name
// each copy by its slot and that master. Two copies on one master still
// count as two votes: slots move under a running cluster, and refusing the
// second would stop every lock during a reshard. After a node error redlock
// asks the cluster client to reload its slot map (go-redis only does so by
// itself every 60s, or on a redirect). A promoted replica is quarantined
// like a restarted server: its run_id differs from the marker it inherited.
//
// Run the cluster with cluster-require-full-coverage no: with the default
// (yes), while a failed master is being replaced every master answers
// CLUSTERDOWN, so one failure stops every lock instead of costing one vote
// (redlock logs a warning when it sees the setting).
func NewCluster(ctx context.Context, cfg Config, cluster *redis.ClusterClient, n int) (*Client, error) {
	if cluster == nil || isNil(cluster) {
		return nil, fmt.Errorf("%w: nil cluster client", ErrInvalidConfig)
	}
	if n == 0 {
		n = clusterkey.DefaultReplicas
	}
	if n < 1 || n%2 == 0 || n > 15 {
		return nil, fmt.Errorf("%w: replicas (%d) must be odd, from 1 to 15", ErrInvalidConfig, n)
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	buckets := cfg.Buckets
	c := &Client{cfg: cfg, quorum: n/2 + 1, closing: make(chan struct{}), cluster: cluster}
	c.log = quietLogger{cfg.Logger, c}
	c.args = newScriptArgs(&c.cfg)
	c.args.layout = clusterkey.Layout(n, buckets)
	for b := range buckets {
		set := make([]*node, 0, n)
		for i := range n {
			tag := clusterkey.BucketTag(i, b, n, buckets)
			name := fmt.Sprintf("slot %d", clusterkey.Slot(tag))
			if buckets > 1 {
				name = fmt.Sprintf("copy %d", i) // the same for every bucket: notices, Nodes
			}
			nd := newNode(cluster, name, true)
			nd.idx, nd.bucket, nd.tag, nd.cluster, nd.bySlot = i, b, tag, cluster, buckets == 1
			set = append(set, nd)
			c.all = append(c.all, nd)
		}
		c.sets = append(c.sets, set)
	}
	c.nodes = c.sets[0]
	if err := c.checkLayout(ctx); err != nil {
		return nil, err
	}
	// The placement first: the start-up logs name each copy's master.
	c.placement.lastCheck.Store(time.Now().UnixNano())
	c.checkPlacement(ctx)
	if err := c.checkNodes(ctx, false); err != nil {
		return nil, err
	}
	return c, nil
}

// checkLayout records the client's layout in clusterkey.LayoutKey where
// none is, and refuses another one found there. A cluster that cannot be asked (down,
// or the key refused to this user) is logged and accepted: every script
// still checks the layout of the markers it meets.
func (c *Client) checkLayout(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, max(time.Second, c.cfg.NodeTimeout))
	defer cancel()
	mine := c.args.layout.(string)
	old, err := c.cluster.SetArgs(ctx, clusterkey.LayoutKey, mine, redis.SetArgs{Mode: "NX", Get: true}).Result()
	switch {
	case err == redis.Nil: // recorded now
		return nil
	case err != nil:
		c.log.Warn("cluster: the layout of the cluster's clients could not be read or recorded; every script checks it in the markers it meets",
			"key", clusterkey.LayoutKey, "layout", mine, "error", err)
		return nil
	case old != mine:
		return fmt.Errorf("%w: cluster layout: this client has %s, the cluster's clients use %s (recorded in %s): every client sharing a cluster must use the same copies (n) and buckets (B; Config.Buckets)",
			ErrInvalidConfig, mine, old, clusterkey.LayoutKey)
	}
	return nil
}

// nodesFor is the set of nodes that vote on key.
func (c *Client) nodesFor(key string) []*node {
	if len(c.sets) == 1 {
		return c.nodes
	}
	return c.sets[clusterkey.Bucket(key, len(c.sets))]
}

// nodesForChannel is the set of nodes that carry a Pub/Sub channel: those of
// its key for a key's notice channel (internal/notice.Channel: the release
// script publishes in the lock's slot), of the channel's own name
// otherwise.
func (c *Client) nodesForChannel(channel string) []*node {
	if len(c.sets) == 1 {
		return c.nodes
	}
	key, _ := notice.KeyOf(channel) // the channel itself when not a notice channel
	return c.nodesFor(key)
}

// replica is where one copy of the locks of a cluster Client lives: copy
// Index of the keys of bucket Bucket.
type replica struct {
	Index  int
	Bucket int
	Tag    string
	Slot   uint16
	Master string // address of the master serving the slot; "" if unknown
	Err    error  // why the master is unknown
}

// placementNow reports, for a Client made by NewCluster, which master serves
// each copy of each bucket now (bucket after bucket, n copies each), and
// whether two copies of one bucket share a master. It asks the cluster
// (CLUSTER SLOTS, one request through the cluster client), and reads the
// cluster client's slot map if that request fails. It is nil for a Client
// over independent nodes.
func (c *Client) placementNow(ctx context.Context) (replicas []replica, shared bool) {
	if c.cluster == nil {
		return nil, false
	}
	// CLUSTER SLOTS, not SHARDS: it answers on every Redis version, it is
	// what go-redis reads its slot map from, and the ACL in SECURITY.md
	// allows it.
	//lint:ignore SA1019 see above
	slots, slotsErr := c.cluster.ClusterSlots(ctx).Result()
	var seen map[string]bool
	for _, n := range c.all {
		if n.idx == 0 {
			seen = map[string]bool{} // a new bucket
		}
		r := replica{Index: n.idx, Bucket: n.bucket, Tag: n.tag, Slot: clusterkey.Slot(n.tag)}
		if slotsErr == nil {
			r.Master, r.Err = slotMaster(slots, r.Slot)
		} else if m, err := c.cluster.MasterForKey(ctx, n.marker()); err != nil {
			r.Err = errors.Join(slotsErr, err)
		} else {
			r.Master = m.Options().Addr
		}
		if r.Master != "" {
			if seen[r.Master] {
				shared = true
			}
			seen[r.Master] = true
		}
		replicas = append(replicas, r)
	}
	return replicas, shared
}

// slotMaster finds the master of slot in a CLUSTER SLOTS reply.
func slotMaster(slots []redis.ClusterSlot, slot uint16) (string, error) {
	for _, r := range slots {
		if int(slot) >= r.Start && int(slot) <= r.End && len(r.Nodes) > 0 {
			return r.Nodes[0].Addr, nil
		}
	}
	return "", fmt.Errorf("slot %d is not served", slot)
}

// checkPlacement checks which master serves each copy, records it (errors
// and logs name a copy by its slot and that master), and logs the
// placement once per change, as a warning when it costs fault tolerance.
func (c *Client) checkPlacement(ctx context.Context) (changed bool) {
	rs, shared := c.placementNow(ctx)
	var b strings.Builder
	unknown := false
	var which []string // copies of one bucket on one master
	on := map[string][]string{}
	for i, r := range rs {
		if r.Index == 0 {
			for m, cs := range on {
				if len(cs) > 1 {
					which = append(which, "copies "+strings.Join(cs, " and ")+" on "+m)
				}
			}
			clear(on)
		}
		fmt.Fprintf(&b, "%d:%s ", r.Slot, r.Master)
		c.all[i].setMaster(r.Master)
		if r.Master == "" {
			unknown = true
		} else {
			on[r.Master] = append(on[r.Master], fmt.Sprintf("%d (slot %d)", r.Index, r.Slot))
		}
	}
	for m, cs := range on {
		if len(cs) > 1 {
			which = append(which, "copies "+strings.Join(cs, " and ")+" on "+m)
		}
	}
	sig := strings.TrimSpace(b.String())
	c.placement.mu.Lock()
	changed = sig != c.placement.last
	c.placement.last = sig
	c.placement.mu.Unlock()
	if !changed {
		return false
	}
	switch {
	case unknown:
		c.log.Warn("cluster: the master of a lock copy is unknown", "placement", sig)
	case shared:
		slices.Sort(which)
		msg := "cluster: two copies of every lock share a master: one failure costs two votes"
		if len(c.sets) > 1 {
			msg = "cluster: two copies of the locks of a bucket share a master: one failure costs two votes for its keys"
		}
		c.log.Warn(msg, "shared", strings.Join(which, "; "), "placement", sig)
	default:
		c.log.Info("cluster: each copy of the locks on its own master", "placement", sig)
	}
	return true
}

// clusterState is the part of a Client that watches a cluster's topology.
type clusterState struct {
	mu         sync.Mutex
	last       string    // placement signature last logged
	lastReload time.Time // rate limit of reloads after errors

	checking  atomic.Bool  // a recheck goroutine runs
	again     atomic.Bool  // a recheck was asked for since it last looked
	lastCheck atomic.Int64 // UnixNano of the last recheck asked for
	// A copy answered from another server but the slot map had not
	// changed: a slot being migrated, whose keys the new master already
	// serves after an ASK. Until unsettled (UnixNano), the placement is
	// checked every placementSoon, so that the end of the migration is
	// seen even if no reply comes from yet another server.
	moved     atomic.Bool
	unsettled atomic.Int64
}

// placementSoon is how often the placement is checked while a copy is
// unsettled (see clusterState).
const placementSoon = time.Second

// placementEvery is how often a cluster Client in use checks its placement
// when nothing else made it look: it covers a move that no reply revealed
// (quarantine off, so no run_id in replies) and a node that answered the
// check with a stale view of a move.
const placementEvery = 10 * time.Second

// recheckPlacement checks the placement again in the background: at most
// one check runs at a time, and a request made while one runs makes it
// look once more.
func (c *Client) recheckPlacement() {
	if c.cluster == nil {
		return
	}
	c.placement.lastCheck.Store(time.Now().UnixNano())
	c.placement.again.Store(true)
	if !c.placement.checking.CompareAndSwap(false, true) {
		return
	}
	c.wg.Go(func() {
		for {
			for c.placement.again.Swap(false) {
				moved := c.placement.moved.Swap(false)
				ctx, cancel := context.WithTimeout(context.Background(), time.Second)
				if !c.checkPlacement(ctx) && moved {
					c.placement.unsettled.Store(time.Now().Add(placementEvery).UnixNano())
				}
				cancel()
			}
			c.placement.checking.Store(false)
			// A request that came after the last look but before the flag
			// was cleared found the check running: look again.
			if !c.placement.again.Load() || !c.placement.checking.CompareAndSwap(false, true) {
				return
			}
		}
	})
}

// placementDue rechecks the placement if it was not looked at for
// placementEvery (placementSoon while a copy is unsettled); every fan-out
// of a cluster Client calls it.
func (c *Client) placementDue() {
	if c.cluster == nil {
		return
	}
	every, now := placementEvery, time.Now().UnixNano()
	if now < c.placement.unsettled.Load() {
		every = placementSoon
	}
	if time.Duration(now-c.placement.lastCheck.Load()) > every {
		c.recheckPlacement()
	}
}

// answeredBy records which server answered for a cluster copy (the first
// 48 bits of its run_id; 0: unknown); a change means the copy's slot
// moved (a migration, a failover), so the placement is checked again.
// Replies carry the server anyway (one vote per server, the quarantine):
// this costs no request.
func (c *Client) answeredBy(n *node, server int64) {
	if n.cluster == nil || server == 0 {
		return
	}
	if old := n.server.Load(); old == server {
		return
	}
	if old := n.server.Swap(server); old != 0 && old != server {
		c.placement.moved.Store(true)
		c.recheckPlacement()
	}
}

// serverID is the server identity acquire.lua replies: the first 48 bits
// of a run_id (0 for a run_id that is not hex).
func serverID(runID string) int64 {
	if len(runID) < 12 {
		return 0
	}
	id, err := strconv.ParseInt(runID[:12], 16, 64)
	if err != nil {
		return 0
	}
	return id
}

// nodeFailed reacts to an error from a cluster node: reload the slot map
// (at most every 100ms), and check the placement again.
func (c *Client) nodeFailed(n *node, err error) {
	if n.cluster == nil || err == nil || err == redis.Nil {
		return
	}
	c.placement.mu.Lock()
	due := time.Since(c.placement.lastReload) > 100*time.Millisecond
	if due {
		c.placement.lastReload = time.Now()
	}
	c.placement.mu.Unlock()
	if !due {
		return
	}
	n.cluster.ReloadState(context.Background())
	c.recheckPlacement()
}
