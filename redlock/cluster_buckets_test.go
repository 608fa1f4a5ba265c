package redlock_test

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlease/redlease/internal/clusterkey"
	"github.com/redlease/redlease/internal/testing/redistest"
	"github.com/redlease/redlease/internal/testing/testnodes"
	"github.com/redlease/redlease/redlock"
)

// Bucketed tags (docs/design.md §4.11) on a 6-master cluster with n=3 copies:
// lock traffic reaches every master, not only the 3 that the copies' fixed
// tags of one bucket would use.

// spreadKeys is how many distinct keys the spread test and benchmark take.
const spreadKeys = 3000

// scriptCalls reads EVALSHA + EVAL calls from each master's INFO
// commandstats.
func scriptCalls(t testing.TB, masters []*redistest.Server) []int64 {
	t.Helper()
	out := make([]int64, len(masters))
	for i, m := range masters {
		info, err := m.Client(t).Info(context.Background(), "commandstats").Result()
		require.NoError(t, err)
		for line := range strings.SplitSeq(info, "\r\n") {
			name, val, ok := strings.Cut(line, ":")
			if !ok || (name != "cmdstat_evalsha" && name != "cmdstat_eval") {
				continue
			}
			for f := range strings.SplitSeq(val, ",") {
				if v, ok := strings.CutPrefix(f, "calls="); ok {
					n, err := strconv.ParseInt(v, 10, 64)
					require.NoError(t, err)
					out[i] += n
				}
			}
		}
	}
	return out
}

// resetStats zeroes each master's command statistics.
func resetStats(t testing.TB, masters []*redistest.Server) {
	t.Helper()
	for _, m := range masters {
		require.NoError(t, m.Client(t).ConfigResetStat(context.Background()).Err())
	}
}

// spread reports each master's share of calls against the mean, as
// "127.0.0.1:7000 1502 (+0.3%)" lines, and the largest deviation.
func spread(masters []*redistest.Server, calls []int64) (string, float64) {
	var sum int64
	for _, c := range calls {
		sum += c
	}
	mean := float64(sum) / float64(len(calls))
	var b strings.Builder
	worst := 0.0
	for i, c := range calls {
		dev := (float64(c) - mean) / mean
		worst = max(worst, dev, -dev)
		fmt.Fprintf(&b, "%s %d (%+.1f%%)\n", masters[i].Addr(), c, 100*dev)
	}
	return b.String(), worst
}

// startSpreadCluster starts 6 masters and a bootstrapped NewCluster
// Client of 3 copies in buckets buckets (0: the default) over them.
func startSpreadCluster(t testing.TB, buckets int) (*redlock.Client, []*redistest.Server) {
	cl := redistest.StartCluster(t, 6, 0)
	cfg := clusterCfg
	cfg.Buckets = buckets
	if tt, ok := t.(*testing.T); ok {
		cfg.Logger = bufferLogger(tt, &testnodes.LogBuffer{T: tt})
	}
	c, err := redlock.NewCluster(context.Background(), cfg, newClusterClient(t, cl.Addrs()), 3)
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	require.NoError(t, c.Bootstrap(context.Background()))
	return c, cl.Masters()
}

func TestClusterSpreadOverEveryMaster(t *testing.T) {
	t.Parallel()
	c, masters := startSpreadCluster(t, 0) // DefaultBuckets
	_, shared := c.Placement(context.Background())
	require.False(t, shared, "the copies of each bucket on 3 different masters")
	resetStats(t, masters)
	cycleKeys(t, c, "spread-", spreadKeys)
	calls := scriptCalls(t, masters)
	table, worst := spread(masters, calls)
	t.Logf("scripts per master, %d keys acquired and released, n=3 B=%d:\n%s", spreadKeys, clusterkey.DefaultBuckets, table)
	for i, n := range calls {
		assert.Positive(t, n, "master %s idles", masters[i].Addr())
	}
	assert.LessOrEqual(t, worst, 0.25, "a master's share is more than 25%% off the mean:\n%s", table)
}

// BenchmarkClusterSpread acquires and releases spreadKeys distinct keys per
// iteration on a 6-master cluster, n=3, with one bucket (every lock on 3
// slots of 3 masters) and with DefaultBuckets, and prints each master's
// script calls against the mean. Figures taken on a loaded machine compare
// within one run only.
//
//	go test -run '^$' -bench ClusterSpread -benchtime 1x ./redlock/
func BenchmarkClusterSpread(b *testing.B) {
	for _, buckets := range []int{1, clusterkey.DefaultBuckets} {
		b.Run(fmt.Sprintf("B=%d", buckets), func(b *testing.B) {
			c, masters := startSpreadCluster(b, buckets)
			resetStats(b, masters)
			b.ResetTimer()
			for b.Loop() {
				cycleKeys(b, c, "spread-", spreadKeys)
			}
			b.StopTimer()
			calls := scriptCalls(b, masters)
			table, worst := spread(masters, calls)
			idle := 0
			for _, n := range calls {
				if n == 0 {
					idle++
				}
			}
			b.ReportMetric(float64(b.N*spreadKeys)/b.Elapsed().Seconds(), "locks/s")
			b.ReportMetric(100*worst, "max-dev-%")
			b.ReportMetric(float64(idle), "idle-masters")
			b.Logf("n=3 B=%d, scripts per master:\n%s", buckets, table)
		})
	}
}

// newClusterRefused returns NewCluster's refusal (ErrInvalidArgument) of a
// client of n copies with cfg on cl. NewCluster reads the layout key within max(1s,
// NodeTimeout); without an answer it logs so and lets the client start
// (every script checks the markers it meets). A host stall made it so once
// under make test's load: a client that started must have logged that, and
// NewCluster is tried again.
func newClusterRefused(t *testing.T, cfg redlock.Config, cl *redistest.Cluster, n int) error {
	t.Helper()
	var refused error
	waitForCond(t, "NewCluster's layout check", func() error {
		logs := &testnodes.LogBuffer{T: t}
		cfg.Logger = bufferLogger(t, logs)
		c, err := redlock.NewCluster(context.Background(), cfg, newClusterClient(t, cl.Addrs()), n)
		if errors.Is(err, redlock.ErrInvalidArgument) {
			refused = err
			return nil
		}
		if err != nil {
			return err // the cluster did not answer NewCluster's other calls either
		}
		_ = c.Close()
		require.Equal(t, 1, logs.Count("the layout of the cluster's clients could not be read"),
			"NewCluster started a client of another layout although the layout key answered:\n%s", logs.String())
		return errors.New("the layout key did not answer in time")
	})
	return refused
}

// Two layouts keep a key's copies in different slots and could grant it
// twice: a client with another layout than the cluster's is refused at
// NewCluster (the layout key), and a script that meets a marker of another
// layout refuses, naming both, with a final error.
func TestClusterLayoutRefused(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cl := redistest.StartCluster(t, 1, 0)
	cfg16 := clusterCfg
	cfg16.Buckets = 16
	a := newClusterLocker(t, cfg16, newClusterClient(t, cl.Addrs()), 3, true)

	for _, buckets := range []int{1, 8} {
		cfg := clusterCfg
		cfg.Buckets = buckets
		err := newClusterRefused(t, cfg, cl, 3)
		require.ErrorIs(t, err, redlock.ErrInvalidArgument)
		assert.Contains(t, err.Error(), "the cluster's clients use n=3 B=16")
		assert.Regexp(t, `this client has n=3 B=(1|8),`, err.Error())
	}
	err := newClusterRefused(t, clusterCfg, cl, 5)
	require.ErrorIs(t, err, redlock.ErrInvalidArgument)
	assert.Contains(t, err.Error(), "this client has n=5 B=16, the cluster's clients use n=3 B=16")

	// Another layout's markers in the slots of the key's copies (as if
	// the layout key had been lost and another layout had started there).
	const key = "job"
	for i := range 3 {
		tag := clusterkey.BucketTag(i, clusterkey.Bucket(key, 16), 3, 16)
		m := cl.MasterOf(clusterkey.Slot(tag)).Client(t)
		require.Equal(t, "n=3 B=16", m.HGet(ctx, "{"+tag+"}:marker", "l").Val(), "start-up recorded the layout in every marker")
		require.NoError(t, m.HSet(ctx, "{"+tag+"}:marker", "l", "n=5 B=4").Err())
	}
	_, err = a.Acquire(ctx, key, clusterTTL)
	require.ErrorIs(t, err, redlock.ErrNotAcquired)
	assert.True(t, redlock.IsFinal(err), "a retry meets the same marker: %v", err)
	assert.Regexp(t, `REDLEASE layout: \{rl[0-2]b[0-9]+-[0-9]+\}:marker belongs to cluster clients with n=5 B=4, this client has n=3 B=16`, err.Error())
	in, err := a.Inspect(ctx, key)
	require.ErrorIs(t, err, redlock.ErrNoHolder)
	for _, n := range in.Nodes {
		require.Error(t, n.Err)
		assert.Contains(t, n.Err.Error(), "belongs to cluster clients with n=5 B=4")
	}
}
