package redistest_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redlease/redlease/internal/testing/redistest"
)

// clusterKeys returns keys spread over every slot range of a cluster.
func clusterKeys(n int) []string {
	keys := make([]string, n)
	for i := range keys {
		keys[i] = fmt.Sprintf("key-%d", i)
	}
	return keys
}

// slotOf is the hash slot of key (no hash tags in the keys used here).
func slotOf(t *testing.T, c *redis.ClusterClient, key string) uint16 {
	t.Helper()
	s, err := c.ClusterKeySlot(context.Background(), key).Result()
	must(t, err)
	return uint16(s)
}

// eventually calls f until it returns nil, failing the test with f's last
// error after d.
func eventually(t *testing.T, d time.Duration, f func() error) {
	t.Helper()
	redistest.Eventually(t, d, 10*time.Millisecond, "still", f)
}

func TestClusterStartFailover(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	start := time.Now()
	c := redistest.StartCluster(t, 3, 1)
	t.Logf("3+3 cluster healthy after %v", time.Since(start).Round(time.Millisecond))
	checkLayout(t, c)
	cc := c.Client(t)
	keys := setKeys(t, c, cc)

	// Kill the master of key-0's slot: its replica takes over and has the
	// key (WAIT made sure it was replicated).
	slot := slotOf(t, cc, keys[0])
	old := c.MasterOf(slot)
	promoted := c.ReplicaOf(old)
	if old == nil || promoted == nil {
		t.Fatalf("master %v, replica %v of slot %d", old, promoted, slot)
	}
	n, err := old.Client(t).Do(ctx, "WAIT", 1, 5000).Int()
	must(t, err)
	equal(t, n, 1, "replicas that acknowledged")
	must(t, old.Kill())
	killed := time.Now()
	must(t, c.WaitHealthy())
	t.Logf("replica promoted %v after the kill", time.Since(killed).Round(time.Millisecond))
	equal(t, c.MasterOf(slot), promoted, "MasterOf after the kill")
	equal(t, c.ReplicaOf(promoted), (*redistest.Server)(nil), "ReplicaOf(promoted)")
	eventually(t, 10*time.Second, func() error {
		cc.ReloadState(ctx) // go-redis reloads by itself only on MOVED, or every 60s
		return cc.Get(ctx, keys[0]).Err()
	})
	equal(t, cc.Get(ctx, keys[0]).Val(), "v-"+keys[0], "GET from the promoted replica")

	// The old master comes back as a replica of the promoted one, and a
	// coordinated failover makes it master again.
	must(t, old.Restart(false))
	must(t, c.WaitHealthy())
	equal(t, c.ReplicaOf(promoted), old, "ReplicaOf(promoted) after the restart")
	must(t, c.Failover(old, redistest.FailoverCoordinated))
	equal(t, c.MasterOf(slot), old, "MasterOf after the failover")
	equal(t, c.ReplicaOf(old), promoted, "ReplicaOf(old) after the failover")
	eventually(t, 10*time.Second, func() error {
		return cc.Get(ctx, keys[0]).Err() // MOVED: go-redis follows it
	})

	// TAKEOVER needs neither the master nor a vote.
	must(t, c.Failover(promoted, redistest.FailoverTakeover))
	equal(t, c.MasterOf(slot), promoted, "MasterOf after TAKEOVER")
	if err := c.Failover(c.Masters()[1], redistest.FailoverCoordinated); err == nil {
		t.Fatal("Failover of a master must fail")
	}
}

// checkLayout checks a 3+3 cluster's servers, slot ranges, replicas,
// state and directives.
func checkLayout(t *testing.T, c *redistest.Cluster) {
	ctx := context.Background()
	equal(t, len(c.Servers()), 6, "len(Servers)")
	equal(t, len(c.Masters()), 3, "len(Masters)")
	equal(t, len(c.Replicas()), 3, "len(Replicas)")
	equal(t, len(c.Addrs()), 6, "len(Addrs)")
	masters, replicas := c.Masters(), c.Replicas()
	for k, m := range masters {
		for _, slot := range []uint16{uint16(k * 16384 / 3), uint16((k+1)*16384/3 - 1)} {
			equal(t, c.MasterOf(slot), m, fmt.Sprintf("MasterOf(%d)", slot))
		}
		equal(t, c.ReplicaOf(m), replicas[k], fmt.Sprintf("ReplicaOf(master %d)", k))
		equal(t, c.ReplicaOf(replicas[k]), (*redistest.Server)(nil), "ReplicaOf(a replica)")
		info, err := m.Client(t).ClusterInfo(ctx).Result()
		must(t, err)
		if !strings.Contains(info, "cluster_state:ok\r") || !strings.Contains(info, "cluster_known_nodes:6\r") {
			t.Fatalf("CLUSTER INFO of master %d: %s", k, info)
		}
	}
	got := map[string]string{}
	for _, kv := range []string{"cluster-enabled", "cluster-node-timeout", "repl-diskless-sync-delay", "appendonly"} {
		for k, v := range masters[0].Client(t).ConfigGet(ctx, kv).Val() {
			got[k] = v
		}
	}
	equal(t, got, map[string]string{"cluster-enabled": "yes", "cluster-node-timeout": "1000",
		"repl-diskless-sync-delay": "0", "appendonly": "no"}, "cluster directives")
}

// setKeys sets 30 keys through cc, checks that they are spread over the
// 3 masters and read back, and returns them.
func setKeys(t *testing.T, c *redistest.Cluster, cc *redis.ClusterClient) []string {
	ctx := context.Background()
	keys := clusterKeys(30)
	served := map[*redistest.Server]bool{}
	for _, k := range keys {
		must(t, cc.Set(ctx, k, "v-"+k, 0).Err())
		served[c.MasterOf(slotOf(t, cc, k))] = true
	}
	equal(t, len(served), 3, "masters serving the keys")
	for _, k := range keys {
		equal(t, cc.Get(ctx, k).Val(), "v-"+k, "GET "+k)
	}
	return keys
}

func TestClusterSingleMasterAndCleanup(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var pids []int
	t.Run("cluster", func(t *testing.T) {
		c := redistest.StartCluster(t, 1, 0, redistest.Options{Extra: []string{"maxmemory-policy allkeys-lru"}})
		equal(t, len(c.Servers()), 1, "len(Servers)")
		equal(t, len(c.Replicas()), 0, "len(Replicas)")
		m := c.Masters()[0]
		for _, slot := range []uint16{0, 8192, 16383} {
			equal(t, c.MasterOf(slot), m, "MasterOf")
		}
		equal(t, c.ReplicaOf(m), (*redistest.Server)(nil), "ReplicaOf")
		equal(t, m.Client(t).ConfigGet(ctx, "maxmemory-policy").Val(),
			map[string]string{"maxmemory-policy": "allkeys-lru"}, "Options.Extra")
		cc := c.Client(t)
		must(t, cc.Set(ctx, "k", "v", 0).Err())
		equal(t, cc.Get(ctx, "k").Val(), "v", "GET")
		must(t, m.Pause()) // cleanup must also stop a paused node
		pids = append(pids, m.PID())
	})
	for _, pid := range pids {
		if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
			t.Errorf("pid %d still exists after cleanup (kill 0: %v)", pid, err)
		}
	}
}

func TestStartClusterArguments(t *testing.T) {
	t.Parallel()
	for _, args := range [][2]int{{0, 0}, {1, -1}} {
		r := &fatalRecorder{TB: t}
		done := make(chan struct{})
		go func() {
			defer close(done)
			redistest.StartCluster(r, args[0], args[1])
			t.Error("StartCluster returned without calling Fatalf")
		}()
		<-done
		if !strings.Contains(r.msg, "need masters >= 1") {
			t.Fatalf("StartCluster(%d, %d): Fatalf message %q", args[0], args[1], r.msg)
		}
	}
}

func TestClusterMigrateSlot(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := redistest.StartCluster(t, 2, 1)
	cc := c.Client(t)
	key := "migrated"
	slot := slotOf(t, cc, key)
	from := c.MasterOf(slot)
	var to *redistest.Server
	for _, m := range c.Masters() {
		if m != from {
			to = m
		}
	}
	if from == nil || to == nil {
		t.Fatalf("masters: slot %d on %v, other %v", slot, from, to)
	}
	must(t, cc.Set(ctx, key, "v", time.Minute).Err())

	must(t, c.MigrateSlot(slot, to))
	equal(t, c.MasterOf(slot), to, "the slot's master")
	direct := redis.NewClient(&redis.Options{Addr: to.Addr()})
	defer direct.Close()
	v, err := direct.Get(ctx, key).Result()
	must(t, err)
	equal(t, v, "v", "the key, on the new master")
	if ttl := direct.PTTL(ctx, key).Val(); ttl <= 0 || ttl > time.Minute {
		t.Errorf("the key's TTL on the new master: %v", ttl)
	}
	old := redis.NewClient(&redis.Options{Addr: from.Addr(), MaxRetries: -1})
	defer old.Close()
	if err := old.Get(ctx, key).Err(); err == nil || !strings.HasPrefix(err.Error(), "MOVED") {
		t.Errorf("the old master answers %v, want MOVED", err)
	}
	got, err := cc.Get(ctx, key).Result() // follows the MOVED
	must(t, err)
	equal(t, got, "v", "through the cluster client")
	must(t, c.WaitHealthy())
	must(t, c.MigrateSlot(slot, to)) // already there: nothing to do
}
