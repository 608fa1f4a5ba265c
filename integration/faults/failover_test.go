package faults

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlease/redlease/internal/testing/checker/wire"
	"github.com/redlease/redlease/internal/testing/faultproxy"
	"github.com/redlease/redlease/internal/testing/redistest"
	"github.com/redlease/redlease/redlock"
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
	v := redistest.InfoField(info, field)
	if v == "" {
		t.Fatalf("INFO %s has no %s", section, field)
	}
	return v
}

// adminClient is a direct client of a server, for faults and checks.
func adminClient(t *testing.T, addr string) *redis.Client {
	return redistest.NewClient(t, &redis.Options{Addr: addr, DialTimeout: time.Second,
		ReadTimeout: time.Second, WriteTimeout: time.Second, MaxRetries: -1})
}

// get reads a key, "" when it is absent (or the server does not answer).
func get(c *redis.Client, key string) string {
	v, _ := c.Get(context.Background(), key).Result()
	return v
}

// lagged is what lagFailover leaves: the promoted replica (the new node
// v), its run_id and the old master's, when the candidates were switched
// to it and when the next leader was elected.
type lagged struct {
	replica             *redis.Client
	masterRun, replRun  string
	switchedAt, elected int64
}

// bare is a leader that holds its term on a bare majority of three nodes.
type bare struct {
	l    *proc
	el   wire.Event
	from int // the history's length before it was cut
}

// bareMajority waits for a leader L, cuts it from node b and waits until
// b has lost L's key (and until also(L's value) holds), while node v
// still has it: L leads on v and the third node only, so that v forgetting
// L's key would let another candidate win with v and b. A leader that
// loses its term meanwhile (with b cut, one refresh that times out on v
// or the third node ends it: seen on a loaded host at the run's start)
// proves nothing: it is healed, and the set-up starts again with another
// term, up to 3 times.
func (r *rig) bareMajority(v, b int, also func(value string) bool) bare {
	t := r.t
	t.Helper()
	for attempt := 1; ; attempt++ {
		l, el, value, from := r.cutFrom(b, v, also)
		_, _, lost := r.hist.next(from, 0, ended(wire.Stepdown, l, el.TS))
		kept := get(r.admin[v], electionKey) == value
		if kept && !lost {
			return bare{l: l, el: el, from: from}
		}
		require.Less(t, attempt, 3, "leader %s lost its term on a bare majority before the fault (node %d kept its key: %t), %d times: the scenario proves nothing",
			l.id, v, kept, attempt)
		l.slot.proxies[b].Heal()
		r.mark("leader %s lost its term during the set-up (node %d kept its key: %t); again with another term", l.id, v, kept)
	}
}

// cutFrom waits for a leader that holds its key on every node but b (and
// on v), cuts it from node b and waits until b has lost its key and
// also(its value) holds. from is the history's length before the cut.
func (r *rig) cutFrom(b, v int, also func(value string) bool) (l *proc, el wire.Event, value string, from int) {
	// A leader may miss a node: its attempt lost the race on v or the
	// third node to another candidate's, undone since, and it holds on a
	// bare majority without one of the nodes it must hold. Another term,
	// then. (Three candidates contend at every election, so this happens
	// often.)
	l, el, value = r.leaderHolding(fmt.Sprintf("every node but %d", b),
		func() string { return get(r.admin[v], electionKey) },
		func(value string) bool { return r.everywhereBut(b, value) })
	from = r.hist.len()
	l.slot.proxies[b].Partition()
	r.mark("leader %s cut from node %d", l.id, b)
	r.until(waitLong, fmt.Sprintf("leader %s on a bare majority (node %d without its key)", l.id, b), func() bool {
		return get(r.admin[b], electionKey) != value && also(value)
	})
	return l, el, value, from
}

// leaderHolding waits for a leader whose value (read) satisfies holds,
// ending up to 8 terms (partitionLeader) that do not; what names what the
// leader must hold, in messages.
func (r *rig) leaderHolding(what string, read func() string, holds func(value string) bool) (*proc, wire.Event, string) {
	r.t.Helper()
	for i := 0; ; i++ {
		l, el := r.leader()
		r.waitWrites(l, el.TS, 3)
		if value := read(); holds(value) {
			return l, el, value
		}
		require.Less(r.t, i, 8, "no leader held %s in 8 terms", what)
		r.mark("leader %s does not hold %s: a new term", l.id, what)
		partitionLeader(r)
	}
}

// everywhereBut reports whether every node but b holds the election key
// with value (b may hold it or not: it is cut next).
func (r *rig) everywhereBut(b int, value string) bool {
	for i, c := range r.admin {
		if i != b && (value == "" || get(c, electionKey) != value) {
			return false
		}
	}
	return true
}

// attachReplica starts a replica of server v that replicates it through
// a proxy (the replication link), and declares the deployment brand new
// again: a master that gets its first replica creates its replication
// backlog and with it a new replication ID, which quarantines it (the
// quarantine cannot tell this from a dataset replaced by a full resync).
// Candidates that met the quarantine in between may have lost a term.
func (r *rig) attachReplica(v int) (*faultproxy.Proxy, *redistest.Server) {
	t := r.t
	t.Helper()
	link := redistest.NewProxy(t, r.g.Server(v).Addr())
	repl := redistest.StartReplica(t, link.Addr())
	r.bootstrap()
	return link, repl
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
	f := &lagged{}
	v := r.rng.IntN(r.o.nodes)
	b := (v + 1 + r.rng.IntN(r.o.nodes-1)) % r.o.nodes
	link, repl := r.attachReplica(v)
	f.replica = adminClient(t, repl.Addr())
	f.masterRun, f.replRun = runID(t, r.admin[v]), runID(t, f.replica)
	require.NotEqual(t, f.masterRun, f.replRun)
	require.Equal(t, f.masterRun, f.replica.HGet(ctx, markerKey, "r").Val(), "the replica holds its master's marker")
	r.mark("server %d replicated by %s through a link proxy", v, repl.Addr())

	link.Partition()
	r.mark("replication link of server %d cut", v)
	// The replica's copy of L's key expires (L's refreshes no longer reach
	// it), as L's key on b does.
	bm := r.bareMajority(v, b, func(value string) bool { return get(f.replica, electionKey) != value })
	l, el, from := bm.l, bm.el, bm.from

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
	f.elected = r.handedOver(from, l, el, f.switchedAt, "failover", b)
	return r, f
}

// handedOver waits, from history index from, for leader l (its term el)
// to see its term end and for another leader, after the switch (what) at
// at; it logs both, heals l's link to node b, and returns the new term's
// start.
func (r *rig) handedOver(from int, l *proc, el wire.Event, at int64, what string, b int) int64 {
	r.t.Helper()
	sd, _ := r.waitEv(from, waitLong, "the leader's stepdown", ended(wire.Stepdown, l, el.TS))
	next, _ := r.waitEv(from, waitLong, "a leader after the "+what, electedOther(l))
	r.t.Logf("leader %s saw its term end %s after the %s; %s elected %s after it", l.id, gap(at, sd.T), what, next.ID, gap(at, next.TS))
	l.slot.proxies[b].Heal()
	r.mark("healed %s's link to node %d", l.id, b)
	return next.TS
}

// scFailoverLaggingReplica: the failover to a lagging replica with
// quarantine on: the promoted replica has another run_id than its marker,
// so it starts a quarantine of its own and votes no for MaxTTL, and the
// next leader is elected only once the old leader's key has lapsed. A
// client of the promoted replica alone (its only vote) sees it
// quarantined, then, MaxTTL after the failover, voting again; the
// leader's links are then cut for one more election.
func scFailoverLaggingReplica(t *testing.T, bin string) {
	r, f := lagFailover(t, bin, rigOptions{})
	quarantinedThenVotes(t, r, f.replica, f.switchedAt, "the promoted replica", func(ctx context.Context) {
		require.Equal(t, f.replRun, f.replica.HGet(ctx, markerKey, "r").Val(), "the promoted replica's quarantine marker")
	})
}

// quarantinedThenVotes: a client of server s alone (its only vote) sees s
// quarantined (then check runs), then voting again, not before MaxTTL has
// passed since s forgot (since, on CLOCK_MONOTONIC). On a slow host the
// handover may come after the quarantine ended: s then votes when first
// asked, and its marker must show a quarantine of MaxTTL begun after the
// fault (check) and run to its end. The leader's links are then cut for
// one more election, and the run is checked.
func quarantinedThenVotes(t *testing.T, r *rig, s *redis.Client, since int64, what string, check func(context.Context)) {
	ctx := context.Background()
	solo, err := redlock.New(ctx, redlock.Config{NodeTimeout: 200 * time.Millisecond, MaxTTL: maxTTL}, s)
	require.NoError(t, err)
	defer solo.Close()
	v, err := soloVote(ctx, solo)
	var back int64
	if v == "yes" {
		// A slow host: the handover came only after the quarantine had
		// run its course. The new marker shows it ran, from its start
		// to now on the server's clock.
		check(ctx)
		back = wire.Now()
		ranFull(t, s, what)
	} else {
		require.Equal(t, "quarantined", v, "%s is not quarantined: %v", what, err)
		check(ctx)
	}
	r.until(maxTTL+waitLong, what+" voting again", func() bool {
		if back != 0 { // already voting
			return true
		}
		switch v, err := soloVote(ctx, solo); v {
		case "quarantined":
			return false
		case "yes":
			back = wire.Now()
		default:
			t.Errorf("%s: vote %v: %v", what, v, err)
		}
		return true
	})
	// (5ms: the server's quarantine runs on its wall clock, which may be
	// slewed against CLOCK_MONOTONIC.)
	assert.GreaterOrEqual(t, back-since, (maxTTL - 5*time.Millisecond).Nanoseconds(), "%s voted before MaxTTL", what)
	r.mark("%s votes again, %s after it forgot", what, gap(since, back))
	partitionLeader(r)
	rep := r.finish()
	r.expect(rep)
}

// ranFull fails the test unless the quarantine marker of server s shows
// a quarantine of its full length (mx) ended by now on the server's clock.
func ranFull(t *testing.T, s *redis.Client, what string) {
	ctx := context.Background()
	created, err := s.HGet(ctx, markerKey, "c").Int64()
	require.NoError(t, err, "%s: the marker's start", what)
	mx, err := s.HGet(ctx, markerKey, "mx").Int64()
	require.NoError(t, err, "%s: the marker's quarantine length", what)
	now, err := s.Time(ctx).Result()
	require.NoError(t, err)
	require.Equal(t, maxTTL.Milliseconds(), mx, "%s: the marker's quarantine length", what)
	require.GreaterOrEqual(t, now.UnixMilli()-created, mx, "%s votes, but its marker's quarantine has not run its length", what)
	t.Logf("%s already voting when first asked; its marker's quarantine began %dms ago", what, now.UnixMilli()-created)
}

// ctlFailoverNoQuarantine: the negative control of the failover: with
// quarantine off the promoted replica votes at once, and with node b it
// elects another candidate while the old leader still leads: C1 must see
// the tenures overlap.
func ctlFailoverNoQuarantine(t *testing.T, bin string) {
	r, f := lagFailover(t, bin, rigOptions{noQuarantine: true})
	rep := r.finish()
	first := caughtOverlap(t, rep, "the double leadership of a failover without quarantine")
	t.Logf("caught, as it must be: %s (the new term began %s after the failover)", first, gap(f.switchedAt, f.elected))
}

// caughtOverlap checks a negative control: C1 must have seen the tenures
// overlap (what: the double leadership the guard turned off let happen).
// It returns C1's first report.
func caughtOverlap(t *testing.T, rep *report, what string) string {
	t.Helper()
	require.NotEmpty(t, rep.c1, "C1 did not catch %s", what)
	assert.Contains(t, strings.Join(rep.c1, "\n"), "tenures overlap")
	if len(rep.alarms) > 0 {
		t.Logf("the candidates raised the split-brain alarm %d times; the first: %s", len(rep.alarms), rep.alarms[0])
	}
	return rep.c1[0]
}

// soloVote is the vote of a one-node client's node: one acquisition of a
// probe key, released at once when granted.
func soloVote(ctx context.Context, solo *redlock.Client) (string, error) {
	l, err := solo.TryAcquire(ctx, "faults:probe", ttl)
	if err == nil {
		err = l.Release(ctx)
		return "yes", err
	}
	if qe, ok := errors.AsType[*redlock.QuorumError](err); ok && len(qe.Nodes) == 1 {
		switch n := qe.Nodes[0]; {
		case n.Quarantined:
			return "quarantined", err
		case n.Err != nil:
			return "error", err
		}
		return "no", err
	}
	return "error", err
}
