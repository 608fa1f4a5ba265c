package faults

import (
	"context"
	"net"
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlease/redlease/internal/testing/checker/wire"
	"github.com/redlease/redlease/internal/testing/redistest"
)

// failedBack is what failback leaves: the old master's client, its
// run_id, when it was back and when the next leader was elected.
type failedBack struct {
	master         *redis.Client
	run            string
	backAt, leader int64
}

// waitInfo waits until c's INFO replication contains every one of want.
func (r *rig) waitInfo(c *redis.Client, what string, want ...string) {
	r.t.Helper()
	r.until(waitLong, what, func() bool { return redistest.InfoContains(context.Background(), c, "replication", want...) })
}

// failback (issue 22 on independent masters): server v of three is a
// master with a replica that replicates it through a proxy (the
// replication link). With a leader L elected, the link is cut (the
// replica lags) and L is cut from another node b, until L holds on v and
// the third node only. Then v fails over and fails back with its process
// running: node v's proxies go down (no candidate reaches node v, the
// quiet traffic of the issue: a candidate that reached the promoted
// replica would write a marker of its own there, which the old master's
// run_id check would then catch), the replica is promoted, v becomes its
// replica (a full resync: L's key is gone from v's dataset, but the
// marker v gets back is its own, with its own run_id), v is promoted
// back and node v's proxies come up again, still to v. Without the
// replication-ID check, v and b are a majority for another candidate
// while L still leads on the third node. It returns once L has seen its
// term end and another candidate is elected.
func failback(t *testing.T, bin string, o rigOptions) (*rig, *failedBack) {
	r := newRig(t, bin, o)
	r.start()
	ctx := context.Background()
	v := r.rng.IntN(r.o.nodes)
	b := (v + 1 + r.rng.IntN(r.o.nodes-1)) % r.o.nodes
	link, repl := r.attachReplica(v)
	replica := adminClient(t, repl.Addr())
	f := &failedBack{master: r.admin[v], run: runID(t, r.admin[v])}
	require.Equal(t, f.run, replica.HGet(ctx, markerKey, "r").Val(), "the replica holds its master's marker")
	r.mark("server %d replicated by %s through a link proxy", v, repl.Addr())

	link.Partition()
	r.mark("replication link of server %d cut", v)
	bm := r.bareMajority(v, b, func(value string) bool { return get(replica, electionKey) != value })
	l, el, from := bm.l, bm.el, bm.from

	for _, p := range r.nodeProxies(v) {
		p.Disable()
	}
	at := r.mark("node %d's proxies down; failover of server %d to its replica, which lacks %s's key", v, v, l.id)
	require.NoError(t, repl.Promote())
	host, port, err := net.SplitHostPort(repl.Addr())
	require.NoError(t, err)
	require.NoError(t, f.master.Do(ctx, "REPLICAOF", host, port).Err())
	r.waitInfo(f.master, "server "+r.g.Server(v).Addr()+" synced as the promoted replica's replica",
		"role:slave", "master_port:"+port, "master_link_status:up", "master_sync_in_progress:0")
	require.NoError(t, f.master.Do(ctx, "REPLICAOF", "NO", "ONE").Err())
	r.waitInfo(f.master, "server "+r.g.Server(v).Addr()+" promoted back", "role:master")
	require.Equal(t, f.run, runID(t, f.master), "server %d restarted: the scenario would not test a failback", v)
	require.Equal(t, f.run, f.master.HGet(ctx, markerKey, "r").Val(), "server %d holds its own old marker", v)
	require.Empty(t, get(f.master, electionKey), "server %d's dataset was not replaced", v)
	for _, p := range r.nodeProxies(v) {
		p.Enable()
	}
	f.backAt = r.mark("server %d failed back after a full resync (%s), same run_id %.8s, without %s's key; node %d's proxies up",
		v, gap(at, wire.Now()), f.run, l.id, v)
	f.leader = r.handedOver(from, l, el, f.backAt, "failback", b)
	return r, f
}

// scFailback: the failback with the replication-ID check on: the old
// master's replication ID changed, so it starts a quarantine at the first
// contact and votes no for MaxTTL; the next leader is elected only once
// the old leader's key has lapsed. A client of the old master alone sees
// it quarantined, then voting again MaxTTL later; the leader's links are
// then cut for one more election.
func scFailback(t *testing.T, bin string) {
	r, f := failback(t, bin, rigOptions{})
	quarantinedThenVotes(t, r, f.master, f.backAt, "the failed-back master", func(ctx context.Context) {
		assert.Equal(t, infoField(t, f.master, "replication", "master_replid"), f.master.HGet(ctx, markerKey, "p").Val(),
			"the new marker records the replication ID")
	})
}

// ctlFailbackNoReplicationIDCheck: the negative control of the failback:
// with the quarantine comparing run_ids only, the old master votes at once
// with its own old marker, and with node b it elects another candidate
// while the old leader still leads: C1 must see the tenures overlap.
func ctlFailbackNoReplicationIDCheck(t *testing.T, bin string) {
	r, f := failback(t, bin, rigOptions{noReplIDCheck: true})
	rep := r.finish()
	first := caughtOverlap(t, rep, "the double leadership of a failback without the replication-ID check")
	t.Logf("caught, as it must be: %s (the new term began %s after the failback)", first, gap(f.backAt, f.leader))
}
