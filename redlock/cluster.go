package redlock

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// DefaultReplicas is the number of copies of a lock [NewCluster] keeps when
// given 0.
const DefaultReplicas = 3

// NewCluster returns a Client that keeps every lock as n copies (n odd;
// 0 means DefaultReplicas) in n hash slots of one Redis Cluster, each copy
// one vote.
//
// Copy i of every lock lives in the slot of a fixed hash tag T(i, n): keys
// "{T}:<key>", "{T}:<key>:fence" and the marker "{T}:marker". The tag is a
// pure function of i and n, never of the observed topology, so every client
// computes the same keys; it is chosen so that with the standard contiguous
// slot layout the n slots fall in n different slot ranges, hence on n
// different masters. Keys that carry a hash tag of their own keep working.
//
// At start-up and after node errors redlock checks which master serves each
// copy and logs a warning, once per change, when two copies share a master
// (a failure of that master then costs two votes) or a copy's master is
// unknown; [Client.Placement] reports it. After a node error redlock asks
// the cluster client to reload its slot map (go-redis only does so by itself
// every 60s). A promoted replica is quarantined like a restarted server: its
// run_id differs from the marker it inherited.
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
		n = DefaultReplicas
	}
	if n < 1 || n%2 == 0 || n > 15 {
		return nil, fmt.Errorf("%w: replicas (%d) must be odd, from 1 to 15", ErrInvalidConfig, n)
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	c := &Client{cfg: cfg, log: cfg.Logger, quorum: n/2 + 1, closing: make(chan struct{}), cluster: cluster}
	c.initArgs()
	for i := range n {
		tag := ClusterTag(i, n)
		c.nodes = append(c.nodes, &node{
			client:  cluster,
			addr:    fmt.Sprintf("slot %d", Slot(tag)),
			idx:     i,
			tag:     tag,
			cluster: cluster,
		})
	}
	if err := c.checkNodes(ctx, false); err != nil {
		return nil, err
	}
	c.checkPlacement(ctx)
	return c, nil
}

// ClusterTag is the hash tag of copy i of n: its slot is the middle of the
// i-th of n equal slot ranges.
func ClusterTag(i, n int) string {
	want := uint16((2*i + 1) * 16384 / (2 * n))
	for j := 0; ; j++ {
		tag := "rl" + strconv.Itoa(i) + "-" + strconv.Itoa(j)
		if Slot(tag) == want {
			return tag
		}
	}
}

// Slot is the Redis Cluster hash slot of a key (CRC16 of the key, or of
// its first non-empty {hash tag}, modulo 16384).
func Slot(key string) uint16 {
	if i := strings.IndexByte(key, '{'); i >= 0 {
		if j := strings.IndexByte(key[i+1:], '}'); j > 0 {
			key = key[i+1 : i+1+j]
		}
	}
	return crc16(key) % 16384
}

// crc16 is CRC-16/XMODEM, the checksum Redis Cluster hashes keys with.
func crc16(s string) uint16 {
	var crc uint16
	for i := 0; i < len(s); i++ {
		crc ^= uint16(s[i]) << 8
		for range 8 {
			if crc&0x8000 != 0 {
				crc = crc<<1 ^ 0x1021
			} else {
				crc <<= 1
			}
		}
	}
	return crc
}

// Replica is where one copy of the locks of a cluster Client lives.
type Replica struct {
	Index  int
	Tag    string
	Slot   uint16
	Master string // address of the master serving the slot; "" if unknown
	Err    error  // why the master is unknown
}

// Placement reports, for a Client made by NewCluster, which master serves
// each copy now (it reads the cluster client's slot map), and whether two
// copies share a master. It is nil for a Client over independent nodes.
func (c *Client) Placement(ctx context.Context) (replicas []Replica, shared bool) {
	if c.cluster == nil {
		return nil, false
	}
	seen := map[string]bool{}
	for i, n := range c.nodes {
		r := Replica{Index: i, Tag: n.tag, Slot: Slot(n.tag)}
		m, err := c.cluster.MasterForKey(ctx, n.marker())
		if err != nil {
			r.Err = err
		} else {
			r.Master = m.Options().Addr
			if seen[r.Master] {
				shared = true
			}
			seen[r.Master] = true
		}
		replicas = append(replicas, r)
	}
	return replicas, shared
}

// checkPlacement logs the placement once per change, as a warning when it
// costs fault tolerance.
func (c *Client) checkPlacement(ctx context.Context) {
	rs, shared := c.Placement(ctx)
	var b strings.Builder
	unknown := false
	for _, r := range rs {
		fmt.Fprintf(&b, "%d:%s ", r.Slot, r.Master)
		if r.Master == "" {
			unknown = true
		}
	}
	sig := b.String()
	c.placement.mu.Lock()
	changed := sig != c.placement.last
	c.placement.last = sig
	c.placement.mu.Unlock()
	if !changed {
		return
	}
	switch {
	case unknown:
		c.log.Warn("cluster: the master of a lock copy is unknown", "placement", sig)
	case shared:
		c.log.Warn("cluster: two copies of every lock share a master: one failure costs two votes", "placement", sig)
	default:
		c.log.Info("cluster: each copy of the locks on its own master", "placement", sig)
	}
}

// clusterState is the part of a Client that watches a cluster's topology.
type clusterState struct {
	mu         sync.Mutex
	last       string    // placement signature last logged
	lastReload time.Time // rate limit of reloads after errors
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
	c.wg.Go(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		c.checkPlacement(ctx)
	})
}
