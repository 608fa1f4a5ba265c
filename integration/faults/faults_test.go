package faults

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlease/redlease/internal/testing/checker/wire"
	"github.com/redlease/redlease/internal/testing/redistest"
)

// TestFaults runs every scenario, the negative controls of the checkers
// and the soak, scenariosAtOnce at a time (each has its own servers,
// proxies, store and candidate processes, on ports of its own), against
// one build of the candidate program. Every scenario checks C1-C4 on its
// whole history. The "faults survived" table of the run is logged at the
// end, and written to $REDLEASE_FAULTS_REPORT when set.
// envServerOnly, when set (make test's second pass, on Valkey), leaves out
// the negative controls and the soak.
const envServerOnly = "REDLEASE_FAULTS_SERVER_ONLY"

// envParallel sets how many scenarios run at once (default
// defaultParallel; 1: one after the other).
const envParallel = "REDLEASE_FAULTS_PARALLEL"

// defaultParallel: a scenario mostly waits (for a TTL to lapse, a
// quarantine to end, a fault's timed end), but its checks have windows of
// a NodeTimeout (100ms) and C4's slack. Beside other builds (load average
// 5 to 21), TestFaults took 216s one after the other, 125s two at a time,
// 88-108s three at a time; but three at a time under a load of 21 failed
// two scenarios (a refresh timing out where a refusal was expected, a
// control's double grant not reached).
const defaultParallel = 2

// scenariosAtOnce is $REDLEASE_FAULTS_PARALLEL, or defaultParallel.
func scenariosAtOnce(t *testing.T) int {
	v := os.Getenv(envParallel)
	if v == "" {
		return defaultParallel
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		t.Fatalf("%s=%q: want a number of scenarios, 1 or more", envParallel, v)
	}
	return n
}

func TestFaults(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real redis-server and candidate processes")
	}
	bin := buildCandidate(t, t.TempDir())
	began := time.Now()
	scenarios := faultScenarios(t)
	rows := make([]*row, len(scenarios))
	// t.Run from goroutines, not t.Parallel: go test's -parallel (GOMAXPROCS,
	// 2 here) would bound them, and the table is written once all have run.
	sem := make(chan struct{}, scenariosAtOnce(t))
	var wg sync.WaitGroup
	for _, i := range longestFirst(scenarios) {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			rows[i] = runScenario(t, scenarios[i], bin)
		})
	}
	wg.Wait()
	var ran []row
	for _, r := range rows {
		if r != nil {
			ran = append(ran, *r)
		}
	}
	writeTable(t, ran, time.Since(began))
}

// runScenario runs sc as a subtest of t and returns its row of the table
// (nil when it did not run).
func runScenario(t *testing.T, sc faultScenario, bin string) *row {
	start := time.Now()
	serverOnly := os.Getenv(envServerOnly) != ""
	ok := t.Run(sc.name, func(t *testing.T) {
		if serverOnly && (strings.HasPrefix(sc.name, "control/") || strings.HasPrefix(sc.name, "soak")) {
			// The controls show the checkers catch a violation and the
			// soak draws random faults: neither depends on the server,
			// and both ran in make test's first pass (Redis).
			t.Skipf("%s is set: this pass runs the scenarios whose outcome depends on the server", envServerOnly)
		}
		sc.run(t, bin)
	})
	o, ran := outcomeOf(t.Name() + "/" + sc.name)
	if !ran {
		return nil
	}
	result := "pass"
	if strings.HasPrefix(sc.name, "control/") {
		result = "caught"
	}
	if !ok {
		result = "**FAIL**"
	}
	return &row{name: sc.name, fault: sc.fault, checks: sc.checks, result: result, o: o, took: time.Since(start)}
}

// longestFirst returns the indexes of the scenarios, the long ones (the
// soak, 33s here; the Sentinel's, the cluster's and the evicting node's,
// 8-16s; the others take 3-7s) first, so that the short ones
// fill in beside them and the run ends with short ones.
func longestFirst(scenarios []faultScenario) []int {
	long := func(name string) bool {
		return strings.HasPrefix(name, "soak") || strings.Contains(name, "cluster") || strings.HasPrefix(name, "sentinel") ||
			name == "evicting_policy"
	}
	var first, then []int
	for i, sc := range scenarios {
		if long(sc.name) {
			first = append(first, i)
		} else {
			then = append(then, i)
		}
	}
	return append(first, then...)
}

// faultScenario is one scenario of TestFaults: the fault it injects and
// the checks it expects to hold (or, for a negative control, to fail).
type faultScenario struct {
	name, fault, checks string
	run                 func(*testing.T, string)
}

// faultScenarios are TestFaults' scenarios, in order: the faults, the
// negative controls, the soak (and the cluster soak with
// REDLEASE_SOAK_CLUSTER).
func faultScenarios(t *testing.T) []faultScenario {
	const all = "C1 C2 C3 C4"
	scenarios := []faultScenario{
		{"no_faults_8_contenders", "none; leaders resign after ~150ms", all, scNoFaults},
		{"leader_links_time_out", "every link of the leader blackholed, twice", all, scLeaderLinksTimeOut},
		{"node_links_flap", "one node's links down and up for 3s", all, scNodeFlap},
		{"majorities_ring", "5 nodes; each candidate reaches a different majority", all, scMajoritiesRing},
		{"latency_over_ttl_on_two_nodes", "replies of 2 of 3 nodes 1.5s late (TTL 1s) for 2s", all, scLatency},
		{"sigstop_leader", "leader process SIGSTOPped for 2 TTLs", all, scPauseLeader},
		{"sigstop_server", "one redis-server SIGSTOPped for 2 TTLs", all, scPauseServer},
		{"kill9_server_restart_empty", "kill -9 a redis-server, restart it empty", all, scKillRestartEmpty},
		{"restart_from_stale_rdb", "kill -9 a redis-server, restart it from an older RDB", all, scStaleRDB},
		{"failover_to_lagging_replica", "kill -9 a master, promote its replica that lacks the lock key", all, scFailoverLaggingReplica},
		{"failback_after_full_resync", "a master fails over to its lagging replica and back after a full resync from it, its process running", all, scFailback},
		{"sentinel_failover_and_back", "3 Sentinel groups via FailoverClients; kill -9 a master, its replica promoted; the old master back as a replica; SENTINEL FAILOVER back to it", all, scSentinelFailover},
		{"cluster_kill9_master_replica_promoted", "Redis Cluster (3 masters + replicas): kill -9 the master of a copy the leader holds on a bare majority, its lagging replica promoted (TAKEOVER)", all, scClusterFailover},
		{"cluster_down_majority_of_masters", "Redis Cluster: kill -9 2 of 3 masters (CLUSTERDOWN), restart them", all + "; fails closed with CLUSTERDOWN, then a leader", scClusterDown},
		{"cluster_slot_migration", "Redis Cluster: a copy's slot migrated to another master (ASK, then MOVED) while leaders extend, resign and campaign", all + "; ASK and MOVED met on acquire, extend, release", scClusterSlotMigration},
		{"cluster_master_partitioned", "Redis Cluster: one master cut from every candidate (not from the cluster); the leader extends, then is cut off: elections without it; healed", all, scClusterMasterPartitioned},
		{"clock_jump_pexpire_majority", "the leader's key expires early on a majority (Kleppmann)", "C2 C3 C4; C1 must see the overlap", scClockJump},
		{"flushall", "FLUSHALL on one server", all, scFlushAll},
		{"evicting_policy", "leader on a bare majority; one of its nodes switched to volatile-random, then under memory pressure", all + "; the node refused at run time and by New", scEvictingPolicy},
		{"duplicate_server", "a candidate given two addresses of one server", all + "; New refuses the nodes", scDuplicateServer},
		{"reset_peer_and_killed_leader", "every connection reset 15 times, the leader killed -9", all + "; no stray keys", scResetKilledLeader},
		{"permits_kill9_server", "semaphore of 2 permits, 5 holders: kill -9 a redis-server, down 2 TTLs, restart it empty", semChecks, scPermitsKill9Server},
		{"permits_sigstop_server", "semaphore of 2 permits, 5 holders: one redis-server SIGSTOPped for 2 TTLs", semChecks, scPermitsSigstopServer},
		{"permits_restart_empty", "semaphore of 2 permits, 5 holders: kill -9 a redis-server, restart it empty at once", semChecks, scPermitsRestartEmpty},
		{"permits_kill9_holder", "semaphore of 2 permits, 5 holders: a holder killed -9", semChecks, scPermitsKill9Holder},
		{"control/C1_C4_candidates_ignore_deadline", "leader partitioned; candidates ignore their deadline", "C1 and C4 must fail", ctlIgnoreDeadline},
		{"control/C2_fencing_disabled", "fencing off: every token 0", "C2 must fail", ctlNoFencing},
		{"control/C3_unfenced_store", "the clock jump, with a store that checks no token", "C3 must fail", ctlUnfencedStore},
		{"control/C1_failover_without_quarantine", "the lagging-replica failover, quarantine off", "C1 must fail", ctlFailoverNoQuarantine},
		{"control/C1_cluster_failover_without_quarantine", "the cluster failover, quarantine off", "C1 must fail", ctlClusterFailoverNoQuarantine},
		{"control/C1_failback_without_replication_id_check", "the failback, the quarantine comparing run_ids only", "C1 must fail", ctlFailbackNoReplicationIDCheck},
		{"control/C1_evicting_with_AllowEviction", "the evicting node, candidates with AllowEviction: it evicts the leader's key", "C1 must fail", ctlEvictingAllowEviction},
		{"control/CK_permits_plus_one", "the semaphore, holders taking permits among K+1 keys", "CK must fail", ctlPermitsPlusOne},
		{"soak", fmt.Sprintf("a random fault every 5s for %s", soakLength(t)), all + "; no stray keys", scSoak},
	}
	if os.Getenv(envSoakCluster) != "" {
		scenarios = append(scenarios, faultScenario{"soak_cluster",
			fmt.Sprintf("Redis Cluster (3 masters + replicas): a random fault every 5s for %s", soakLength(t)), all + "; no stray keys", scSoakCluster})
	}
	return scenarios
}

// sleepUntil waits until the monotonic reading at: the timed end of a
// fault, or a documented bound of redlock's, never a wait for an outcome.
func sleepUntil(at int64) {
	if d := time.Duration(at - wire.Now()); d > 0 {
		time.Sleep(d)
	}
}

func gap(from, to int64) time.Duration { return time.Duration(to - from).Round(time.Millisecond) }

// scNoFaults: 8 contenders, leaders resigning after ~150ms in office: a
// dozen handovers under contention, every checker green.
func scNoFaults(t *testing.T, bin string) {
	r := newRig(t, bin, rigOptions{cands: 8, resignAfter: 150 * time.Millisecond})
	r.start()
	r.waitTerms(12, 0, 30*time.Second)
	rep := r.finish()
	r.expect(rep)
}

// partitionLeader cuts every link of the leader (requests and replies
// vanish: timeouts), and checks that it steps down before its validity
// ends and that another candidate takes over; then heals.
func partitionLeader(r *rig) {
	l, el := r.leader()
	r.waitWrites(l, el.TS, 3)
	from := r.hist.len()
	at := r.mark("partition every link of leader %s", l.id)
	for _, p := range l.slot.proxies {
		p.Partition()
	}
	sd, _ := r.waitEv(from, waitLong, "the partitioned leader's stepdown", ended(wire.Stepdown, l, el.TS))
	next, _ := r.waitEv(from, waitLong, "a new leader", electedOther(l))
	r.t.Logf("leader %s saw its term end %s after the partition; %s elected %s after the partition (%s after the old term's end)",
		l.id, gap(at, sd.T), next.ID, gap(at, next.TS), gap(sd.T, next.TS))
	for _, p := range l.slot.proxies {
		p.Heal()
	}
	r.mark("healed %s's links", l.id)
	r.waitEv(from, waitLong, "the old leader's demotion", ended(wire.Demoted, l, el.TS))
}

// scLeaderLinksTimeOut: the leader's links time out, twice.
func scLeaderLinksTimeOut(t *testing.T, bin string) {
	r := newRig(t, bin, rigOptions{})
	r.start()
	partitionLeader(r)
	partitionLeader(r)
	rep := r.finish()
	r.expect(rep)
}

// scNodeFlap: one node's links (from every candidate) go down and up for
// 3s, down as a blackhole or as refused connections, at random; leaders
// resign meanwhile.
func scNodeFlap(t *testing.T, bin string) {
	r := newRig(t, bin, rigOptions{resignAfter: 250 * time.Millisecond})
	r.start()
	n := r.rng.IntN(r.o.nodes)
	r.mark("node %d's links flap for 3s", n)
	end := time.Now().Add(3 * time.Second)
	flaps := 0
	for time.Now().Before(end) {
		blackhole := r.rng.IntN(2) == 0
		for _, p := range r.nodeProxies(n) {
			if blackhole {
				p.Partition()
			} else {
				p.Disable()
			}
		}
		time.Sleep(time.Duration(50+r.rng.IntN(250)) * time.Millisecond)
		for _, p := range r.nodeProxies(n) {
			p.Heal()
			p.Enable()
		}
		time.Sleep(time.Duration(50+r.rng.IntN(250)) * time.Millisecond)
		flaps++
	}
	healed := r.mark("node %d's links stable again after %d flaps", n, flaps)
	r.waitTerms(2, healed, waitLong)
	rep := r.finish()
	r.expect(rep)
}

// scMajoritiesRing: 5 nodes, 5 candidates; candidate i reaches nodes i,
// i+1 and i+2 (mod 5) only: every candidate sees a majority, a different
// one, and any two of them meet. Leaders resign; terms go round.
func scMajoritiesRing(t *testing.T, bin string) {
	r := newRig(t, bin, rigOptions{nodes: 5, cands: 5, resignAfter: 250 * time.Millisecond})
	r.start()
	at := r.mark("majorities ring: candidate i reaches nodes i..i+2 (mod 5) only")
	for i, sl := range r.slots {
		for n, p := range sl.proxies {
			if (n-i+5)%5 > 2 {
				p.Partition()
			}
		}
	}
	got := r.waitTerms(6, at, 40*time.Second)
	ids := map[string]bool{}
	for _, ev := range got {
		ids[ev.ID] = true
	}
	t.Logf("6 terms within the ring, held by %d candidates", len(ids))
	rep := r.finish()
	r.expect(rep)
}

// scLatency: replies of two of three nodes are delayed 1.5s (over the
// TTL) for 2 TTLs: the leader cannot refresh and steps down before its
// validity ends, nobody can be elected meanwhile, replies that come back
// late elect nobody, and a leader is elected once the latency is gone.
func scLatency(t *testing.T, bin string) {
	r := newRig(t, bin, rigOptions{})
	r.start()
	l, el := r.leader()
	r.waitWrites(l, el.TS, 3)
	victims := r.rng.Perm(r.o.nodes)[:2]
	from := r.hist.len()
	at := r.mark("reply latency 1.5s on nodes %v for %s", victims, 2*ttl)
	for _, v := range victims {
		for _, p := range r.nodeProxies(v) {
			p.SetLatency(1500 * time.Millisecond)
		}
	}
	sd, _ := r.waitEv(from, waitLong, "the leader's stepdown", ended(wire.Stepdown, l, el.TS))
	t.Logf("leader %s saw its term end %s after the latency began", l.id, gap(at, sd.T))
	sleepUntil(at + (2 * ttl).Nanoseconds())
	for _, v := range victims {
		for _, p := range r.nodeProxies(v) {
			p.SetLatency(0)
		}
	}
	healed := r.mark("latency removed")
	next, _ := r.waitEv(from, waitLong, "a leader after the latency", func(ev wire.Event) bool {
		return ev.Ev == wire.Elected && ev.TS > el.TS
	})
	if next.TS < healed {
		t.Errorf("%s was elected during the latency, %s after it began", next.ID, gap(at, next.TS))
	}
	t.Logf("%s elected %s after the latency was removed", next.ID, gap(healed, next.TS))
	rep := r.finish()
	r.expect(rep)
}

// scPauseLeader: the leader's process is stopped (SIGSTOP) for 2 TTLs: a
// real pause, timers included. Another candidate takes over once the
// term's keys lapse; the old leader, continued, must not believe it leads
// (IsLeader checks the deadline), and its late writes meet the fence.
func scPauseLeader(t *testing.T, bin string) {
	r := newRig(t, bin, rigOptions{})
	r.start()
	l, el := r.leader()
	r.waitWrites(l, el.TS, 3)
	from := r.hist.len()
	at := r.pause(l)
	next, _ := r.waitEv(from, waitLong, "a new leader while the old one is paused", electedOther(l))
	t.Logf("failover: %s elected %s after leader %s was paused", next.ID, gap(at, next.TS), l.id)
	sleepUntil(at + (2 * ttl).Nanoseconds())
	r.resume(l)
	r.waitEv(from, waitLong, "the paused leader's demotion", ended(wire.Demoted, l, el.TS))
	rep := r.finish()
	r.expect(rep)
}

// scPauseServer: one of three servers is stopped (SIGSTOP) for 2 TTLs
// while leaders come and go; elections go on with the other two.
func scPauseServer(t *testing.T, bin string) {
	r := newRig(t, bin, rigOptions{resignAfter: 300 * time.Millisecond})
	r.start()
	pauseServerTwoTTLs(r, 2)
	rep := r.finish()
	r.expect(rep)
}

// pauseServerTwoTTLs stops a random server (SIGSTOP) for 2 TTLs, waiting
// for n terms during the pause and n after it.
func pauseServerTwoTTLs(r *rig, n int) {
	v := r.rng.IntN(r.o.nodes)
	at := r.pauseServer(v)
	r.waitTerms(n, at, waitLong)
	sleepUntil(at + (2 * ttl).Nanoseconds())
	r.resumeServer(v)
	r.waitTerms(n, wire.Now(), waitLong)
}

// waitQuarantine waits for two terms that began after the forgetful
// node's quarantine (MaxTTL from lostAt) ended.
func waitQuarantine(r *rig, lostAt int64) {
	r.waitTerms(2, lostAt+maxTTL.Nanoseconds(), maxTTL+waitLong)
}

// scKillRestartEmpty: kill -9 a server and restart it empty while leaders
// come and go: it is quarantined, votes again after MaxTTL, and tokens
// keep increasing.
func scKillRestartEmpty(t *testing.T, bin string) {
	r := newRig(t, bin, rigOptions{resignAfter: 300 * time.Millisecond})
	r.start()
	r.waitTerms(2, 0, waitLong)
	v := r.rng.IntN(r.o.nodes)
	require.NoError(t, r.g.Server(v).Kill())
	require.NoError(t, r.g.Server(v).Restart(true))
	waitQuarantine(r, r.mark("kill -9 server %d, restarted empty", v))
	rep := r.finish()
	r.expect(rep)
}

// counter reads server i's fencing counter (0 when absent).
func (r *rig) counter(i int) uint64 {
	r.t.Helper()
	v, err := r.admin[i].Get(context.Background(), fenceKey).Result()
	if err == redis.Nil {
		return 0
	}
	require.NoError(r.t, err)
	n, err := strconv.ParseUint(v, 10, 64)
	require.NoError(r.t, err)
	return n
}

// scStaleRDB: a server restarts from an RDB snapshot older than its last
// writes (SAVE, more terms, kill -9, restart): its fencing counter and
// quarantine marker go back in time; it is quarantined (new run_id) and
// tokens keep increasing.
func scStaleRDB(t *testing.T, bin string) {
	r := newRig(t, bin, rigOptions{persistence: redistest.PersistRDB, resignAfter: 250 * time.Millisecond})
	r.start()
	r.waitTerms(2, 0, waitLong)
	v := r.rng.IntN(r.o.nodes)
	require.NoError(t, r.admin[v].Save(context.Background()).Err())
	saved := r.counter(v)
	r.mark("SAVE on server %d (fencing counter %d)", v, saved)
	for i := 0; r.counter(v) <= saved; i++ {
		require.Less(t, i, 30, "server %d's counter never moved past its snapshot's", v)
		r.waitTerms(1, wire.Now(), waitLong)
	}
	before := r.counter(v)
	require.NoError(t, r.g.Server(v).Kill()) // no shutdown save
	require.NoError(t, r.g.Server(v).Restart(false))
	after := r.counter(v)
	lostAt := r.mark("kill -9 server %d, restarted from its snapshot: fencing counter back from %d to %d", v, before, after)
	require.Less(t, after, before, "the snapshot is not older than the last writes")
	waitQuarantine(r, lostAt)
	rep := r.finish()
	r.expect(rep)
}

// clockJump is Kleppmann's scenario: the servers of a majority see the
// leader's key expire early (a clock jump, emulated by PEXPIRE 1ms) while
// the leader, cut off, still believes it leads until its deadline. Another
// candidate is elected during that time: leadership overlaps (C1 must say
// so), which is what fencing is for: tokens still increase (C2) and the
// fenced store loses no update (C3).
func clockJump(t *testing.T, bin string, o rigOptions) (*rig, *report) {
	o.compute, o.gap = 5*time.Millisecond, 2*time.Millisecond
	r := newRig(t, bin, o)
	r.start()
	a, el := r.leader()
	r.waitWrites(a, el.TS, 3)
	from := r.hist.len()
	for _, p := range a.slot.proxies {
		p.Partition() // no refresh reaches the servers, none comes back
	}
	jumped := r.rng.Perm(r.o.nodes)[:r.o.nodes/2+1]
	ctx := context.Background()
	for _, n := range jumped {
		// Until the key is gone: a refresh sent just before the partition
		// may still land and set its TTL again.
		for i := 0; ; i++ {
			require.Less(t, i, 100, "the election key does not go away on node %d", n)
			require.NoError(t, r.admin[n].PExpire(ctx, electionKey, time.Millisecond).Err())
			time.Sleep(2 * time.Millisecond)
			if k, err := r.admin[n].Exists(ctx, electionKey).Result(); err == nil && k == 0 {
				break
			}
		}
	}
	at := r.mark("clock jump: the election key expired at once on nodes %v; leader %s cut off", jumped, a.id)
	b, _ := r.waitEv(from, waitLong, "a leader elected after the jump", electedOther(a))
	sd, _ := r.waitEv(from, waitLong, "the old leader's stepdown", ended(wire.Stepdown, a, el.TS))
	t.Logf("%s elected %s after the jump, %s before %s saw its term end", b.ID, gap(at, b.TS), gap(b.TS, sd.T), a.id)
	for _, p := range a.slot.proxies {
		p.Heal()
	}
	r.waitEv(from, waitLong, "the old leader's demotion", ended(wire.Demoted, a, el.TS))
	return r, r.finish()
}

func scClockJump(t *testing.T, bin string) {
	r, rep := clockJump(t, bin, rigOptions{})
	// C1 must see the overlap the jump made: the real-run negative control
	// of C1's "tenures never overlap".
	assert.NotEmpty(t, rep.c1, "C1 did not see the leaders overlap after the clock jump")
	assert.Contains(t, fmt.Sprint(rep.c1), "tenures overlap")
	t.Logf("C1 reports the overlap, as it must: %v", rep.c1)
	r.expect(rep, "C1")
}

// scFlushAll: FLUSHALL on one server (locks, counters and its quarantine
// marker gone) while leaders come and go.
func scFlushAll(t *testing.T, bin string) {
	r := newRig(t, bin, rigOptions{resignAfter: 300 * time.Millisecond})
	r.start()
	r.waitTerms(2, 0, waitLong)
	v := r.rng.IntN(r.o.nodes)
	require.NoError(t, r.admin[v].FlushAll(context.Background()).Err())
	waitQuarantine(r, r.mark("FLUSHALL on server %d", v))
	rep := r.finish()
	r.expect(rep)
}

// resetAll resets every connection of every candidate, n times, 50-150ms
// apart (TCP RST: reset_peer).
func (r *rig) resetAll(n int) {
	for range n {
		for _, p := range r.allProxies() {
			p.ResetAll()
		}
		time.Sleep(time.Duration(50+r.rng.IntN(100)) * time.Millisecond)
	}
}

// scResetKilledLeader: connections reset under the candidates' feet
// (attempts, refreshes, releases and notices cut in the middle; the
// candidates' go-redis clients have their default options, so they retry
// on a reset, running the same script twice), then the
// leader killed -9 (no release): another takes over once its key lapses,
// and once everybody stopped no key is left but the marker and the
// fencing counter.
func scResetKilledLeader(t *testing.T, bin string) {
	r := newRig(t, bin, rigOptions{resignAfter: 400 * time.Millisecond, redisDefaults: 3})
	r.start()
	r.mark("reset_peer: every connection reset 10 times")
	r.resetAll(10)
	l, _ := r.leader()
	from := r.hist.len()
	at := r.kill(l)
	next, _ := r.waitEv(from, waitLong, "a leader after the kill", electedOther(l))
	t.Logf("failover: %s elected %s after leader %s was killed", next.ID, gap(at, next.TS), l.id)
	r.mark("reset_peer again")
	r.resetAll(5)
	rep := r.finish()
	r.expect(rep)
	r.noStrayKeys(ttl + time.Second)
}

// ctlIgnoreDeadline: the negative control of C1 (validity) and C4: the
// candidates believe they lead from OnElected to a quarter TTL past
// OnDemoted, ignoring IsLeader and the term's context; the leader's links
// time out. Its belief outlives its validity (C1) and it sees its term
// end only after the validity ended (C4).
func ctlIgnoreDeadline(t *testing.T, bin string) {
	r := newRig(t, bin, rigOptions{unsafe: true})
	r.start()
	partitionLeader(r)
	rep := r.finish()
	require.NotEmpty(t, rep.c1, "C1 did not catch a leader that ignores its deadline")
	assert.Contains(t, fmt.Sprint(rep.c1), "after its validity ended")
	require.NotEmpty(t, rep.c4, "C4 did not catch a leader that sees its term end late")
	t.Logf("caught, as they must be:\n%s\n%s", rep.c1[0], rep.c4[0])
}

// ctlNoFencing: the negative control of C2: fencing off in redlock, every
// token is 0.
func ctlNoFencing(t *testing.T, bin string) {
	r := newRig(t, bin, rigOptions{noFencing: true, resignAfter: 150 * time.Millisecond})
	r.start()
	r.waitTerms(4, 0, waitLong)
	rep := r.finish()
	require.NotEmpty(t, rep.c2, "C2 did not catch tokens that do not increase")
	t.Logf("caught, as it must be: %s (and %d C3 reports of repeated tokens)", rep.c2[0], len(rep.c3))
}

// ctlUnfencedStore: the negative control of C3: the clock-jump scenario
// with a store that checks no token: the two leaders' read-modify-writes
// interleave and updates are lost.
func ctlUnfencedStore(t *testing.T, bin string) {
	_, rep := clockJump(t, bin, rigOptions{unfencedStore: true})
	require.NotEmpty(t, rep.c3, "C3 did not catch the lost updates of an unfenced store")
	assert.Contains(t, fmt.Sprint(rep.c3), "lost update")
	t.Logf("caught, as it must be: %d reports, the first: %s", len(rep.c3), rep.c3[0])
}
