package doctor_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlease/redlease/doctor"
	"github.com/redlease/redlease/internal/testing/redistest"
)

// runSentinel checks one Sentinel group's node, as fo reaches it.
func runSentinel(t *testing.T, fo *redis.FailoverOptions) doctor.Finding {
	t.Helper()
	c := redis.NewFailoverClient(fo)
	t.Cleanup(func() { _ = c.Close() })
	rep, err := doctor.Run(context.Background(), fast(), []doctor.Node{{Name: fo.MasterName, Client: c, Sentinel: fo}})
	require.NoError(t, err)
	return finding(t, rep, 0, doctor.CheckSentinel)
}

// A Sentinel group: its three sentinels answer, name the master, and can
// order a failover (CKQUORUM); one of them given is enough to ask. With
// two of the three stopped, the last one cannot (no majority of usable
// sentinels, once it sees them down). (A node that is not a Sentinel
// group has no such finding: TestDoctorHealthy.)
func TestDoctorSentinel(t *testing.T) {
	m := redistest.Start(t, 1).Server(0)
	redistest.StartReplica(t, m.Addr())
	ss := redistest.StartSentinels(t, 3, map[string]string{"g0": m.Addr()})
	fo := func(addrs ...string) *redis.FailoverOptions {
		return &redis.FailoverOptions{MasterName: "g0", SentinelAddrs: addrs, MaxRetries: -1,
			DialTimeout: time.Second, DialerRetries: 1}
	}

	f := runSentinel(t, fo(ss.Addrs()...))
	assert.Equal(t, doctor.OK, f.Severity, "%+v", f)
	assert.Contains(t, f.Found, "3 of 3 sentinels answered, all naming the master "+m.Addr()+"; OK 3 usable Sentinels")
	f = runSentinel(t, fo(ss.Addrs()[0]))
	assert.Equal(t, doctor.OK, f.Severity, "%+v", f)

	require.NoError(t, ss.Sentinel(1).Stop())
	require.NoError(t, ss.Sentinel(2).Stop())
	redistest.Eventually(t, 15*time.Second, 100*time.Millisecond, "the last sentinel unable to order a failover", func() error {
		if f = runSentinel(t, fo(ss.Addrs()...)); f.Severity == doctor.OK {
			return fmt.Errorf("still ok: %s", f.Found)
		}
		return nil
	})
	assertRisky(t, f, doctor.Warn, "1 of 3 sentinels answered, naming the master "+m.Addr()+", and none can order a failover")
	assert.Contains(t, f.Found, "NOQUORUM")
	assert.Contains(t, f.Risk, "no failover")
}

// Sentinels that know no group of that name: none answers about it, and
// the node itself is unreachable (the failover client finds no master).
func TestDoctorSentinelUnknownGroup(t *testing.T) {
	m := redistest.Start(t, 1).Server(0)
	ss := redistest.StartSentinels(t, 1, map[string]string{"g0": m.Addr()})
	f := runSentinel(t, &redis.FailoverOptions{MasterName: "nope", SentinelAddrs: ss.Addrs(), MaxRetries: -1})
	assertRisky(t, f, doctor.Warn, "none of 1 sentinels answered about group nope")
}
