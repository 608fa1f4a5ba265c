package redlock

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/redis/go-redis/v9"

	"github.com/redlease/redlease/internal/clusterkey"
	"github.com/redlease/redlease/internal/placement"
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
		return nil, fmt.Errorf("%w: nil cluster client", ErrInvalidArgument)
	}
	if n == 0 {
		n = clusterkey.DefaultReplicas
	}
	if n < 1 || n%2 == 0 || n > 15 {
		return nil, fmt.Errorf("%w: replicas (%d) must be odd, from 1 to 15", ErrInvalidArgument, n)
	}
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	buckets := cfg.Buckets
	c := emptyClient(cfg, n/2+1)
	c.cluster = cluster
	c.args.layout = clusterkey.Layout(n, buckets)
	var copies []placement.Copy
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
			copies = append(copies, placement.Copy{Index: i, Bucket: b, Tag: tag, Marker: nd.marker(), Master: &nd.master})
		}
		c.sets = append(c.sets, set)
	}
	c.placement.Watch(cluster, copies, buckets, c.log, &c.wg)
	c.nodes = c.sets[0]
	c.reportQuarantines()
	c.watchClocks()
	c.guard.Init(guardConfig(c))
	c.check = checker(c)
	if err := checkLayout(ctx, cluster, c.args.layout.(string), max(time.Second, cfg.NodeTimeout), c.log); err != nil {
		return nil, err
	}
	// The placement first: the start-up logs name each copy's master.
	c.placement.Start()
	c.placement.Check(ctx)
	if err := checkNodes(ctx, c, false); err != nil {
		return nil, err
	}
	return c, nil
}

// checkLayout records a cluster client's layout (mine) in
// clusterkey.LayoutKey where none is, and refuses another one found there,
// asking for at most wait. A cluster that cannot be asked (down, or the
// key refused to this user) is logged and accepted: every script still
// checks the layout of the markers it meets.
func checkLayout(ctx context.Context, cluster *redis.ClusterClient, mine string, wait time.Duration, log hclog.Logger) error {
	ctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	old, err := cluster.SetArgs(ctx, clusterkey.LayoutKey, mine, redis.SetArgs{Mode: "NX", Get: true}).Result()
	switch {
	case err == redis.Nil: // recorded now
		return nil
	case err != nil:
		log.Warn("cluster: the layout of the cluster's clients could not be read or recorded; every script checks it in the markers it meets",
			"key", clusterkey.LayoutKey, "layout", mine, "error", err)
		return nil
	case old != mine:
		return fmt.Errorf("%w: cluster layout: this client has %s, the cluster's clients use %s (recorded in %s): every client sharing a cluster must use the same copies (n) and buckets (B; Config.Buckets)",
			ErrInvalidArgument, mine, old, clusterkey.LayoutKey)
	}
	return nil
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
