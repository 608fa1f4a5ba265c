package faults

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlease/redlease/integration/faults/internal/wire"
	"github.com/redlease/redlease/internal/faultproxy"
	"github.com/redlease/redlease/internal/redistest"
)

// until polls cond (a look at the servers' state) every 10ms until it
// holds, and fails the test if it does not within timeout.
func (r *rig) until(timeout time.Duration, what string, cond func() bool) {
	r.t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			r.t.Fatalf("no %s within %s", what, timeout)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// runID is the server's run_id.
func runID(t *testing.T, c *redis.Client) string {
	t.Helper()
	return infoField(t, c, "server", "run_id")
}

// infoField reads one field of an INFO section.
func infoField(t *testing.T, c *redis.Client, section, field string) string {
	t.Helper()
	info, err := c.Info(context.Background(), section).Result()
	require.NoError(t, err)
	for line := range strings.SplitSeq(info, "\r\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			return v
		}
	}
	t.Fatalf("INFO %s has no %s", section, field)
	return ""
}

// adminClient is a direct client of a server, for faults and checks.
func adminClient(t *testing.T, addr string) *redis.Client {
	c := redis.NewClient(&redis.Options{Addr: addr, DialTimeout: time.Second,
		ReadTimeout: time.Second, WriteTimeout: time.Second, MaxRetries: -1})
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// get reads a key, "" when it is absent (or the server does not answer).
func get(c *redis.Client, key string) string {
	v, _ := c.Get(context.Background(), key).Result()
	return v
}

// lagged is what lagFailover leaves: the promoted replica (the new node
// v), its run_id and the old master's, and when the candidates were
// switched to it.
type lagged struct {
	v                   int
	replica             *redis.Client
	masterRun, replRun  string
	leader              *proc
	switchedAt, elected int64
}

// lagFailover: server v of three is a master with a replica that
// replicates it through a proxy (the replication link). With a leader L
// elected, the link is cut (the replica lags) and L is cut from another
// node b; once the replica and b both lack L's key while v and the third
// node c hold it, v is killed -9, the replica is promoted (REPLICAOF NO
// ONE) and every candidate's proxy for node v is switched to it, as a
// failover manager (or a virtual IP) does. The promoted replica carries
// v's quarantine marker, with v's run_id, but not L's key: without
// quarantine, it and b are a majority for another candidate while L still
// leads on c. It returns once L has seen its term end and another
// candidate is elected.
func lagFailover(t *testing.T, bin string, o rigOptions) (*rig, *lagged) {
	r := newRig(t, bin, o)
	r.start()
	ctx := context.Background()
	f := &lagged{v: r.rng.IntN(r.o.nodes)}
	v := f.v
	b := (v + 1 + r.rng.IntN(r.o.nodes-1)) % r.o.nodes
	link, err := faultproxy.New(r.g.Server(v).Addr())
	require.NoError(t, err)
	t.Cleanup(func() { _ = link.Close() })
	repl := redistest.StartReplica(t, link.Addr())
	f.replica = adminClient(t, repl.Addr())
	f.masterRun, f.replRun = runID(t, r.admin[v]), runID(t, f.replica)
	require.NotEqual(t, f.masterRun, f.replRun)
	require.Equal(t, f.masterRun, f.replica.HGet(ctx, markerKey, "r").Val(), "the replica holds its master's marker")
	r.mark("server %d replicated by %s through a link proxy", v, repl.Addr())

	l, el := r.leader()
	f.leader = l
	r.waitWrites(l, el.TS, 3)
	value := get(r.admin[v], electionKey)
	require.NotEmpty(t, value, "leader %s's key is not on node %d", l.id, v)
	from := r.hist.len()
	link.Partition()
	l.slot.proxies[b].Partition()
	r.mark("replication link of server %d cut; leader %s cut from node %d", v, l.id, b)
	// The replica's copy of L's key expires (L's refreshes no longer reach
	// it), and so does L's key on b.
	r.until(waitLong, "lag: the replica and node b without the leader's key", func() bool {
		return get(f.replica, electionKey) != value && get(r.admin[b], electionKey) != value
	})
	require.Equal(t, value, get(r.admin[v], electionKey), "the master lost the leader's key")
	if _, _, ok := r.hist.next(from, 0, ended(wire.Stepdown, l, el.TS)); ok {
		t.Fatalf("leader %s lost its term before the failover: the scenario proves nothing", l.id)
	}

	require.NoError(t, r.g.Server(v).Kill())
	require.NoError(t, repl.Promote())
	require.Equal(t, f.masterRun, f.replica.HGet(ctx, markerKey, "r").Val(), "the promoted replica's marker names the old master")
	for _, p := range r.nodeProxies(v) {
		p.SetTarget(repl.Addr())
		p.ResetAll()
	}
	r.admin[v] = f.replica
	f.switchedAt = r.mark("kill -9 server %d; replica promoted without %s's key (marker run_id %.8s, its own %.8s); node %d's proxies switched to it",
		v, l.id, f.masterRun, f.replRun, v)
	sd, _ := r.waitEv(from, waitLong, "the leader's stepdown", ended(wire.Stepdown, l, el.TS))
	next, _ := r.waitEv(from, waitLong, "a leader after the failover", electedOther(l))
	f.elected = next.TS
	t.Logf("leader %s saw its term end %s after the failover; %s elected %s after it", l.id, gap(f.switchedAt, sd.T), next.ID, gap(f.switchedAt, next.TS))
	l.slot.proxies[b].Heal()
	r.mark("healed %s's link to node %d", l.id, b)
	return r, f
}

// scFailoverLaggingReplica: the failover to a lagging replica with
// quarantine on: the promoted replica has another run_id than its marker,
// so it starts a quarantine of its own and votes no for MaxTTL, and the
// next leader is elected only once the old leader's key has lapsed. Once
// the quarantine is over, the leader's links are cut so that an election
// runs with the promoted replica voting again.
func scFailoverLaggingReplica(t *testing.T, bin string) {
	r, f := lagFailover(t, bin, rigOptions{})
	ctx := context.Background()
	r.until(waitLong, "a new quarantine marker on the promoted replica", func() bool {
		return f.replica.HGet(ctx, markerKey, "r").Val() == f.replRun
	})
	if key := get(f.replica, electionKey); key != "" {
		t.Errorf("the promoted replica granted the key (%q) during its quarantine", key)
	}
	// The quarantine ends MaxTTL after the marker's creation, by the
	// server's clock.
	created, err := f.replica.HGet(ctx, markerKey, "c").Int64()
	require.NoError(t, err)
	r.until(maxTTL+waitLong, "the end of the promoted replica's quarantine", func() bool {
		now, err := f.replica.Time(ctx).Result()
		return err == nil && now.UnixMilli() >= created+maxTTL.Milliseconds()
	})
	r.mark("the promoted replica's quarantine is over")
	partitionLeader(r)
	r.until(waitLong, "the election key on the promoted replica: it votes again", func() bool {
		return get(f.replica, electionKey) != ""
	})
	rep := r.finish()
	r.expect(rep)
}

// ctlFailoverNoQuarantine: the negative control of the failover: with
// quarantine off the promoted replica votes at once, and with node b it
// elects another candidate while the old leader still leads: C1 must see
// the tenures overlap.
func ctlFailoverNoQuarantine(t *testing.T, bin string) {
	r, f := lagFailover(t, bin, rigOptions{noQuarantine: true})
	rep := r.finish()
	require.NotEmpty(t, rep.c1, "C1 did not catch the double leadership of a failover without quarantine")
	assert.Contains(t, strings.Join(rep.c1, "\n"), "tenures overlap")
	t.Logf("caught, as it must be: %s (the new term began %s after the failover)", rep.c1[0], gap(f.switchedAt, f.elected))
}
