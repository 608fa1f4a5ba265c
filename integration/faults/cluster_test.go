package faults

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlease/redlease/internal/clusterkey"
	"github.com/redlease/redlease/internal/testing/checker/wire"
	"github.com/redlease/redlease/internal/testing/redistest"
	"github.com/redlease/redlease/redlock"
)

// The cluster scenarios: the nodes are one Redis Cluster of 3 masters with
// one replica each (cluster-require-full-coverage no, as NewCluster's doc
// asks), and every candidate runs redlock.NewCluster with 3 copies and the
// default buckets. A candidate's go-redis ClusterClient dials every server
// the cluster names through the candidate's own proxy for that server
// (-addr-map), so faults can cut one candidate from one server, or every
// candidate from one master, as with independent masters.

// clusterCopies is the candidates' NewCluster n.
const clusterCopies = 3

// startCluster launches the rig's cluster; node i is server i (the
// masters first, then their replicas).
func (r *rig) startCluster() {
	r.cl = redistest.StartCluster(r.t, clusterCopies, 1, redistest.Options{
		Persistence: r.o.persistence,
		Extra:       []string{"cluster-require-full-coverage no"},
	})
	r.o.nodes = len(r.cl.Servers())
}

// clusterAdminClient is a direct client of a cluster server that reads
// a replica's keys too (READONLY on every connection).
func clusterAdminClient(t *testing.T, addr string) *redis.Client {
	return redistest.NewClient(t, &redis.Options{Addr: addr, DialTimeout: time.Second,
		ReadTimeout: time.Second, WriteTimeout: time.Second, MaxRetries: -1, PoolSize: 1000,
		OnConnect: func(ctx context.Context, cn *redis.Conn) error { return cn.ReadOnly(ctx).Err() }})
}

// servers are the rig's servers, in the order of its nodes.
func (r *rig) servers() []*redistest.Server {
	if r.cl != nil {
		return r.cl.Servers()
	}
	return r.g.Servers()
}

// server is node i's server.
func (r *rig) server(i int) *redistest.Server { return r.servers()[i] }

// serverIndex is the node of server s.
func (r *rig) serverIndex(s *redistest.Server) int {
	r.t.Helper()
	for i, x := range r.servers() {
		if x == s {
			return i
		}
	}
	r.t.Fatalf("server %v is not one of the rig's", s)
	return -1
}

// bootstrapCluster declares the cluster brand new through a NewCluster
// client of the candidates' layout, and waits until every replica has
// the markers (a promoted replica must inherit its master's).
func (r *rig) bootstrapCluster() {
	ctx := context.Background()
	c, err := redlock.NewCluster(ctx, redlock.Config{NodeTimeout: 500 * time.Millisecond, MaxTTL: maxTTL}, r.cl.Client(r.t), clusterCopies)
	if err != nil {
		r.t.Fatalf("redlock.NewCluster: %v", err)
	}
	defer c.Close()
	if err := c.Bootstrap(ctx); err != nil {
		r.t.Fatalf("bootstrap: %v", err)
	}
	for i, m := range r.cl.Masters() {
		if n, err := r.admin[i].Do(ctx, "WAIT", 1, 5000).Int(); err != nil || n != 1 {
			r.t.Fatalf("master %s: WAIT for its replica: %d, %v", m.Addr(), n, err)
		}
	}
}

// clusterArgs are a candidate's node flags: the cluster's addresses, and
// its proxy for each.
func (r *rig) clusterArgs(sl *slot) []string {
	var m []string
	for i, s := range r.cl.Servers() {
		m = append(m, s.Addr()+"="+sl.proxies[i].Addr())
	}
	return []string{"-cluster", strings.Join(r.cl.Addrs(), ","), "-addr-map", strings.Join(m, ","),
		"-copies", strconv.Itoa(clusterCopies)}
}

// copyTag is the hash tag of copy i of the election's key.
func copyTag(i int) string {
	b := clusterkey.Bucket(electionKey, clusterkey.DefaultBuckets)
	return clusterkey.BucketTag(i, b, clusterCopies, clusterkey.DefaultBuckets)
}

// copyKey is copy i of the election's key.
func copyKey(i int) string { return "{" + copyTag(i) + "}:" + electionKey }

// copySlot is the slot of copy i of the election's key.
func copySlot(i int) uint16 { return clusterkey.Slot(copyTag(i)) }

// copyMaster is the node of the master that serves copy i now.
func (r *rig) copyMaster(i int) int {
	r.t.Helper()
	m := r.cl.MasterOf(copySlot(i))
	if m == nil {
		r.t.Fatalf("the servers do not agree on the master of slot %d (copy %d)", copySlot(i), i)
	}
	return r.serverIndex(m)
}

// clusterFailover: copy v's master X has a replica Y whose replication
// link is cut (Y keeps running: its masterauth is made wrong, and X drops
// it). With a leader L that holds copies v and c, L is cut from copy b's
// master until b has lost L's key: L leads on X and c's master only. Then
// X is killed -9 and Y promoted (CLUSTER FAILOVER TAKEOVER), without L's
// copy but with X's quarantine marker: without quarantine, Y and b are a
// majority for another candidate while L still leads. It returns once L
// has seen its term end and another candidate is elected, with Y's node
// and the marker of copy v.
func clusterFailover(t *testing.T, bin string, o rigOptions) (r *rig, y int, marker string) {
	o.cluster = true
	r = newRig(t, bin, o)
	r.start()
	ctx := context.Background()
	v := r.rng.IntN(clusterCopies)
	b := (v + 1 + r.rng.IntN(clusterCopies-1)) % clusterCopies
	c := 3 - v - b
	x, bm, cm := r.copyMaster(v), r.copyMaster(b), r.copyMaster(c)
	require.Len(t, map[int]bool{x: true, bm: true, cm: true}, 3, "the copies share a master")
	y = r.serverIndex(r.cl.ReplicaOf(r.server(x)))
	marker = "{" + copyTag(v) + "}:marker"
	xRun := runID(t, r.admin[x])
	require.Equal(t, xRun, r.admin[y].HGet(ctx, marker, "r").Val(), "the replica holds its master's marker")

	// The replica may hold whatever copy v held before the link was cut
	// (a term elected before the cut): the leader must be one whose copy
	// was written after it, or the promoted replica has it.
	before := get(r.admin[x], copyKey(v))
	require.NoError(t, r.admin[y].ConfigSet(ctx, "masterauth", "not-the-password").Err())
	require.NoError(t, r.admin[x].Do(ctx, "CLIENT", "KILL", "TYPE", "replica").Err())
	r.until(waitLong, "the master without its replica", func() bool {
		return infoField(t, r.admin[x], "replication", "connected_slaves") == "0"
	})
	after := get(r.admin[x], copyKey(v))
	r.mark("copy %d: replication link of master %d to its replica %d cut", v, x, y)

	l, el, value := r.leaderHolding(fmt.Sprintf("copies %d and %d, written after the cut", v, c),
		func() string { return get(r.admin[x], copyKey(v)) },
		func(value string) bool {
			return value != "" && value != before && value != after && get(r.admin[cm], copyKey(c)) == value
		})
	from := r.hist.len()
	l.slot.proxies[bm].Partition()
	r.mark("leader %s cut from copy %d's master %d", l.id, b, bm)
	r.until(waitLong, fmt.Sprintf("leader %s on a bare majority (copy %d without its key)", l.id, b), func() bool {
		return get(r.admin[bm], copyKey(b)) != value
	})
	require.Equal(t, value, get(r.admin[x], copyKey(v)), "copy %d lost the leader's key", v)
	if _, _, ok := r.hist.next(from, 0, ended(wire.Stepdown, l, el.TS)); ok {
		t.Fatalf("leader %s lost its term on a bare majority before the fault: the scenario proves nothing", l.id)
	}

	require.NoError(t, r.server(x).Kill())
	require.NoError(t, r.admin[y].Do(ctx, "CLUSTER", "FAILOVER", "TAKEOVER").Err())
	r.until(waitLong, "the replica promoted", func() bool {
		return infoField(t, r.admin[y], "replication", "role") == "master"
	})
	at := r.mark("kill -9 master %d of copy %d; its replica %d promoted (TAKEOVER) without %s's copy", x, v, y, l.id)
	require.NotEqual(t, value, get(r.admin[y], copyKey(v)), "the promoted replica has the leader's copy: the scenario proves nothing")
	require.Equal(t, xRun, r.admin[y].HGet(ctx, marker, "r").Val(), "the promoted replica's marker names the old master")
	sd, _ := r.waitEv(from, waitLong, "the leader's stepdown", ended(wire.Stepdown, l, el.TS))
	next, _ := r.waitEv(from, waitLong, "a leader after the failover", electedOther(l))
	t.Logf("leader %s saw its term end %s after the promotion; %s elected %s after it", l.id, gap(at, sd.T), next.ID, gap(at, next.TS))
	l.slot.proxies[bm].Heal()
	r.mark("healed %s's link to master %d", l.id, bm)
	return r, y, marker
}

// scClusterFailover: the cluster failover with quarantine on: the
// promoted replica's run_id is not its marker's, so it votes no for
// MaxTTL, and the next leader is elected only once the old leader's term
// has lapsed; the leader is then cut off once more for another election.
func scClusterFailover(t *testing.T, bin string) {
	r, y, marker := clusterFailover(t, bin, rigOptions{})
	yRun := runID(t, r.admin[y])
	r.until(waitLong, "the promoted replica's quarantine (its marker naming it)", func() bool {
		return r.admin[y].HGet(context.Background(), marker, "r").Val() == yRun
	})
	partitionLeader(r)
	rep := r.finish()
	r.expect(rep)
}

// ctlClusterFailoverNoQuarantine: the negative control of the cluster
// failover: with quarantine off the promoted replica votes at once, and
// with copy b's master it elects another candidate while the old leader
// still leads: C1 must see the tenures overlap.
func ctlClusterFailoverNoQuarantine(t *testing.T, bin string) {
	r, _, _ := clusterFailover(t, bin, rigOptions{noQuarantine: true})
	rep := r.finish()
	t.Logf("caught, as it must be: %s", caughtOverlap(t, rep, "the double leadership of a cluster failover without quarantine"))
}

// scClusterDown: with a leader in office, two of the three masters are
// killed -9: the last one answers CLUSTERDOWN (it cannot reach a majority
// of masters), and their replicas cannot be promoted (no majority votes).
// The leader must see its term end, nobody may be elected while the
// cluster is down, and a client's acquisition must fail with an error
// that names CLUSTERDOWN. The two masters are then restarted (empty, with
// their cluster identity): once the cluster is healthy again, and their
// quarantine is over, a leader is elected.
func scClusterDown(t *testing.T, bin string) {
	r := newRig(t, bin, rigOptions{cluster: true})
	r.start()
	ctx := context.Background()
	probe, err := redlock.NewCluster(ctx, redlock.Config{NodeTimeout: 300 * time.Millisecond, MaxTTL: maxTTL}, r.cl.Client(t), clusterCopies)
	require.NoError(t, err)
	defer probe.Close()
	l, el := r.leader()
	r.waitWrites(l, el.TS, 3)
	keep := r.rng.IntN(clusterCopies)
	var down []int
	for m := range clusterCopies { // servers 0-2 are the masters
		if m != keep {
			down = append(down, m)
		}
	}
	from := r.hist.len()
	for _, m := range down {
		require.NoError(t, r.server(m).Kill())
	}
	at := r.mark("kill -9 masters %v of 3: a majority of masters down", down)
	sd, _ := r.waitEv(from, waitLong, "the leader's stepdown", ended(wire.Stepdown, l, el.TS))
	r.until(waitLong, "CLUSTERDOWN from the last master", func() bool {
		var lk *redlock.Lock
		lk, err = probe.TryAcquire(ctx, "faults:probe", ttl)
		if lk != nil {
			t.Fatalf("a lock was granted with a majority of masters down")
		}
		return err != nil && strings.Contains(err.Error(), "CLUSTERDOWN")
	})
	require.ErrorIs(t, err, redlock.ErrNotAcquired)
	t.Logf("leader %s saw its term end %s after the fault; an acquisition fails closed: %v", l.id, gap(at, sd.T), err)
	restart := r.hist.len()
	if ev, i, ok := r.hist.next(from, 0, isElected); ok && i < restart {
		t.Fatalf("%s elected with a majority of masters down", ev.ID)
	}
	for _, m := range down {
		require.NoError(t, r.server(m).Restart(false))
	}
	require.NoError(t, r.cl.WaitHealthy())
	back := r.mark("masters %v restarted (empty, their cluster identity kept); the cluster is healthy", down)
	next, _ := r.waitEv(from, waitLong+maxTTL, "a leader after the cluster's recovery", isElected)
	t.Logf("%s elected %s after the cluster was healthy again (%s after the fault)", next.ID, gap(back, next.TS), gap(at, next.TS))
	rep := r.finish()
	r.expect(rep)
}

// redirects records the MOVED and ASK redirects a go-redis cluster client
// followed, by the user key of the script's first key (a hook on each of its
// node clients). Redlock returns once a majority
// of copies answered, so a redirected copy's reply may come later: the
// test waits for it.
type redirects struct {
	mu      sync.Mutex
	n       map[string]int // "MOVED <key>", "ASK <key>"
	changed chan struct{}
}

func (h *redirects) count(cmds ...redis.Cmder) {
	h.mu.Lock()
	defer h.mu.Unlock()
	asking := false
	for _, c := range cmds {
		kind := ""
		if err := c.Err(); err != nil {
			if k, _, ok := strings.Cut(err.Error(), " "); ok && (k == "MOVED" || k == "ASK") {
				kind = k
			}
		}
		if asking {
			// go-redis follows an ASK with ASKING and the command, in a
			// pipeline to the target (the source's ASK reply itself is
			// not always left in the command for a hook to see).
			kind = "ASK"
		}
		asking = strings.EqualFold(c.Name(), "asking")
		if kind == "" {
			continue
		}
		if args := c.Args(); len(args) > 3 {
			if k, ok := args[3].(string); ok {
				_, user, _ := strings.Cut(k, "}:")
				h.n[kind+" "+user]++
				close(h.changed)
				h.changed = make(chan struct{})
			}
		}
	}
}

// wait waits until a reply of kind met key, at most waitLong.
func (h *redirects) wait(kind, key string) bool {
	deadline := time.After(waitLong)
	for {
		h.mu.Lock()
		n, ch := h.n[kind+" "+key], h.changed
		h.mu.Unlock()
		if n > 0 {
			return true
		}
		select {
		case <-ch:
		case <-deadline:
			return false
		}
	}
}

func (h *redirects) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h *redirects) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		err := next(ctx, cmd)
		h.count(cmd)
		return err
	}
}

func (h *redirects) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		err := next(ctx, cmds)
		h.count(cmds...)
		return err
	}
}

// probe is a redlock cluster client of the test (not a candidate) whose
// redirects are recorded.
type probe struct {
	*redlock.Client
	r *redirects
}

func (r *rig) newProbe() *probe {
	h := &redirects{n: map[string]int{}, changed: make(chan struct{})}
	cc := redis.NewClusterClient(&redis.ClusterOptions{Addrs: r.cl.Addrs(), DialTimeout: 250 * time.Millisecond,
		ReadTimeout: 500 * time.Millisecond, WriteTimeout: 500 * time.Millisecond, PoolSize: 1000,
		NewClient: func(o *redis.Options) *redis.Client {
			c := redis.NewClient(o)
			c.AddHook(h)
			return c
		}})
	r.t.Cleanup(func() { _ = cc.Close() })
	c, err := redlock.NewCluster(context.Background(), redlock.Config{NodeTimeout: 300 * time.Millisecond, MaxTTL: maxTTL}, cc, clusterCopies)
	require.NoError(r.t, err)
	r.t.Cleanup(func() { _ = c.Close() })
	return &probe{Client: c, r: h}
}

// sameBucketKeys are n keys of the election key's bucket: their copies
// live in the election's slots.
func sameBucketKeys(n int) []string {
	want := clusterkey.Bucket(electionKey, clusterkey.DefaultBuckets)
	var out []string
	for i := 0; len(out) < n; i++ {
		k := "faults:probe:" + strconv.Itoa(i)
		if clusterkey.Bucket(k, clusterkey.DefaultBuckets) == want {
			out = append(out, k)
		}
	}
	return out
}

// errorCount is the count of INFO errorstats' errorstat_<kind> of node i.
func (r *rig) errorCount(i int, kind string) int {
	info, err := r.admin[i].Info(context.Background(), "errorstats").Result()
	require.NoError(r.t, err)
	for line := range strings.SplitSeq(info, "\r\n") {
		if v, ok := strings.CutPrefix(line, "errorstat_"+kind+":count="); ok {
			n, _ := strconv.Atoi(v)
			return n
		}
	}
	return 0
}

// scClusterSlotMigration: copy v's slot is migrated to another master
// while a leader extends its term and candidates campaign (leaders resign
// every ~300ms, so acquisitions and releases keep coming). The slot stays
// half-way (MIGRATING on the source, IMPORTING on the target, every key
// moved) until the candidates have met ASK, then the migration ends
// (SETSLOT NODE) and clients with the old slot map meet MOVED. Four
// probe clients of the test show each redirect on each operation: ASK
// on an extend, an acquisition and a release during the migration, MOVED
// on an extend, a release and an acquisition after it. Every checker
// must hold throughout, and a leader be elected after.
func scClusterSlotMigration(t *testing.T, bin string) {
	r := newRig(t, bin, rigOptions{cluster: true, resignAfter: 300 * time.Millisecond})
	r.start()
	ctx := context.Background()
	v := r.rng.IntN(clusterCopies)
	slot := copySlot(v)
	src := r.copyMaster(v)
	dst := r.copyMaster((v + 1 + r.rng.IntN(clusterCopies-1)) % clusterCopies)
	_, el := r.leader()
	r.waitWritesSince(el.TS, 3) // (leaders resign every ~300ms)

	// p4 is idle while the slot is half-way: a client whose acquisition
	// met a new server rechecks its slot map every second (p2), and would
	// meet no MOVED after.
	p1, p2, p3, p4 := r.newProbe(), r.newProbe(), r.newProbe(), r.newProbe()
	keys := sameBucketKeys(4)
	k1, err := p1.TryAcquire(ctx, keys[0], maxTTL)
	require.NoError(t, err)
	k4, err := p4.TryAcquire(ctx, keys[1], maxTTL)
	require.NoError(t, err)
	k3, err := p3.TryAcquire(ctx, keys[2], maxTTL)
	require.NoError(t, err)

	r.halfMigrate(t, slot, src, dst)
	at := r.mark("copy %d's slot %d MIGRATING from master %d to master %d, every key moved", v, slot, src, dst)
	require.NoError(t, k1.Extend(ctx, maxTTL))
	_, err = p2.TryAcquire(ctx, keys[0], maxTTL)
	require.ErrorIs(t, err, redlock.ErrNotAcquired)
	err = k3.Release(ctx)
	require.NoError(t, err)
	assert.True(t, p1.r.wait("ASK", keys[0]), "no ASK on the probe's extend during the migration")
	assert.True(t, p2.r.wait("ASK", keys[0]), "no ASK on the probe's acquisition during the migration")
	assert.True(t, p3.r.wait("ASK", keys[2]), "no ASK on the probe's release during the migration")
	// The slot stays half-way until a term began in it (a release and
	// acquisitions under ASK) and the servers answered ASK a few times.
	r.waitTerms(1, at, waitLong)
	r.until(waitLong, "the candidates' requests redirected by ASK", func() bool {
		return r.errorCount(src, "ASK") >= 10
	})
	require.NoError(t, r.cl.MigrateSlot(slot, r.server(dst)))
	done := r.mark("copy %d's slot %d migrated to master %d (SETSLOT NODE)", v, slot, dst)
	require.NoError(t, k1.Extend(ctx, maxTTL))
	_ = k4.Release(ctx) // sent even if it has expired meanwhile
	l3, err := p3.TryAcquire(ctx, keys[3], maxTTL)
	require.NoError(t, err)
	assert.True(t, p1.r.wait("MOVED", keys[0]), "no MOVED on the probe's extend after the migration")
	assert.True(t, p4.r.wait("MOVED", keys[1]), "no MOVED on the probe's release after the migration")
	assert.True(t, p3.r.wait("MOVED", keys[3]), "no MOVED on the probe's acquisition after the migration")
	_ = l3.Release(ctx)
	_ = k1.Release(ctx)
	t.Logf("ASK and MOVED met by the probes on extend, acquire and release; the servers answered ASK %d times (candidates and probes) in the %s of the migration",
		r.errorCount(src, "ASK"), gap(at, done))
	r.waitTerms(2, done, waitLong)
	rep := r.finish()
	r.expect(rep)
}

// halfMigrate leaves slot half-way from master src to master dst:
// IMPORTING on dst, MIGRATING on src, and every key of it moved to dst.
func (r *rig) halfMigrate(t *testing.T, slot uint16, src, dst int) {
	ctx := context.Background()
	srcID, err := r.admin[src].ClusterMyID(ctx).Result()
	require.NoError(t, err)
	dstID, err := r.admin[dst].ClusterMyID(ctx).Result()
	require.NoError(t, err)
	require.NoError(t, r.admin[dst].Do(ctx, "CLUSTER", "SETSLOT", slot, "IMPORTING", srcID).Err())
	require.NoError(t, r.admin[src].Do(ctx, "CLUSTER", "SETSLOT", slot, "MIGRATING", dstID).Err())
	for {
		ks, err := r.admin[src].ClusterGetKeysInSlot(ctx, int(slot), 100).Result()
		require.NoError(t, err)
		if len(ks) == 0 {
			return
		}
		args := []any{"MIGRATE", "127.0.0.1", r.server(dst).Port(), "", 0, 1000, "KEYS"}
		for _, k := range ks {
			args = append(args, k)
		}
		require.NoError(t, r.admin[src].Do(ctx, args...).Err())
	}
}

// scClusterMasterPartitioned: every candidate's links to one master (the
// master of a copy of the election's key) are blackholed: the cluster
// itself still sees the master (no failover), the clients do not. Terms
// must be extended on the other two copies (the leader's, unless a loaded
// host made it lapse first), a new
// leader be elected without the master (the leader is cut off), and,
// once the links are healed, another after it.
func scClusterMasterPartitioned(t *testing.T, bin string) {
	r := newRig(t, bin, rigOptions{cluster: true})
	r.start()
	m := r.copyMaster(r.rng.IntN(clusterCopies))
	l, el := r.leader()
	r.waitWrites(l, el.TS, 3)
	from := r.hist.len()
	for _, p := range r.nodeProxies(m) {
		p.Partition()
	}
	at := r.mark("every candidate's links to master %d blackholed", m)
	// Any term extended after the partition was extended without master
	// m (every candidate's links to it are cut). It is the leader's, unless
	// a loaded host made that term lapse first (the rig's checkers judge
	// the handover like any other): then the next leader's.
	ext, _ := r.waitEv(from, waitLong, "term extended without master "+strconv.Itoa(m), func(ev wire.Event) bool {
		return ev.Ev == wire.Refresh && ev.VU > at+ttl.Nanoseconds()
	})
	if ext.PID != l.pid || ext.TS != el.TS {
		t.Logf("the leader's term ended before an extension; a later term (pid %d) was extended without master %d", ext.PID, m)
	}
	partitionLeader(r)
	for _, p := range r.nodeProxies(m) {
		p.Heal()
	}
	healed := r.mark("links to master %d healed", m)
	partitionLeader(r)
	r.waitTerms(1, healed, waitLong)
	rep := r.finish()
	r.expect(rep)
}

// clusterSoakFaults are the soak's faults of a cluster only: a copy's
// master killed -9, its replica promoted by the cluster (automatic
// failover), and the old master restarted (empty; it rejoins as a
// replica); a copy's slot migrated to another master.
func (r *rig) clusterSoakFaults() []soakFault {
	t := r.t
	return []soakFault{
		{"kill9-master-failover", func() bool {
			v := r.rng.IntN(clusterCopies)
			m := r.cl.MasterOf(copySlot(v))
			if m == nil || r.cl.ReplicaOf(m) == nil {
				return false // a failover still under way
			}
			if err := m.Kill(); err != nil {
				t.Error(err)
			}
			r.mark("soak: kill -9 master %d of copy %d", r.serverIndex(m), v)
			if err := r.cl.WaitHealthy(); err != nil {
				t.Error(err)
			}
			if err := m.Restart(false); err != nil {
				t.Error(err)
			}
			r.mark("soak: copy %d failed over to master %d; server %d restarted empty", v, r.copyMaster(v), r.serverIndex(m))
			return true
		}},
		{"migrate-slot", func() bool {
			v := r.rng.IntN(clusterCopies)
			masters := map[int]bool{}
			for _, s := range r.cl.Servers() {
				if s.Running() && infoField(t, r.admin[r.serverIndex(s)], "replication", "role") == "master" {
					masters[r.serverIndex(s)] = true
				}
			}
			from := r.copyMaster(v)
			delete(masters, from)
			for to := range masters {
				if err := r.cl.MigrateSlot(copySlot(v), r.server(to)); err != nil {
					t.Error(err)
				}
				r.mark("soak: copy %d's slot %d migrated from master %d to master %d", v, copySlot(v), from, to)
				return true
			}
			return false
		}},
	}
}
