package faults

import (
	"context"
	"os"
	"testing"
	"time"
)

// soakDefault is the soak's length in `make test`; REDLEASE_SOAK (a Go
// duration) lengthens it, never shortens it.
const soakDefault = 30 * time.Second

func soakLength(t *testing.T) time.Duration {
	d := soakDefault
	if v := os.Getenv("REDLEASE_SOAK"); v != "" {
		e, err := time.ParseDuration(v)
		if err != nil {
			t.Fatalf("REDLEASE_SOAK: %v", err)
		}
		d = max(d, e)
	}
	return d
}

// scSoak: 4 candidates on 3 servers, leaders resigning now and then, and a
// random fault every 5 seconds (seeded): the leader cut off, killed or
// paused; a server paused, killed and restarted empty, or flushed; a node
// slowed over the TTL, or two; a node's links flapping; every connection
// reset. At most one server forgets at a time (5s apart, MaxTTL 2s), the
// fault model redlock promises safety under. Killed candidates are
// replaced by new processes. Two candidates use go-redis clients with
// their default options, two with short timeouts and no retries.
func scSoak(t *testing.T, bin string) { soak(t, bin, false) }

// scSoakCluster: the soak on a Redis Cluster of 3 masters with a replica
// each (REDLEASE_SOAK_CLUSTER=1, `make soak CLUSTER=1`): the same faults on
// its six servers, where a master paused or killed for longer than the
// cluster's node timeout is failed over to its replica, a server is
// restarted with its cluster identity (empty: it rejoins, as a replica if
// its slots moved), and FLUSHALL hits masters only.
func scSoakCluster(t *testing.T, bin string) { soak(t, bin, true) }

// envSoakCluster adds the cluster soak to TestFaults.
const envSoakCluster = "REDLEASE_SOAK_CLUSTER"

// soakFault is one fault of the soak; run returns false when it does not
// apply now.
type soakFault struct {
	name string
	run  func() bool
}

func soak(t *testing.T, bin string, cluster bool) {
	length := soakLength(t)
	r := newRig(t, bin, rigOptions{cands: 4, resignAfter: 2 * time.Second, redisDefaults: 2, cluster: cluster})
	r.start()
	faults := append(append(r.leaderFaults(), r.serverFaults(t, cluster)...), r.nodeFaults()...)
	if cluster {
		faults = append(faults, r.clusterSoakFaults()...)
	}
	start := time.Now()
	var done []string
	for time.Since(start) < length {
		next := time.Now().Add(5 * time.Second)
		for {
			f := faults[r.rng.IntN(len(faults))]
			if f.run() {
				done = append(done, f.name)
				break
			}
		}
		time.Sleep(time.Until(next))
	}
	t.Logf("soak of %s: %d faults: %v", length, len(done), done)
	r.leader() // somebody leads once the faults are over
	rep := r.finish()
	r.expect(rep)
	r.noStrayKeys(ttl + time.Second)
}

// leaderFaults are the soak's faults of the leader: cut off, killed (and
// replaced by a new process), paused.
func (r *rig) leaderFaults() []soakFault {
	// onLeader makes a fault of f, which it runs on the leader (no fault
	// when there is none within 2s).
	onLeader := func(f func(l *proc)) func() bool {
		return func() bool {
			l, _, ok := r.tryLeader(2 * time.Second)
			if ok {
				f(l)
			}
			return ok
		}
	}
	return []soakFault{
		{"partition-leader", onLeader(func(l *proc) {
			r.mark("soak: partition leader %s for 1.5s", l.id)
			for _, p := range l.slot.proxies {
				p.Partition()
			}
			time.Sleep(1500 * time.Millisecond)
			for _, p := range l.slot.proxies {
				p.Heal()
			}
		})},
		{"kill-leader", onLeader(func(l *proc) {
			r.kill(l)
			time.Sleep(time.Second)
			r.spawn(l.slot)
		})},
		{"pause-leader", onLeader(func(l *proc) {
			r.pause(l)
			time.Sleep(2 * ttl)
			r.resume(l)
		})},
	}
}

// serverFaults are the soak's faults of a server: paused, killed and
// restarted empty, flushed.
func (r *rig) serverFaults(t *testing.T, cluster bool) []soakFault {
	ctx := context.Background()
	return []soakFault{
		{"pause-server", func() bool {
			v := r.rng.IntN(r.o.nodes)
			r.pauseServer(v)
			time.Sleep(2 * ttl)
			r.resumeServer(v)
			return true
		}},
		{"kill9-server-restart-empty", func() bool {
			v := r.rng.IntN(r.o.nodes)
			if err := r.server(v).Kill(); err != nil {
				t.Error(err)
			}
			// A cluster node keeps its identity (nodes.conf): wiped, it
			// would come back outside the cluster.
			if err := r.server(v).Restart(!cluster); err != nil {
				t.Error(err)
			}
			r.mark("soak: kill -9 server %d, restarted empty", v)
			return true
		}},
		{"flushall", func() bool {
			v := r.rng.IntN(r.o.nodes)
			if cluster && infoField(t, r.admin[v], "replication", "role") != "master" {
				return false // a replica refuses writes
			}
			if err := r.admin[v].FlushAll(ctx).Err(); err != nil {
				t.Error(err)
			}
			r.mark("soak: FLUSHALL server %d", v)
			return true
		}},
	}
}

// nodeFaults are the soak's faults of the links: one or two nodes slowed
// over the TTL, a node's links flapping, every connection reset.
func (r *rig) nodeFaults() []soakFault {
	return []soakFault{
		{"latency", func() bool {
			vs := r.rng.Perm(r.o.nodes)[:1+r.rng.IntN(2)]
			r.mark("soak: reply latency 1.5s on nodes %v for 2s", vs)
			for _, v := range vs {
				for _, p := range r.nodeProxies(v) {
					p.SetLatency(1500 * time.Millisecond)
				}
			}
			time.Sleep(2 * time.Second)
			for _, v := range vs {
				for _, p := range r.nodeProxies(v) {
					p.SetLatency(0)
				}
			}
			return true
		}},
		{"flap-node", func() bool {
			n := r.rng.IntN(r.o.nodes)
			r.mark("soak: node %d's links flap for 2s", n)
			end := time.Now().Add(2 * time.Second)
			for time.Now().Before(end) {
				for _, p := range r.nodeProxies(n) {
					p.Partition()
				}
				time.Sleep(time.Duration(50+r.rng.IntN(200)) * time.Millisecond)
				for _, p := range r.nodeProxies(n) {
					p.Heal()
				}
				time.Sleep(time.Duration(50+r.rng.IntN(200)) * time.Millisecond)
			}
			return true
		}},
		{"reset-peer", func() bool {
			r.mark("soak: every connection reset 5 times")
			r.resetAll(5)
			return true
		}},
	}
}
