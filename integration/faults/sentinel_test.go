package faults

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlease/redlease/internal/testing/redistest"
)

// sentinels is a rig's Sentinel deployment: node i is group "g<i>", whose
// master starts as server i of the rig with replicas[i] replicating it.
type sentinels struct {
	ss       *redistest.Sentinels
	replicas []*redistest.Server
}

// startSentinels gives every server of g a replica and starts three
// sentinels that watch the groups (down after 1s).
func startSentinels(t *testing.T, g *redistest.Group) *sentinels {
	t.Helper()
	s := &sentinels{}
	masters := map[string]string{}
	for i, srv := range g.Servers() {
		s.replicas = append(s.replicas, redistest.StartReplica(t, srv.Addr()))
		masters[groupName(i)] = srv.Addr()
	}
	s.ss = redistest.StartSentinels(t, 3, masters)
	return s
}

func groupName(i int) string { return fmt.Sprintf("g%d", i) }

// logTail logs what each sentinel logged about group name, for a failed
// test's report.
func (s *sentinels) logTail(t *testing.T, name string) {
	t.Helper()
	for i := range s.ss.Addrs() {
		p := s.ss.Sentinel(i).LogPath()
		b, err := os.ReadFile(p)
		if err != nil {
			t.Logf("sentinel log %s: %v", p, err)
			continue
		}
		var lines []string
		for line := range strings.SplitSeq(string(b), "\n") {
			if strings.Contains(line, " "+name+" ") || strings.Contains(line, "tilt") {
				lines = append(lines, line)
			}
		}
		if len(lines) > 40 {
			lines = lines[len(lines)-40:]
		}
		t.Logf("sentinel log %s, the lines on %s:\n%s", p, name, strings.Join(lines, "\n"))
	}
}

// promoteWait bounds the sentinels' failover after the master's kill: a
// failover that a host stall aborts is tried again after twice
// failover-timeout (6s; redistest's default), and once, under an extra busy
// core, none was done within 10s.
const promoteWait = 30 * time.Second

// scSentinelFailover: each of the three nodes is a Sentinel group (master
// and replica, three sentinels), reached through FailoverClients, with
// leaders resigning often so that every node is asked for votes all the
// time. One group's master is killed -9: the sentinels promote its
// replica, the candidates' clients follow it, and the first acquisition
// there finds a marker written by another server and quarantines it (a
// marker of its own run_id). The old master comes back empty, the
// sentinels make it a replica of the promoted one, then SENTINEL FAILOVER
// moves the group back to it: its data was replaced by a full resync and
// its run_id is new, so it is quarantined too. Terms go on through both,
// C1-C4 hold, and every candidate logs each change of the group's server
// once at WARN.
func scSentinelFailover(t *testing.T, bin string) {
	r := newRig(t, bin, rigOptions{sentinel: true, resignAfter: 300 * time.Millisecond})
	r.start()
	ctx := context.Background()
	v := r.rng.IntN(r.o.nodes)
	name := groupName(v)
	master, repl := r.g.Server(v), r.sent.replicas[v]
	replica := adminClient(t, repl.Addr())
	masterRun, replRun := runID(t, r.admin[v]), runID(t, replica)
	l, el := r.leader()
	r.waitWrites(l, el.TS, 3)

	// Failover.
	require.NoError(t, master.Kill())
	killed := r.mark("kill -9 the master of group %s (%s)", name, master.Addr())
	require.NoError(t, r.sent.ss.WaitMaster(name, repl.Addr(), promoteWait))
	promoted := r.mark("the sentinels promoted %s in group %s", repl.Addr(), name)
	r.admin[v] = replica
	r.until(waitLong, "the promoted replica quarantined by a candidate", func() bool {
		return replica.HGet(ctx, markerKey, "r").Val() == replRun
	})
	r.mark("the promoted replica of group %s is quarantined (marker of its own run_id %.8s, was %.8s)", name, replRun, masterRun)
	r.waitTerms(3, killed, 3*waitLong)
	node := fmt.Sprintf(`node="failover#%d@`, v)
	r.everyCandidateLogs(node, 1)

	// The old master comes back, empty, as a replica.
	require.NoError(t, master.Restart(true))
	require.NoError(t, master.WaitReplicaOf(repl.Addr(), waitLong))
	require.NoError(t, r.sent.ss.WaitReplica(name, master.Addr(), waitLong))
	old := adminClient(t, master.Addr())
	backRun := runID(t, old)
	r.mark("the old master of group %s restarted empty; the sentinels made it a replica of %s", name, repl.Addr())

	// Failback. A sentinel that accepted SENTINEL FAILOVER may still not
	// carry it out: it aborts when the server it promotes does not report
	// its new role within failover-timeout (3s), and a sentinel in TILT
	// mode (its timer late by 2s on a loaded machine) does nothing for
	// 30s. An operator asks again; so does the test, while the group's
	// master has not moved, for up to a minute. (Failover asks the next
	// sentinel while one says INPROG.) Each request is a mark, and every
	// sentinel's lines on the group go to the test's log.
	failback := r.failBack(t, name, master.Addr())
	require.NoError(t, repl.WaitReplicaOf(master.Addr(), waitLong))
	r.admin[v] = old
	r.until(waitLong, "the old master quarantined by a candidate after the failback", func() bool {
		return old.HGet(ctx, markerKey, "r").Val() == backRun
	})
	back := r.mark("group %s failed back to %s, quarantined (run_id %.8s)", name, master.Addr(), backRun)
	r.waitTerms(3, failback, 3*waitLong)
	r.everyCandidateLogs(node, 2)

	rep := r.finish()
	r.expect(rep)
	t.Logf("group %s: replica promoted %s after the kill; failed back and quarantined %s after SENTINEL FAILOVER",
		name, gap(killed, promoted), gap(failback, back))

	r.checkChangeLogs(t, name, node, [2]string{repl.Addr(), master.Addr()}, [2]string{replRun, backRun})
}

// failBack asks the sentinels of group name to fail over back to master,
// again while its master has not moved, for up to a minute; it returns the
// mark of the request that moved it.
func (r *rig) failBack(t *testing.T, name, master string) (failback int64) {
	for deadline := time.Now().Add(time.Minute); ; {
		require.NoError(t, r.sent.ss.Failover(name, waitLong))
		failback = r.mark("SENTINEL FAILOVER %s", name)
		err := r.sent.ss.WaitMaster(name, master, waitLong)
		if err == nil {
			return failback
		}
		r.sent.logTail(t, name)
		require.True(t, time.Now().Before(deadline), "%v", err)
		require.NoError(t, r.sent.ss.WaitReplica(name, master, waitLong), "the failback moved something: not asked again")
	}
}

// checkChangeLogs checks one WARN line per candidate, node and event: the
// promoted replica, then the old master back (addrs, runs); and the floor
// raise once per event.
func (r *rig) checkChangeLogs(t *testing.T, name, node string, addrs, runs [2]string) {
	for _, sl := range r.slots {
		changed, raised := nodeLog(t, sl.cur.log, node)
		if assert.Len(t, changed, 2, "candidate %s: one WARN per change of group %s's server:\n%s", sl.cur.id, name, strings.Join(changed, "\n")) {
			assert.Contains(t, changed[0], node+addrs[0], "candidate %s names the promoted replica", sl.cur.id)
			assert.Contains(t, changed[0], "run_id="+runs[0][:12])
			assert.Contains(t, changed[1], node+addrs[1], "candidate %s names the old master", sl.cur.id)
			assert.Contains(t, changed[1], "run_id="+runs[1][:12])
		}
		assert.LessOrEqual(t, len(raised), 2, "candidate %s: the floor raise logged once per event:\n%s", sl.cur.id, strings.Join(raised, "\n"))
	}
}

// everyCandidateLogs waits until every candidate has logged n changes of
// the server of the node whose log key begins with node (a candidate
// sees a change at its first acquisition there after it).
func (r *rig) everyCandidateLogs(node string, n int) {
	r.t.Helper()
	// 3 x waitLong, as for the terms after each fault: a candidate hears
	// of the change only at its next request to the group (a standby
	// backing off after failed reads asks rarely); once seen by a clean-
	// clone run not to log within 10s.
	for _, sl := range r.slots {
		r.until(3*waitLong, fmt.Sprintf("candidate %s logging %d changes of %s...", sl.cur.id, n, node), func() bool {
			changed, _ := nodeLog(r.t, sl.cur.log, node)
			return len(changed) >= n
		})
	}
}

// nodeLog returns the lines of a candidate's log about node that say its
// server changed, and those that say its floor was raised.
func nodeLog(t *testing.T, path, node string) (changed, raised []string) {
	logb, err := os.ReadFile(path)
	require.NoError(t, err)
	for line := range strings.SplitSeq(string(logb), "\n") {
		switch {
		case !strings.Contains(line, node):
		case strings.Contains(line, "node is another server now"):
			assert.Contains(t, line, "[WARN]")
			changed = append(changed, line)
		case strings.Contains(line, "fencing floor raised"):
			raised = append(raised, line)
		}
	}
	return changed, raised
}
