package doctor_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/redlease/redlease/doctor"
	"github.com/redlease/redlease/internal/testing/redistest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// The tests run the checks on real servers (internal/testing/redistest),
// each with the misconfiguration made by CONFIG SET or ACL SETUSER and
// undone, with short sampling (fast) and a NodeTimeout far above a
// loaded machine's round trips, so that only the check under test warns.

// fast is a Config of short samples.
func fast() doctor.Config {
	return doctor.Config{Pings: 5, ClockInterval: 150 * time.Millisecond, NodeTimeout: 5 * time.Second, TTL: 30 * time.Second}
}

// start starts one server and returns it with an admin client.
func start(t *testing.T, opts ...redistest.Options) (*redistest.Server, *redis.Client) {
	t.Helper()
	s := redistest.Start(t, 1, opts...).Server(0)
	return s, s.Client(t)
}

// run checks the nodes at addrs (one client each, as user:password when
// user is not empty).
func run(t *testing.T, cfg doctor.Config, user string, addrs ...string) *doctor.Report {
	t.Helper()
	var nodes []doctor.Node
	for _, a := range addrs {
		o := &redis.Options{Addr: a, MaxRetries: -1, DialTimeout: time.Second, DialerRetries: 1}
		if user != "" {
			o.Username, o.Password = user, "pw"
		}
		c := redis.NewClient(o)
		t.Cleanup(func() { _ = c.Close() })
		nodes = append(nodes, doctor.Node{Name: a, Client: c})
	}
	rep, err := doctor.Run(context.Background(), cfg, nodes)
	require.NoError(t, err)
	require.Len(t, rep.Nodes, len(addrs))
	return rep
}

// finding returns node i's finding id; it fails the test without one.
func finding(t *testing.T, rep *doctor.Report, i int, id string) doctor.Finding {
	t.Helper()
	for _, f := range rep.Nodes[i].Findings {
		if f.ID == id {
			return f
		}
	}
	t.Fatalf("node %d has no %s finding: %+v", i, id, rep.Nodes[i].Findings)
	return doctor.Finding{}
}

// configSet runs CONFIG SET name value and undoes it on cleanup.
func configSet(t *testing.T, c *redis.Client, name, value string) {
	t.Helper()
	ctx := context.Background()
	old, err := c.ConfigGet(ctx, name).Result()
	require.NoError(t, err)
	require.NoError(t, c.ConfigSet(ctx, name, value).Err())
	t.Cleanup(func() { _ = c.ConfigSet(ctx, name, old[name]).Err() })
}

// assertRisky checks a warning's or failure's risk and fix are there.
func assertRisky(t *testing.T, f doctor.Finding, want doctor.Severity, found string) {
	t.Helper()
	assert.Equal(t, want, f.Severity, "%+v", f)
	assert.Contains(t, f.Found, found)
	assert.NotEmpty(t, f.Risk)
	assert.NotEmpty(t, f.Fix)
}

// A server as redlease wants it (AOF with appendfsync always, noeviction,
// no replicas): every finding ok, but the version's info and the marker's
// (redlease never used it); every check reported, in order.
func TestDoctorHealthy(t *testing.T) {
	s, _ := start(t, redistest.Options{Persistence: redistest.PersistAOF})
	rep := run(t, fast(), "", s.Addr())
	assert.Equal(t, doctor.Info, rep.Worst, "%+v", rep.Nodes[0].Findings)
	assert.True(t, rep.Nodes[0].Reachable)
	assert.Regexp(t, `^(redis|valkey) \d+\.`, rep.Nodes[0].Server)
	var ids []string
	for _, f := range rep.Nodes[0].Findings {
		ids = append(ids, f.ID)
		if f.ID != doctor.CheckVersion && f.ID != doctor.CheckMarker {
			assert.Equal(t, doctor.OK, f.Severity, "%+v", f)
		}
	}
	assert.Equal(t, []string{"reachable", "persistence", "appendfsync", "eviction", "replicas", "role", "version",
		"scripting", "acl", "marker", "max-ttl", "clock-offset", "clock-rate", "latency", "distinct"}, ids)
	assert.Contains(t, finding(t, rep, 0, doctor.CheckMarker).Found, "no marker")
	assert.Contains(t, finding(t, rep, 0, doctor.CheckACL).Found, "ACL DRYRUN")
}

// Persistence against the quarantine: none is info with the quarantine
// on and a failure without; appendfsync everysec and no warn (fail without
// the quarantine); always is ok.
func TestDoctorPersistence(t *testing.T) {
	s, c := start(t)
	rep := run(t, fast(), "", s.Addr())
	f := finding(t, rep, 0, doctor.CheckPersistence)
	assert.Equal(t, doctor.Info, f.Severity)
	assert.Contains(t, f.Found, "no persistence")
	noQ := fast()
	noQ.DisableQuarantine = true
	assertRisky(t, finding(t, run(t, noQ, "", s.Addr()), 0, doctor.CheckPersistence), doctor.Fail, "no persistence")

	configSet(t, c, "save", "900 1")
	assertRisky(t, finding(t, run(t, noQ, "", s.Addr()), 0, doctor.CheckPersistence), doctor.Fail, "RDB snapshots only")

	configSet(t, c, "appendonly", "yes")
	for _, fsync := range []string{"everysec", "no"} {
		configSet(t, c, "appendfsync", fsync)
		assertRisky(t, finding(t, run(t, fast(), "", s.Addr()), 0, doctor.CheckAppendfsync), doctor.Warn, "appendfsync "+fsync)
		assertRisky(t, finding(t, run(t, noQ, "", s.Addr()), 0, doctor.CheckAppendfsync), doctor.Fail, "appendfsync "+fsync)
	}
	configSet(t, c, "appendfsync", "always")
	rep = run(t, noQ, "", s.Addr())
	assert.Equal(t, doctor.OK, finding(t, rep, 0, doctor.CheckPersistence).Severity)
	assert.Equal(t, doctor.OK, finding(t, rep, 0, doctor.CheckAppendfsync).Severity)
}

// maxmemory-policy: allkeys-* and volatile-* fail (New refuses both), noeviction is ok.
func TestDoctorEviction(t *testing.T) {
	s, c := start(t)
	for policy, want := range map[string]doctor.Severity{"allkeys-lru": doctor.Fail, "allkeys-random": doctor.Fail,
		"volatile-ttl": doctor.Fail, "volatile-lru": doctor.Fail} {
		configSet(t, c, "maxmemory-policy", policy)
		assertRisky(t, finding(t, run(t, fast(), "", s.Addr()), 0, doctor.CheckEviction), want, policy)
	}
	configSet(t, c, "maxmemory-policy", "noeviction")
	assert.Equal(t, doctor.OK, finding(t, run(t, fast(), "", s.Addr()), 0, doctor.CheckEviction).Severity)
}

// A master with a replica and min-replicas-to-write 0 warns (ok with 1);
// the replica given as a node fails its role check.
func TestDoctorReplicasAndRole(t *testing.T) {
	m, c := start(t)
	r := redistest.StartReplica(t, m.Addr())
	redistest.Eventually(t, 10*time.Second, 20*time.Millisecond, "the replica seen by its master", func() error {
		if !redistest.InfoContains(context.Background(), c, "replication", "connected_slaves:1") {
			return assert.AnError
		}
		return nil
	})
	rep := run(t, fast(), "", m.Addr(), r.Addr())
	assertRisky(t, finding(t, rep, 0, doctor.CheckReplicas), doctor.Warn, "1 replicas, min-replicas-to-write 0")
	assert.Equal(t, doctor.OK, finding(t, rep, 0, doctor.CheckRole).Severity)
	assertRisky(t, finding(t, rep, 1, doctor.CheckRole), doctor.Fail, "role slave")
	assert.Equal(t, doctor.Fail, rep.Worst)

	configSet(t, c, "min-replicas-to-write", "1")
	assert.Equal(t, doctor.OK, finding(t, run(t, fast(), "", m.Addr()), 0, doctor.CheckReplicas).Severity)
}

// One server given twice (here one address twice; a proxy or a second
// name would be the same): the second fails, naming the first.
func TestDoctorDistinct(t *testing.T) {
	g := redistest.Start(t, 2)
	rep := run(t, fast(), "", g.Server(0).Addr(), g.Server(1).Addr(), g.Server(0).Addr())
	assert.Equal(t, doctor.OK, finding(t, rep, 0, doctor.CheckDistinct).Severity)
	assert.Equal(t, doctor.OK, finding(t, rep, 1, doctor.CheckDistinct).Severity)
	assertRisky(t, finding(t, rep, 2, doctor.CheckDistinct), doctor.Fail, "the same server as "+g.Server(0).Addr())
}

// Scripting: EVAL renamed away fails; the version is reported.
func TestDoctorScriptingAndVersion(t *testing.T) {
	s, _ := start(t, redistest.Options{Extra: []string{`rename-command EVAL ""`}})
	rep := run(t, fast(), "", s.Addr())
	assertRisky(t, finding(t, rep, 0, doctor.CheckScripting), doctor.Fail, "EVAL failed")
	v := finding(t, rep, 0, doctor.CheckVersion)
	assert.Equal(t, doctor.Info, v.Severity)
	assert.Regexp(t, `^(redis|valkey) \d+\.\d+\.\d+ \(redis_version \d`, v.Found)
}

// A node that does not answer fails, and counts as unreachable.
func TestDoctorUnreachable(t *testing.T) {
	s, _ := start(t)
	rep := run(t, fast(), "", s.Addr(), "127.0.0.1:1")
	assert.Equal(t, 1, rep.Reachable())
	assert.False(t, rep.Nodes[1].Reachable)
	assertRisky(t, finding(t, rep, 1, doctor.CheckReachable), doctor.Fail, "connection refused")
	assert.Len(t, rep.Nodes[1].Findings, 1)
}

// The server's clock against a client clock that is off: 10s ahead of the
// time of day warns (offset); one that runs 30% fast fails (rate), as a
// server clock 30% slow would.
func TestDoctorClock(t *testing.T) {
	s, _ := start(t)
	cfg := fast()
	cfg.Now = func() time.Time { return time.Now().Add(10 * time.Second) }
	rep := run(t, cfg, "", s.Addr())
	f := finding(t, rep, 0, doctor.CheckClockOffset)
	assertRisky(t, f, doctor.Warn, "server clock -")
	// TIME has microseconds, and the round trip's middle is an estimate.
	assert.Regexp(t, `server clock -(9\.9\d*|10(\.0\d*)?)s`, f.Found)
	assert.Equal(t, doctor.OK, finding(t, rep, 0, doctor.CheckClockRate).Severity)

	base := time.Now()
	cfg.Now = func() time.Time { return base.Add(time.Since(base) * 13 / 10) }
	rep = run(t, cfg, "", s.Addr())
	assertRisky(t, finding(t, rep, 0, doctor.CheckClockRate), doctor.Fail, "-2")
}

// Round trips above NodeTimeout warn, and so does a TTL mostly spent on
// drift and round trips.
func TestDoctorLatency(t *testing.T) {
	s, _ := start(t)
	cfg := fast()
	cfg.NodeTimeout = time.Nanosecond
	assertRisky(t, finding(t, run(t, cfg, "", s.Addr()), 0, doctor.CheckLatency), doctor.Warn, "p99")
	cfg = fast()
	cfg.TTL = 3 * time.Millisecond // its drift alone is 2ms
	f := finding(t, run(t, cfg, "", s.Addr()), 0, doctor.CheckLatency)
	assertRisky(t, f, doctor.Warn, "a 3ms TTL loses")
	assert.Contains(t, f.Risk, "over half the TTL")
}

// Accept lowers the named findings to info, keeping their severity
// before; a finding that cannot be accepted, or no finding, is refused.
func TestDoctorAccept(t *testing.T) {
	s, c := start(t)
	configSet(t, c, "appendonly", "yes")
	configSet(t, c, "appendfsync", "everysec")
	cfg := fast()
	cfg.Accept = []string{doctor.CheckAppendfsync}
	rep := run(t, cfg, "", s.Addr())
	f := finding(t, rep, 0, doctor.CheckAppendfsync)
	assert.Equal(t, doctor.Info, f.Severity)
	assert.True(t, f.Accepted)
	require.NotNil(t, f.Original)
	assert.Equal(t, doctor.Warn, *f.Original)
	assert.Equal(t, doctor.Info, rep.Worst)

	for _, id := range []string{"role", "nosuch"} {
		cfg.Accept = []string{id}
		_, err := doctor.Run(context.Background(), cfg, []doctor.Node{{Name: s.Addr(), Client: c}})
		require.ErrorIs(t, err, doctor.ErrInvalidArgument)
		assert.Contains(t, err.Error(), `"`+id+`"`)
	}
}

// secureRule is SECURITY.md's rule for the prefix app:.
const secureRule = "+evalsha +eval +script|load +get +mget +set +incr +pexpire +pexpireat +pttl +del +hget +hmget +hset +time +info|server +publish +subscribe +ping ~app:* ~{redlease}:marker &app:*:notice"

// aclUser makes the user doctor with password pw and rules, removed on
// cleanup.
func aclUser(t *testing.T, c *redis.Client, rules string) {
	t.Helper()
	ctx := context.Background()
	args := []any{"ACL", "SETUSER", "doctor", "reset", "on", ">pw"}
	for r := range strings.FieldsSeq(rules) {
		args = append(args, r)
	}
	require.NoError(t, c.Do(ctx, args...).Err())
	t.Cleanup(func() { _ = c.Do(ctx, "ACL", "DELUSER", "doctor").Err() })
}
