package doctor_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlease/redlease/doctor"
	"github.com/redlease/redlease/internal/clusterkey"
	"github.com/redlease/redlease/internal/testing/redistest"
	"github.com/redlease/redlease/redlock"
)

// runCluster checks cluster cc as a client of n copies in B buckets.
func runCluster(t *testing.T, cfg doctor.Config, cc *redis.ClusterClient, n, buckets int) *doctor.Report {
	t.Helper()
	rep, err := doctor.RunCluster(context.Background(), cfg, doctor.Cluster{Client: cc, Replicas: n, Buckets: buckets})
	require.NoError(t, err)
	return rep
}

// clusterFinding returns the report's finding id on the cluster as a
// whole; it fails the test without one.
func clusterFinding(t *testing.T, rep *doctor.Report, id string) doctor.Finding {
	t.Helper()
	for _, f := range rep.Cluster {
		if f.ID == id {
			return f
		}
	}
	t.Fatalf("no cluster finding %s: %+v", id, rep.Cluster)
	return doctor.Finding{}
}

// Each master of a 3-master cluster checked on the keys and markers of
// the copies it serves, and the cluster as a whole: the default layout
// (3 copies, 16 buckets) puts each copy of a bucket on its own master
// (ok), 5 copies cannot (warn); cluster-require-full-coverage yes warns;
// NewCluster's markers (16 a master, in quarantine) and its recorded
// layout are read, and another layout fails.
func TestDoctorCluster(t *testing.T) {
	cl := redistest.StartCluster(t, 3, 0)
	cc := cl.Client(t)
	cfg := fast()
	cfg.Name = "app:job"
	rep := runCluster(t, cfg, cc, 3, 0)
	require.Len(t, rep.Nodes, 3)
	assertOK(t, clusterFinding(t, rep, doctor.CheckPlacement), "3 masters, each copy of a bucket on its own; app:job (bucket ")
	assertOK(t, clusterFinding(t, rep, doctor.CheckLayout), "no layout recorded yet: the first client records n=3 B=16")
	for i, n := range rep.Nodes {
		assertRisky(t, finding(t, rep, i, doctor.CheckCoverage), doctor.Warn, "cluster-require-full-coverage yes")
		assertRisky(t, finding(t, rep, i, doctor.CheckMarker), doctor.Info, "16 markers (16 missing)")
		assert.Equal(t, doctor.OK, finding(t, rep, i, doctor.CheckRole).Severity, n.Node)
		assert.Equal(t, doctor.OK, finding(t, rep, i, doctor.CheckDistinct).Severity, n.Node)
		acl := finding(t, rep, i, doctor.CheckACL)
		assert.Equal(t, doctor.OK, acl.Severity, "%+v", acl)
		assert.Regexp(t, `on \{rl\d+b\d+-\d+\}:app:job, .*:app:job:notice and \{rl\d+b\d+-\d+\}:marker`, acl.Found)
	}
	assertRisky(t, clusterFinding(t, runCluster(t, cfg, cc, 5, 0), doctor.CheckPlacement), doctor.Warn, "3 masters for 5 copies")

	for _, m := range cl.Masters() {
		configSet(t, m.Client(t), "cluster-require-full-coverage", "no")
	}
	ctx := context.Background()
	rl, err := redlock.NewCluster(ctx, redlock.Config{NodeTimeout: slowNode}, cl.Client(t), 3)
	require.NoError(t, err)
	require.NoError(t, rl.Close())
	rep = runCluster(t, cfg, cc, 3, 0)
	for i := range rep.Nodes {
		assertOK(t, finding(t, rep, i, doctor.CheckCoverage), "cluster-require-full-coverage no")
		assertRisky(t, finding(t, rep, i, doctor.CheckMarker), doctor.Info, "16 markers (16 in quarantine)")
		assertOK(t, finding(t, rep, i, doctor.CheckMaxTTL), "record MaxTTL 30s")
	}
	assertOK(t, clusterFinding(t, rep, doctor.CheckLayout), "the cluster's clients use n=3 B=16")
	assertRisky(t, clusterFinding(t, runCluster(t, cfg, cc, 3, 8), doctor.CheckLayout), doctor.Fail,
		"the cluster's clients recorded n=3 B=16 in {rl-layout}:marker; this run's is n=3 B=8")

	// A marker of another layout (made by hand, undone), where the layout
	// key says nothing.
	require.NoError(t, cc.Del(ctx, clusterkey.LayoutKey).Err())
	marker := fmt.Sprintf("{%s}:marker", clusterkey.BucketTag(0, 0, 3, 16))
	require.NoError(t, cc.HSet(ctx, marker, "l", "n=5 B=16").Err())
	f := clusterFinding(t, runCluster(t, cfg, cc, 3, 0), doctor.CheckLayout)
	assertRisky(t, f, doctor.Fail, "this run's layout is n=3 B=16, but 1 markers record another ("+marker+" has n=5 B=16)")
	require.NoError(t, cc.HSet(ctx, marker, "l", "n=3 B=16").Err())
}

// Two copies of the checked name's bucket on one master (a slot migrated
// by hand, and back): the placement fails, naming them.
func TestDoctorClusterPlacement(t *testing.T) {
	cl := redistest.StartCluster(t, 3, 0)
	cc := cl.Client(t)
	cfg := fast()
	cfg.Name = "app:job"
	b := clusterkey.Bucket(cfg.Name, clusterkey.DefaultBuckets)
	slot0 := clusterkey.Slot(clusterkey.BucketTag(0, b, 3, clusterkey.DefaultBuckets))
	slot1 := clusterkey.Slot(clusterkey.BucketTag(1, b, 3, clusterkey.DefaultBuckets))
	home := cl.MasterOf(slot1)
	require.NotNil(t, home)
	require.NoError(t, cl.MigrateSlot(slot1, cl.MasterOf(slot0)))
	rep := runCluster(t, cfg, cc, 3, 0)
	f := clusterFinding(t, rep, doctor.CheckPlacement)
	assertRisky(t, f, doctor.Fail, "1 of 16 buckets have two copies on one master, this name's among them")
	assert.Contains(t, f.Found, fmt.Sprintf("copy 1 slot %d on %s", slot1, cl.MasterOf(slot0).Addr()))
	assert.Equal(t, doctor.Fail, rep.Worst)

	require.NoError(t, cl.MigrateSlot(slot1, home))
	assertOK(t, clusterFinding(t, runCluster(t, cfg, cc, 3, 0), doctor.CheckPlacement), "each copy of a bucket on its own")
}

// clusterRule is SECURITY.md's rule for a cluster and the prefix app:.
const clusterRule = "+evalsha +eval +script|load +get +mget +set +incr +pexpire +pexpireat +pttl +del +hget +hmget +hset +time +info|server +spublish +ssubscribe +ping +cluster|slots +command +asking ~{rl*}:app:* ~{rl*}:marker &{rl*}:app:*:notice"

// The ACL of a cluster, on the copy's keys and sharded channel on each
// master: SECURITY.md's cluster rule passes, by ACL DRYRUN or (where the
// user may not run it) by trying the commands; without +spublish, SPUBLISH
// is named.
func TestDoctorClusterACL(t *testing.T) {
	cl := redistest.StartCluster(t, 3, 0)
	cfg := fast()
	cfg.Name = "app:job"
	cc := redis.NewClusterClient(&redis.ClusterOptions{Addrs: cl.Addrs(), Username: "doctor", Password: "pw"})
	t.Cleanup(func() { _ = cc.Close() })
	check := func(rule string, want doctor.Severity, found string) {
		t.Helper()
		for _, m := range cl.Masters() {
			aclUser(t, m.Client(t), rule)
		}
		rep := runCluster(t, cfg, cc, 3, 0)
		require.Len(t, rep.Nodes, 3)
		for i := range rep.Nodes {
			f := finding(t, rep, i, doctor.CheckACL)
			assert.Equal(t, want, f.Severity, "%+v", f)
			assert.Contains(t, f.Found, found)
		}
	}
	check(clusterRule+" +acl|dryrun +acl|whoami", doctor.OK, "all allowed")
	check(clusterRule, doctor.Info, "tried the commands instead")
	check(strings.Replace(clusterRule, "+spublish ", "", 1), doctor.Fail, "SPUBLISH {rl")
	check(strings.Replace(clusterRule, "+spublish ", "", 1)+" +acl|dryrun +acl|whoami", doctor.Fail, "SPUBLISH {rl")
}
