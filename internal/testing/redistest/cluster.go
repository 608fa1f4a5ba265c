package redistest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

const (
	// ClusterNodeTimeout is the cluster-node-timeout of the servers
	// StartCluster launches: a master that does not answer for this long is
	// suspected, and its replica is promoted about 1-2 node timeouts later.
	ClusterNodeTimeout = time.Second
	// clusterTimeout bounds forming a cluster, and the waits of WaitHealthy
	// and Failover.
	clusterTimeout = 30 * time.Second
	// clusterPoll is how often those waits ask the servers.
	clusterPoll = 20 * time.Millisecond
	// adminTimeout bounds each request of the cluster helper to one server.
	adminTimeout = time.Second
	// slotCount is the number of hash slots of a Redis Cluster.
	slotCount = 16384
)

// Cluster is a Redis Cluster of redis-server processes started together by
// StartCluster. Its methods are safe for concurrent use. The servers are
// ordinary [Server] values: Kill, Pause, Resume, Stop and Restart apply as
// for Start. Restart(false) keeps the data directory and with it the
// node's identity (nodes.conf): the node rejoins the cluster, as a replica
// if its slots were failed over meanwhile. Restart(true) wipes nodes.conf
// too: the node comes back as a new, empty node outside the cluster.
//
// The methods that ask the cluster (MasterOf, ReplicaOf, WaitHealthy,
// Failover) query every running server, each bounded by 1s; a paused
// server makes WaitHealthy and Failover wait until it is resumed.
type Cluster struct {
	masters  []*Server
	replicas []*Server // replicas[k*r+j] replicated masters[k] at start
	servers  []*Server // masters, then replicas
	bus      []int     // cluster bus port of servers[i]
	admin    []*redis.Client
	byPort   map[int]int // port -> index in servers
}

// StartCluster launches masters*(1+replicasPerMaster) redis-server
// processes configured by opts (at most one Options value; its Extra lines
// come after the cluster directives and take precedence) with
// cluster-enabled yes, cluster-node-timeout 1000 and their own
// nodes.conf and cluster bus port, then forms a cluster of them: master k
// serves the slots [k*16384/masters, (k+1)*16384/masters - 1] (the standard
// contiguous layout), and each master gets replicasPerMaster replicas.
// StartCluster returns once every node reports cluster_state:ok, every
// replica's link to its master is up, and every node agrees on the slot map
// and the roles; it calls t.Fatalf if that takes more than 30s (a fresh
// cluster takes about 2s: a new master waits 2s before it accepts writes).
// Every process is stopped and reaped by t.Cleanup.
//
// Redis' other cluster defaults apply, notably cluster-require-full-coverage
// yes: from the moment a killed master is flagged as failed until its
// replica is promoted, every master answers CLUSTERDOWN. Pass
// "cluster-require-full-coverage no" in Options.Extra to keep the other
// slots served.
func StartCluster(t testing.TB, masters, replicasPerMaster int, opts ...Options) *Cluster {
	t.Helper()
	if masters < 1 || replicasPerMaster < 0 || len(opts) > 1 {
		t.Fatalf("redistest.StartCluster: need masters >= 1, replicasPerMaster >= 0 and at most one Options, got %d, %d and %d Options",
			masters, replicasPerMaster, len(opts))
	}
	o, bin := setup(t, opts)
	n := masters * (1 + replicasPerMaster)
	c := &Cluster{byPort: make(map[int]int, n)}
	// Registered before the servers' cleanups, so it runs after them.
	t.Cleanup(func() {
		for _, a := range c.admin {
			_ = a.Close()
		}
	})
	for i := range n {
		s, bus, err := startClusterNode(t, bin, o)
		if err != nil {
			t.Fatalf("redistest: cluster node %d: %v", i, err)
		}
		c.servers = append(c.servers, s)
		c.bus = append(c.bus, bus)
		c.byPort[s.port] = i
		// One connection is used at a time. The large PoolSize keeps go-redis
		// from starting its background re-dialer (which outlives Close by up
		// to 1s) after PoolSize failed dials to a killed server.
		c.admin = append(c.admin, redis.NewClient(&redis.Options{
			Addr:        s.Addr(),
			DialTimeout: adminTimeout, ReadTimeout: adminTimeout, WriteTimeout: adminTimeout,
			MaxRetries: -1, PoolSize: 1000,
		}))
	}
	c.masters = c.servers[:masters]
	c.replicas = c.servers[masters:]
	ctx, cancel := context.WithTimeout(context.Background(), clusterTimeout)
	defer cancel()
	if err := c.form(ctx, replicasPerMaster); err != nil {
		t.Fatalf("redistest: form a cluster of %d masters and %d replicas each (%s): %v (logs: %s)",
			masters, replicasPerMaster, describe(bin), err, c.logDirs())
	}
	return c
}

// startClusterNode launches one cluster-enabled server on a free port and
// a free cluster bus port, retrying with other ports if one was taken.
func startClusterNode(t testing.TB, bin string, o Options) (*Server, int, error) {
	dir := t.TempDir()
	s := &Server{
		bin:     bin,
		dataDir: filepath.Join(dir, "data"),
		logPath: filepath.Join(dir, "redis.log"),
		cfgPath: filepath.Join(dir, "redis.conf"),
	}
	// Registered after t.TempDir, so it runs before the directory is
	// removed. Killing a server that never started does nothing; SIGKILL
	// as for Start's servers (startServer).
	t.Cleanup(func() { _ = s.Kill() })
	var err error
	for range bindAttempts {
		var ports []int
		if ports, err = freePorts(2); err != nil {
			return nil, 0, err
		}
		s.port = ports[0]
		s.opts = Options{Persistence: o.Persistence, Extra: append(clusterDirectives(ports[1]), o.Extra...)}
		if err = s.launch(); !errors.Is(err, errAddrInUse) {
			return s, ports[1], err
		}
	}
	return nil, 0, err
}

// clusterDirectives are the redis.conf lines of a cluster node. The
// nodes.conf path is relative to the server's data directory. The
// announced IP makes a node that never met another one (a cluster of one)
// report 127.0.0.1 in CLUSTER SLOTS rather than an empty host.
func clusterDirectives(busPort int) []string {
	return []string{
		"cluster-enabled yes",
		"cluster-config-file nodes.conf",
		"cluster-announce-ip 127.0.0.1",
		"cluster-port " + strconv.Itoa(busPort),
		"cluster-node-timeout " + strconv.FormatInt(ClusterNodeTimeout.Milliseconds(), 10),
	}
}

// freePorts returns n distinct ports that were free on 127.0.0.1 a moment
// ago.
func freePorts(n int) ([]int, error) {
	var ports []int
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("pick free port: %w", err)
		}
		defer l.Close()
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// form assigns slots and epochs, makes the nodes meet, attaches the
// replicas and waits until the cluster is healthy.
func (c *Cluster) form(ctx context.Context, replicasPerMaster int) error {
	ids := make([]string, len(c.servers))
	for i, a := range c.admin {
		id, err := a.ClusterMyID(ctx).Result()
		if err != nil {
			return fmt.Errorf("%s: CLUSTER MYID: %w", c.servers[i].Addr(), err)
		}
		ids[i] = id
		// Distinct epochs up front, as redis-cli does, so that the cluster
		// does not have to resolve epoch collisions first.
		if err := a.Do(ctx, "CLUSTER", "SET-CONFIG-EPOCH", i+1).Err(); err != nil {
			return fmt.Errorf("%s: CLUSTER SET-CONFIG-EPOCH: %w", c.servers[i].Addr(), err)
		}
	}
	m := len(c.masters)
	for k := range c.masters {
		lo, hi := k*slotCount/m, (k+1)*slotCount/m-1
		if err := c.admin[k].Do(ctx, "CLUSTER", "ADDSLOTSRANGE", lo, hi).Err(); err != nil {
			return fmt.Errorf("%s: CLUSTER ADDSLOTSRANGE %d %d: %w", c.servers[k].Addr(), lo, hi, err)
		}
	}
	first := c.servers[0]
	for i, a := range c.admin[1:] {
		if err := a.Do(ctx, "CLUSTER", "MEET", "127.0.0.1", first.port, c.bus[0]).Err(); err != nil {
			return fmt.Errorf("%s: CLUSTER MEET: %w", c.servers[i+1].Addr(), err)
		}
	}
	if err := c.poll(ctx, c.allKnown); err != nil {
		return fmt.Errorf("nodes did not meet: %w", err)
	}
	for j, a := range c.admin[m:] {
		k := j / replicasPerMaster
		if err := a.ClusterReplicate(ctx, ids[k]).Err(); err != nil {
			return fmt.Errorf("%s: CLUSTER REPLICATE %s: %w", c.servers[m+j].Addr(), c.masters[k].Addr(), err)
		}
	}
	if err := c.poll(ctx, c.healthy); err != nil {
		return fmt.Errorf("not healthy: %w", err)
	}
	return nil
}

// Servers returns every server: the masters, then the replicas, as
// started (see Masters and Replicas).
func (c *Cluster) Servers() []*Server { return slices.Clone(c.servers) }

// Masters returns the servers started as masters: Masters()[k] was given
// the k-th slot range. A failover changes roles; MasterOf and ReplicaOf
// tell the current ones.
func (c *Cluster) Masters() []*Server { return slices.Clone(c.masters) }

// Replicas returns the servers started as replicas: those of Masters()[k]
// come k-th, replicasPerMaster each.
func (c *Cluster) Replicas() []*Server { return slices.Clone(c.replicas) }

// Addrs returns the "127.0.0.1:port" address of every server, in the order
// of Servers.
func (c *Cluster) Addrs() []string {
	addrs := make([]string, len(c.servers))
	for i, s := range c.servers {
		addrs[i] = s.Addr()
	}
	return addrs
}

// Client returns a new go-redis cluster client over every server, closed
// by t.Cleanup. It keeps go-redis' default options (retries, 5s dial and
// 3s read timeouts, slot map refreshed every 60s or on MOVED); for fault
// tests build one with redis.NewClusterClient and Addrs instead.
func (c *Cluster) Client(t testing.TB) *redis.ClusterClient {
	cc := redis.NewClusterClient(&redis.ClusterOptions{Addrs: c.Addrs()})
	t.Cleanup(func() { _ = cc.Close() })
	return cc
}

// MasterOf returns the server that serves slot as a master according to a
// majority of the running servers that answer (even if that server is
// down and not yet failed over), or nil when they do not agree.
func (c *Cluster) MasterOf(slot uint16) *Server {
	ctx, cancel := context.WithTimeout(context.Background(), 2*adminTimeout)
	defer cancel()
	views, _ := c.views(ctx)
	return c.majority(views, func(v *clusterView) []int {
		for _, r := range v.slots {
			if int(slot) >= r.lo && int(slot) <= r.hi {
				return []int{r.port}
			}
		}
		return nil
	})
}

// ReplicaOf returns a replica of master (the first in the order of Servers)
// that a majority of the running servers that answer see as a replica of
// master and not failed, or nil if there is none.
func (c *Cluster) ReplicaOf(master *Server) *Server {
	ctx, cancel := context.WithTimeout(context.Background(), 2*adminTimeout)
	defer cancel()
	views, _ := c.views(ctx)
	return c.majority(views, func(v *clusterView) []int {
		var ports []int
		for _, n := range v.nodes {
			if n.replicaOf == master.port && !n.failed() {
				ports = append(ports, n.port)
			}
		}
		return ports
	})
}

// majority returns the first server (in the order of Servers) that more
// than half of the views name.
func (c *Cluster) majority(views []*clusterView, name func(*clusterView) []int) *Server {
	count := make([]int, len(c.servers))
	for _, v := range views {
		for _, p := range name(v) {
			if i, ok := c.byPort[p]; ok {
				count[i]++
			}
		}
	}
	for i, n := range count {
		if n > len(views)/2 {
			return c.servers[i]
		}
	}
	return nil
}

// FailoverMode selects how CLUSTER FAILOVER promotes a replica.
type FailoverMode string

const (
	// FailoverCoordinated: the master stops writes, the replica catches up
	// and takes over; the master must be reachable.
	FailoverCoordinated FailoverMode = ""
	// FailoverForce: no handshake with the master (it may be down); the
	// masters still vote.
	FailoverForce FailoverMode = "FORCE"
	// FailoverTakeover: no handshake and no vote; the replica takes a new
	// epoch on its own.
	FailoverTakeover FailoverMode = "TAKEOVER"
)

// Failover runs CLUSTER FAILOVER [FORCE|TAKEOVER] on replica, then waits
// until replica is a master serving slots and the cluster is healthy (see
// WaitHealthy), at most 30s.
func (c *Cluster) Failover(replica *Server, mode FailoverMode) error {
	i, ok := c.byPort[replica.port]
	if !ok || c.servers[i] != replica {
		return fmt.Errorf("redistest: failover: %s is not a server of this cluster", replica.Addr())
	}
	ctx, cancel := context.WithTimeout(context.Background(), clusterTimeout)
	defer cancel()
	args := []any{"CLUSTER", "FAILOVER"}
	if mode != FailoverCoordinated {
		args = append(args, string(mode))
	}
	if err := c.admin[i].Do(ctx, args...).Err(); err != nil {
		return fmt.Errorf("redistest: failover %s: %w", replica.Addr(), err)
	}
	err := c.poll(ctx, func(ctx context.Context) error {
		v, err := c.view(ctx, i)
		switch {
		case err != nil:
			return err
		case v.role != "master":
			return fmt.Errorf("%s is still a replica", replica.Addr())
		case !slices.ContainsFunc(v.slots, func(r slotRange) bool { return r.port == replica.port }):
			return fmt.Errorf("%s serves no slot", replica.Addr())
		}
		return c.healthy(ctx)
	})
	if err != nil {
		return fmt.Errorf("redistest: failover %s: %w (logs: %s)", replica.Addr(), err, c.logDirs())
	}
	return nil
}

// MigrateSlot moves slot, with its keys, from the master that serves it
// to master to, as redis-cli --cluster reshard does: CLUSTER SETSLOT
// IMPORTING on to and MIGRATING on the source, MIGRATE of the slot's keys
// (their TTLs kept), then CLUSTER SETSLOT NODE on to, on the source and on
// every other running master (replicas learn it from them). Clients that still send the slot's commands
// to the source get MOVED from then on. MigrateSlot returns once every
// running server names to as the slot's master, at most 30s; it needs
// every master to answer.
func (c *Cluster) MigrateSlot(slot uint16, to *Server) error {
	ti, ok := c.byPort[to.port]
	if !ok || c.servers[ti] != to {
		return fmt.Errorf("redistest: migrate slot %d: %s is not a server of this cluster", slot, to.Addr())
	}
	ctx, cancel := context.WithTimeout(context.Background(), clusterTimeout)
	defer cancel()
	from := c.MasterOf(slot)
	if from == nil {
		return fmt.Errorf("redistest: migrate slot %d: the servers do not agree on its master", slot)
	}
	if from == to {
		return nil
	}
	fi := c.byPort[from.port]
	toID, err := c.startMigration(ctx, slot, fi, ti)
	if err != nil {
		return err
	}
	if err := c.migrateKeys(ctx, slot, c.admin[fi], to.port); err != nil {
		return err
	}
	if err := c.assignSlot(ctx, slot, fi, ti, toID); err != nil {
		return err
	}
	if err := c.poll(ctx, func(ctx context.Context) error { return c.seenOn(ctx, slot, to) }); err != nil {
		return fmt.Errorf("redistest: migrate slot %d to %s: %w", slot, to.Addr(), err)
	}
	return nil
}

// startMigration marks slot IMPORTING on server ti from fi, and MIGRATING
// on fi to ti; it returns ti's node ID.
func (c *Cluster) startMigration(ctx context.Context, slot uint16, fi, ti int) (toID string, err error) {
	src, dst := c.admin[fi], c.admin[ti]
	fromID, err := src.ClusterMyID(ctx).Result()
	if err != nil {
		return "", fmt.Errorf("redistest: migrate slot %d: %s: CLUSTER MYID: %w", slot, c.servers[fi].Addr(), err)
	}
	toID, err = dst.ClusterMyID(ctx).Result()
	if err != nil {
		return "", fmt.Errorf("redistest: migrate slot %d: %s: CLUSTER MYID: %w", slot, c.servers[ti].Addr(), err)
	}
	steps := []struct {
		a    *redis.Client
		args []any
	}{
		{dst, []any{"CLUSTER", "SETSLOT", slot, "IMPORTING", fromID}},
		{src, []any{"CLUSTER", "SETSLOT", slot, "MIGRATING", toID}},
	}
	for _, st := range steps {
		if err := st.a.Do(ctx, st.args...).Err(); err != nil {
			return "", fmt.Errorf("redistest: migrate slot %d: %v: %w", slot, st.args, err)
		}
	}
	return toID, nil
}

// migrateKeys MIGRATEs slot's keys from src to the server on port toPort,
// 100 at a time, their TTLs kept.
func (c *Cluster) migrateKeys(ctx context.Context, slot uint16, src *redis.Client, toPort int) error {
	for {
		keys, err := src.ClusterGetKeysInSlot(ctx, int(slot), 100).Result()
		if err != nil {
			return fmt.Errorf("redistest: migrate slot %d: CLUSTER GETKEYSINSLOT: %w", slot, err)
		}
		if len(keys) == 0 {
			return nil
		}
		args := []any{"MIGRATE", "127.0.0.1", toPort, "", 0, adminTimeout.Milliseconds(), "KEYS"}
		for _, k := range keys {
			args = append(args, k)
		}
		if err := src.Do(ctx, args...).Err(); err != nil {
			return fmt.Errorf("redistest: migrate slot %d: MIGRATE: %w", slot, err)
		}
	}
}

// assignSlot gives slot to toID (server ti) with CLUSTER SETSLOT NODE on
// ti, then on the source fi, then on every other running master.
func (c *Cluster) assignSlot(ctx context.Context, slot uint16, fi, ti int, toID string) error {
	// The target first, so that the source's MOVED never names a node
	// that does not know it owns the slot.
	order := []int{ti, fi}
	for i, s := range c.servers {
		if i != ti && i != fi && s.Running() {
			order = append(order, i)
		}
	}
	for k, i := range order {
		if k >= 2 {
			// SETSLOT is for masters; replicas learn from their masters.
			role, err := c.admin[i].Do(ctx, "ROLE").Slice()
			if err != nil {
				return fmt.Errorf("redistest: migrate slot %d: %s: ROLE: %w", slot, c.servers[i].Addr(), err)
			}
			if len(role) > 0 && role[0] != "master" {
				continue
			}
		}
		err := c.admin[i].Do(ctx, "CLUSTER", "SETSLOT", slot, "NODE", toID).Err()
		if err != nil {
			return fmt.Errorf("redistest: migrate slot %d: %s: CLUSTER SETSLOT NODE: %w", slot, c.servers[i].Addr(), err)
		}
	}
	return nil
}

// seenOn reports an error unless every running server names to as the
// master of slot.
func (c *Cluster) seenOn(ctx context.Context, slot uint16, to *Server) error {
	views, err := c.views(ctx)
	if err != nil {
		return err
	}
	for _, v := range views {
		if !slices.ContainsFunc(v.slots, func(r slotRange) bool {
			return int(slot) >= r.lo && int(slot) <= r.hi && r.port == to.port
		}) {
			return fmt.Errorf("127.0.0.1:%d does not see slot %d on %s yet", v.self, slot, to.Addr())
		}
	}
	return nil
}

// WaitHealthy waits, at most 30s, until the running servers form a healthy
// cluster: every one answers and reports cluster_state:ok, every replica's
// link to its master is up, they all agree on the slot map and the roles,
// none is seen as failed by another, and every slot is served by a running
// server. After a master is killed this is once its replica is promoted.
func (c *Cluster) WaitHealthy() error {
	ctx, cancel := context.WithTimeout(context.Background(), clusterTimeout)
	defer cancel()
	if err := c.poll(ctx, c.healthy); err != nil {
		return fmt.Errorf("redistest: cluster not healthy: %w (logs: %s)", err, c.logDirs())
	}
	return nil
}

// poll calls check until it returns nil or ctx ends; the error then says
// what check last reported.
func (c *Cluster) poll(ctx context.Context, check func(context.Context) error) error {
	ticker := time.NewTicker(clusterPoll)
	defer ticker.Stop()
	start := time.Now()
	for {
		err := check(ctx)
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("still after %v: %w", time.Since(start).Round(time.Millisecond), err)
		case <-ticker.C:
		}
	}
}

// allKnown reports whether every server knows every other one, past the
// handshake.
func (c *Cluster) allKnown(ctx context.Context) error {
	for i := range c.servers {
		v, err := c.view(ctx, i)
		if err != nil {
			return err
		}
		for _, s := range c.servers {
			n, ok := v.nodes[s.port]
			if !ok || n.has("handshake") || n.has("noaddr") {
				return fmt.Errorf("%s does not know %s yet", c.servers[i].Addr(), s.Addr())
			}
		}
	}
	return nil
}

// healthy is the condition of WaitHealthy.
func (c *Cluster) healthy(ctx context.Context) error {
	views, err := c.views(ctx)
	if err != nil {
		return err
	}
	if len(views) == 0 {
		return errors.New("no server is running")
	}
	running := map[int]bool{}
	for _, v := range views {
		running[v.self] = true
	}
	var want string
	for _, v := range views {
		addr := c.servers[c.byPort[v.self]].Addr()
		switch {
		case v.state != "ok":
			return fmt.Errorf("%s: cluster_state:%s", addr, v.state)
		case v.role == "slave" && !v.linkUp:
			return fmt.Errorf("%s: replica link to its master is down", addr)
		}
		for p := range running {
			if n, ok := v.nodes[p]; !ok || n.failed() || n.has("handshake") || n.has("noaddr") {
				return fmt.Errorf("%s sees %s as %v", addr, c.servers[c.byPort[p]].Addr(), n.flags)
			}
		}
		sig := v.signature(running)
		if want == "" {
			want = sig
		} else if sig != want {
			return fmt.Errorf("the servers disagree on the cluster: %q vs %q", want, sig)
		}
	}
	next := 0
	for _, r := range views[0].slots {
		if r.lo != next {
			return fmt.Errorf("slots %d-%d are not served", next, r.lo-1)
		}
		if !running[r.port] {
			return fmt.Errorf("slots %d-%d are served by 127.0.0.1:%d, which is not running", r.lo, r.hi, r.port)
		}
		next = r.hi + 1
	}
	if next != slotCount {
		return fmt.Errorf("slots %d-%d are not served", next, slotCount-1)
	}
	return nil
}

// views asks every running server for its view, concurrently. The error
// names the first server that did not answer.
func (c *Cluster) views(ctx context.Context) ([]*clusterView, error) {
	vs := make([]*clusterView, len(c.servers))
	errs := make([]error, len(c.servers))
	var wg sync.WaitGroup
	for i, s := range c.servers {
		if s.Running() {
			wg.Go(func() { vs[i], errs[i] = c.view(ctx, i) })
		}
	}
	wg.Wait()
	var out []*clusterView
	for _, v := range vs {
		if v != nil {
			out = append(out, v)
		}
	}
	return out, errors.Join(errs...)
}

// clusterView is one server's view of the cluster.
type clusterView struct {
	self   int    // port of the server that answered
	state  string // cluster_state
	role   string // "master" or "slave" (INFO replication)
	linkUp bool   // master_link_status:up, for a replica
	nodes  map[int]viewNode
	slots  []slotRange // sorted by lo, adjacent ranges of one master merged
}

// viewNode is one line of CLUSTER NODES.
type viewNode struct {
	port      int
	flags     []string
	replicaOf int // port of its master, 0 for a master
}

func (n viewNode) has(flag string) bool { return slices.Contains(n.flags, flag) }

func (n viewNode) failed() bool { return n.has("fail") || n.has("fail?") }

type slotRange struct{ lo, hi, port int }

// signature is what healthy servers must agree on: the slot map and the
// role of every running server.
func (v *clusterView) signature(running map[int]bool) string {
	var b strings.Builder
	for _, r := range v.slots {
		fmt.Fprintf(&b, "%d-%d:%d ", r.lo, r.hi, r.port)
	}
	ports := make([]int, 0, len(running))
	for p := range running {
		ports = append(ports, p)
	}
	slices.Sort(ports)
	for _, p := range ports {
		fmt.Fprintf(&b, "%d<%d ", p, v.nodes[p].replicaOf)
	}
	return b.String()
}

// view asks servers[i] for its view, each request bounded by adminTimeout.
func (c *Cluster) view(ctx context.Context, i int) (*clusterView, error) {
	s, a := c.servers[i], c.admin[i]
	ctx, cancel := context.WithTimeout(ctx, adminTimeout)
	defer cancel()
	info, err := a.ClusterInfo(ctx).Result()
	if err != nil {
		return nil, fmt.Errorf("%s: CLUSTER INFO: %w", s.Addr(), err)
	}
	nodes, err := a.ClusterNodes(ctx).Result()
	if err != nil {
		return nil, fmt.Errorf("%s: CLUSTER NODES: %w", s.Addr(), err)
	}
	repl, err := a.Info(ctx, "replication").Result()
	if err != nil {
		return nil, fmt.Errorf("%s: INFO replication: %w", s.Addr(), err)
	}
	v, err := parseNodes(nodes)
	if err != nil {
		return nil, fmt.Errorf("%s: CLUSTER NODES: %w", s.Addr(), err)
	}
	v.self = s.port
	v.state = InfoField(info, "cluster_state")
	v.role = InfoField(repl, "role")
	v.linkUp = InfoField(repl, "master_link_status") == "up"
	return v, nil
}

// parseNodes reads a CLUSTER NODES reply:
// <id> <ip:port@cport[,hostname]> <flags> <master> <ping> <pong> <epoch> <link> <slot>...
func parseNodes(reply string) (*clusterView, error) {
	v := &clusterView{nodes: map[int]viewNode{}}
	ids := map[string]int{}
	masters := map[int]string{}
	for line := range strings.Lines(reply) {
		f := strings.Fields(line)
		if len(f) < 8 {
			continue
		}
		hostPort, _, _ := strings.Cut(f[1], "@")
		_, ps, _ := strings.Cut(hostPort, ":")
		port, err := strconv.Atoi(ps)
		if err != nil {
			return nil, fmt.Errorf("bad address in %q", line)
		}
		ids[f[0]] = port
		n := viewNode{port: port, flags: strings.Split(f[2], ",")}
		if n.has("slave") {
			masters[port] = f[3]
		}
		if n.has("master") {
			for _, sl := range f[8:] {
				if strings.HasPrefix(sl, "[") {
					continue // a slot being imported or migrated
				}
				los, his, isRange := strings.Cut(sl, "-")
				if !isRange {
					his = los
				}
				lo, err1 := strconv.Atoi(los)
				hi, err2 := strconv.Atoi(his)
				if err1 != nil || err2 != nil {
					return nil, fmt.Errorf("bad slot range in %q", line)
				}
				v.slots = append(v.slots, slotRange{lo, hi, port})
			}
		}
		v.nodes[port] = n
	}
	for port, id := range masters {
		n := v.nodes[port]
		n.replicaOf = ids[id]
		v.nodes[port] = n
	}
	slices.SortFunc(v.slots, func(a, b slotRange) int { return a.lo - b.lo })
	merged := v.slots[:0]
	for _, r := range v.slots {
		if k := len(merged) - 1; k >= 0 && merged[k].port == r.port && merged[k].hi+1 == r.lo {
			merged[k].hi = r.hi
			continue
		}
		merged = append(merged, r)
	}
	v.slots = merged
	return v, nil
}

// logDirs lists the servers' log files, for error messages.
func (c *Cluster) logDirs() string {
	paths := make([]string, len(c.servers))
	for i, s := range c.servers {
		paths[i] = s.logPath
	}
	return strings.Join(paths, " ")
}
