package redleaseotel_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	redleaseotel "github.com/redlease/redlease/contrib/otel"
	"github.com/redlease/redlease/election"
	"github.com/redlease/redlease/internal/testing/adaptertest"
	"github.com/redlease/redlease/internal/testing/testnodes"
	"github.com/redlease/redlease/redlock"
)

func TestMain(m *testing.M) { testnodes.Main(m) }

// collect reads every metric of the reader.
func collect(t *testing.T, r *sdkmetric.ManualReader) map[string]metricdata.Metrics {
	t.Helper()
	var rm metricdata.ResourceMetrics
	require.NoError(t, r.Collect(context.Background(), &rm))
	out := map[string]metricdata.Metrics{}
	for _, sm := range rm.ScopeMetrics {
		assert.Equal(t, redleaseotel.MeterName, sm.Scope.Name)
		for _, m := range sm.Metrics {
			out[m.Name] = m
		}
	}
	return out
}

// matches reports whether set has every attribute of want.
func matches(set attribute.Set, want map[string]string) bool {
	for k, v := range want {
		if got, ok := set.Value(attribute.Key(k)); !ok || got.AsString() != v {
			return false
		}
	}
	return true
}

// sum returns the value of the counter's or gauge's point with the given
// attributes, or the count of the histogram's; -1 when there is none.
func sum(t *testing.T, ms map[string]metricdata.Metrics, name string, want map[string]string) int64 {
	t.Helper()
	switch d := ms[name].Data.(type) {
	case metricdata.Sum[int64]:
		for _, p := range d.DataPoints {
			if matches(p.Attributes, want) {
				return p.Value
			}
		}
	case metricdata.Gauge[int64]:
		for _, p := range d.DataPoints {
			if matches(p.Attributes, want) {
				return p.Value
			}
		}
	case metricdata.Histogram[float64]:
		for _, p := range d.DataPoints {
			if matches(p.Attributes, want) {
				if name == "redlease.operation.duration" {
					assert.Equal(t, redleaseotel.Buckets, p.Bounds)
				}
				return int64(p.Count)
			}
		}
	}
	return -1
}

// A real client's events, read through the SDK's ManualReader.
func TestHooksOnManualReader(t *testing.T) {
	ctx := context.Background()
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	t.Cleanup(func() { _ = mp.Shutdown(ctx) })
	h, err := redleaseotel.New(mp)
	require.NoError(t, err)

	leader := func() int64 {
		return sum(t, collect(t, reader), "redlease.leader", map[string]string{"election": adaptertest.Election})
	}
	adaptertest.Scenario(t, h.Observe, adaptertest.Checks{
		Ops: func() {
			got := collect(t, reader)
			events := func(op, outcome string) int64 {
				return sum(t, got, "redlease.events", map[string]string{"op": op, "outcome": outcome})
			}
			assert.Equal(t, int64(1), events("acquire", "ok"))
			assert.Equal(t, int64(1), events("acquire", "busy"))
			assert.Equal(t, int64(1), events("extend", "ok"))
			assert.Equal(t, int64(1), events("release", "ok"))
			assert.Equal(t, int64(1), sum(t, got, "redlease.operation.duration", map[string]string{"op": "extend", "outcome": "ok"}))
			assert.Equal(t, "s", got["redlease.operation.duration"].Unit)
		},
		NodeDown: func(node string) {
			require.Eventually(t, func() bool {
				return sum(t, collect(t, reader), "redlease.node.errors", map[string]string{"node": node}) >= 1
			}, 10*time.Second, time.Millisecond)
		},
		Spare: func() {
			got := collect(t, reader)
			assert.GreaterOrEqual(t, sum(t, got, "redlease.extend.spare", map[string]string{"spare": "1"}), int64(2),
				"the extends on 3 of 3 nodes")
			assert.GreaterOrEqual(t, sum(t, got, "redlease.extend.spare", map[string]string{"spare": "0"}), int64(1),
				"an extend on 2 of 3 nodes")
			assert.Equal(t, "{extend}", got["redlease.extend.spare"].Unit)
		},
		Elected: func() { assert.Equal(t, int64(1), leader()) },
		Demoted: func() {
			assert.Equal(t, int64(0), leader())
			assert.Equal(t, int64(1), sum(t, collect(t, reader), "redlease.events", map[string]string{"op": "elected", "outcome": "ok"}))
		},
	})
	checkMargins(t, reader, h)
}

// checkMargins: after the scenario, every successful extend's validity
// left; the time with no leader before a term (none before the
// scenario's first: unknown); the split-brain alarm; the quarantines.
func checkMargins(t *testing.T, reader *sdkmetric.ManualReader, h *redleaseotel.Hooks) {
	got := collect(t, reader)
	assert.GreaterOrEqual(t, sum(t, got, "redlease.extend.validity_left", nil), int64(3))
	assert.Equal(t, "s", got["redlease.extend.validity_left"].Unit)
	assert.Equal(t, int64(-1), sum(t, got, "redlease.leaderless", nil), "the first term knew of no gap")
	h.Observe(redlock.Event{Kind: election.EventElected, Key: "e", Duration: 150 * time.Millisecond, Outcome: "ok"})
	// The alarm (forced for real in election's TestIntegrationSplitBrainAlarm).
	h.Observe(redlock.Event{Kind: redlock.EventSplitBrain, Key: "e", Evidence: "overlap", Err: errors.New("granted twice"), Outcome: "error"})
	got = collect(t, reader)
	assert.Equal(t, int64(1), sum(t, got, "redlease.leaderless", map[string]string{"election": "e"}))
	assert.Equal(t, int64(1), sum(t, got, "redlease.split_brain", map[string]string{"election": "e", "evidence": "overlap"}))
	assert.Equal(t, "{alarm}", got["redlease.split_brain"].Unit)

	// Quarantines: the scenario's brand-new nodes were quarantined at New,
	// then voted after Bootstrap.
	assert.Equal(t, int64(0), sum(t, got, "redlease.node.quarantined", nil))
	h.Observe(redlock.Event{Kind: redlock.EventQuarantine, Node: "x", Err: errors.New("quarantined"), Outcome: "error"})
	assert.Equal(t, int64(1), sum(t, collect(t, reader), "redlease.node.quarantined", map[string]string{"node": "x"}))
	// A server clock seen jump (for real in lease's TestIntegrationClockJumpDemotesHolder), and run slow.
	h.Observe(redlock.Event{Kind: redlock.EventQuarantine, Node: "y", Evidence: "clock_fast", Err: errors.New("jumped"), Outcome: "error"})
	h.Observe(redlock.Event{Kind: redlock.EventNodeError, Node: "y", Evidence: "clock_slow", Err: errors.New("slow"), Outcome: "error"})
	got = collect(t, reader)
	assert.Equal(t, int64(1), sum(t, got, "redlease.clock.anomalies", map[string]string{"node": "y", "evidence": "clock_fast"}))
	assert.Equal(t, int64(1), sum(t, got, "redlease.clock.anomalies", map[string]string{"node": "y", "evidence": "clock_slow"}))
	assert.Equal(t, int64(1), sum(t, got, "redlease.node.quarantined", map[string]string{"node": "y"}))
}
