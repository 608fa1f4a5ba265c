package redlock

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlease/redlease/internal/testing/testnodes"
)

func TestConfiguredName(t *testing.T) {
	plain := redis.NewClient(&redis.Options{Addr: "10.0.0.1:6379"})
	failover := redis.NewFailoverClient(&redis.FailoverOptions{MasterName: "g1", SentinelAddrs: []string{"10.0.0.9:26379"}})
	cluster := redis.NewClusterClient(&redis.ClusterOptions{Addrs: []string{"10.0.0.2:7000", "10.0.0.3:7000"}})
	ring := redis.NewRing(&redis.RingOptions{Addrs: map[string]string{"b": "10.0.0.5:6379", "a": "10.0.0.4:6379"}})
	for _, c := range []interface{ Close() error }{plain, failover, cluster, ring} {
		t.Cleanup(func() { _ = c.Close() })
	}
	for _, tc := range []struct {
		c     redis.UniversalClient
		name  string
		fixed bool
	}{
		{plain, "10.0.0.1:6379", true},
		{failover, "failover#2", false},
		{cluster, "cluster(10.0.0.2:7000,10.0.0.3:7000)", true},
		{ring, "ring(10.0.0.4:6379,10.0.0.5:6379)", true},
		{wrapped{plain}, "node#2", false},
	} {
		name, fixed := configuredName(tc.c, 2)
		assert.Equal(t, tc.name, name)
		assert.Equal(t, tc.fixed, fixed, tc.name)
	}
}

// wrapped is a client type redlock does not know.
type wrapped struct{ redis.UniversalClient }

// failoverLike is a client built as redis.NewFailoverClient builds one (the
// address "FailoverClient", a dialer that finds the server) that dials
// addr, as a Sentinel group's client dials its group's master.
func failoverLike(t *testing.T, addr string) *redis.Client {
	c := redis.NewClient(&redis.Options{Addr: failoverAddr, MaxRetries: -1,
		Dialer: func(ctx context.Context, network, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, network, addr)
		}})
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// Clients of Sentinel groups all have the address "FailoverClient": New
// must not take them for one server, and names them by position.
func TestNewAcceptsFailoverClients(t *testing.T) {
	ms, _ := testnodes.Minis(t, 3)
	var nodes []redis.UniversalClient
	for _, m := range ms {
		nodes = append(nodes, failoverLike(t, m.Addr()))
	}
	c := newClient(t, unitCfg, nodes)
	// miniredis has neither CLIENT INFO nor run_id: the names stay the
	// positions (a real server adds the address; see the Sentinel tests).
	assert.Equal(t, []string{"failover#0", "failover#1", "failover#2"}, c.Internal().Nodes())
	l, err := c.TryAcquire(context.Background(), "k", 5*time.Second)
	require.NoError(t, err)
	err = l.Release(context.Background())
	require.NoError(t, err)

	// One client given twice is one server, whatever its address says
	// (miniredis has no run_id to tell).
	_, err = New(context.Background(), unitCfg, nodes[0], nodes[1], nodes[0])
	require.ErrorIs(t, err, ErrInvalidArgument)
	assert.Contains(t, err.Error(), "nodes 0 and 2 are the same client")
}

// A node that forgot its data is logged once at WARN when an answer first
// shows its new marker, and its floor raise once at INFO, however many
// attempts see it quarantined (they were logged on every attempt).
func TestForgetfulNodeLoggedOnce(t *testing.T) {
	ctx := context.Background()
	ms, nodes := testnodes.Minis(t, 3)
	var logs testnodes.LogBuffer
	cfg := unitCfg
	cfg.MaxTTL = 5 * time.Second
	cfg.Logger = hclog.New(&hclog.LoggerOptions{Output: &logs, Level: hclog.Info})
	c := newClient(t, cfg, nodes)
	node0 := "node=" + ms[0].Addr()

	ms[0].FlushAll()
	for i := range 20 {
		l, err := c.TryAcquire(ctx, "k", 4*time.Second)
		require.NoError(t, err, "attempt %d: nodes 1 and 2 vote", i)
		err = l.Release(ctx)
		require.NoError(t, err)
	}
	require.Eventually(t, func() bool { return ms[0].HGet(markerKey, "ok") == "1" }, 5*time.Second, 5*time.Millisecond)
	c.Close() // waits for the background raises
	assert.Equal(t, 1, logs.Count("[WARN]", "new quarantine marker", node0), logs.String())
	assert.Equal(t, 1, logs.Count("[INFO]", "fencing floor raised", node0), logs.String())
	assert.Zero(t, logs.Count("[WARN]", "new quarantine marker", "node="+ms[1].Addr()))

	// A second loss is a second event.
	var logs2 testnodes.LogBuffer
	cfg.Logger = hclog.New(&hclog.LoggerOptions{Output: &logs2, Level: hclog.Info})
	c2 := newClient(t, cfg, nodes)
	ms[0].FlushAll()
	for range 5 {
		l, err := c2.TryAcquire(ctx, "k", 4*time.Second)
		require.NoError(t, err)
		_ = l.Release(ctx)
	}
	ms[0].SetTime(time.Now().Add(time.Second)) // another created
	ms[0].FlushAll()
	for range 5 {
		l, err := c2.TryAcquire(ctx, "k", 4*time.Second)
		require.NoError(t, err)
		_ = l.Release(ctx)
	}
	c2.Close()
	assert.Equal(t, 2, logs2.Count("[WARN]", "new quarantine marker", node0), logs2.String())
}
