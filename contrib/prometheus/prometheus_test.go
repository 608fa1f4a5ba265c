package redleaseprom_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	redleaseprom "github.com/redlease/redlease/contrib/prometheus"
	"github.com/redlease/redlease/election"
	"github.com/redlease/redlease/internal/testing/adaptertest"
	"github.com/redlease/redlease/internal/testing/testnodes"
	"github.com/redlease/redlease/redlock"
)

func TestMain(m *testing.M) { testnodes.Main(m) }

// value returns the value of the series of family name whose labels
// include want, from a Gather of reg: a counter's or gauge's value, a
// histogram's sample count; -1 when there is no such series.
func value(t *testing.T, reg *prometheus.Registry, name string, want map[string]string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	require.NoError(t, err)
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
	series:
		for _, m := range mf.GetMetric() {
			for k, v := range want {
				if !hasLabel(m, k, v) {
					continue series
				}
			}
			switch {
			case m.Counter != nil:
				return m.Counter.GetValue()
			case m.Gauge != nil:
				return m.Gauge.GetValue()
			case m.Histogram != nil:
				return float64(m.Histogram.GetSampleCount())
			}
		}
	}
	return -1
}

func hasLabel(m *dto.Metric, k, v string) bool {
	for _, l := range m.GetLabel() {
		if l.GetName() == k && l.GetValue() == v {
			return true
		}
	}
	return false
}

// A real client's acquisitions, extensions, releases, contention, node
// errors and an election's term, as a real registry gathers them.
func TestHooksOnRegistry(t *testing.T) {
	reg := prometheus.NewRegistry()
	h, err := redleaseprom.New(reg)
	require.NoError(t, err)
	_, err = redleaseprom.New(reg)
	require.Error(t, err, "the same collectors twice")

	events := func(op, outcome string) float64 {
		return value(t, reg, "redlease_events_total", map[string]string{"op": op, "outcome": outcome})
	}
	leader := func() float64 {
		return value(t, reg, "redlease_leader", map[string]string{"election": adaptertest.Election})
	}
	adaptertest.Scenario(t, h.Observe, adaptertest.Checks{
		Ops: func() {
			assert.Equal(t, 1.0, events("acquire", "ok"))
			assert.Equal(t, 1.0, events("acquire", "busy"))
			assert.Equal(t, 1.0, events("extend", "ok"))
			assert.Equal(t, 1.0, events("release", "ok"))
			assert.Equal(t, 1.0, value(t, reg, "redlease_operation_duration_seconds", map[string]string{"op": "acquire", "outcome": "ok"}))
			assert.Equal(t, 1.0, value(t, reg, "redlease_operation_duration_seconds", map[string]string{"op": "release", "outcome": "ok"}))
		},
		NodeDown: func(node string) {
			require.Eventually(t, func() bool {
				return value(t, reg, "redlease_node_errors_total", map[string]string{"node": node}) >= 1
			}, 10*time.Second, time.Millisecond)
		},
		Spare: func() {
			assert.GreaterOrEqual(t, value(t, reg, "redlease_extend_spare_total", map[string]string{"spare": "1"}), 2.0,
				"the extends on 3 of 3 nodes")
			assert.GreaterOrEqual(t, value(t, reg, "redlease_extend_spare_total", map[string]string{"spare": "0"}), 1.0,
				"an extend on 2 of 3 nodes")
		},
		Elected: func() { assert.Equal(t, 1.0, leader()) },
		Demoted: func() {
			assert.Equal(t, 0.0, leader())
			assert.Equal(t, 1.0, events("elected", "ok"))
			assert.Equal(t, 1.0, events("demoted", "error"))
		},
	})

	// The exposition's names, types and help, as a scrape shows them.
	require.NoError(t, testutil.GatherAndCompare(reg, strings.NewReader(`
# HELP redlease_leader 1 while this process leads the election, 0 otherwise.
# TYPE redlease_leader gauge
redlease_leader{election="scenario:e"} 0
`), "redlease_leader"))
	checkMargins(t, reg, h)
}

// checkMargins: after the scenario, every successful extend's validity
// left; the time with no leader before a term (none before the
// scenario's first: unknown); the split-brain alarm; the quarantines.
func checkMargins(t *testing.T, reg *prometheus.Registry, h *redleaseprom.Hooks) {
	assert.GreaterOrEqual(t, value(t, reg, "redlease_extend_validity_left_seconds", nil), 3.0)
	assert.Equal(t, -1.0, value(t, reg, "redlease_leaderless_seconds", nil), "the first term knew of no gap")
	h.Observe(redlock.Event{Kind: election.EventElected, Key: "e", Duration: 150 * time.Millisecond, Outcome: "ok"})
	assert.Equal(t, 1.0, value(t, reg, "redlease_leaderless_seconds", map[string]string{"election": "e"}))
	// The alarm (forced for real in election's TestIntegrationSplitBrainAlarm).
	h.Observe(redlock.Event{Kind: redlock.EventSplitBrain, Key: "e", Evidence: "overlap", Err: errors.New("granted twice"), Outcome: "error"})
	assert.Equal(t, 1.0, value(t, reg, "redlease_split_brain_total", map[string]string{"election": "e", "evidence": "overlap"}))
	// Quarantines: the scenario's brand-new nodes were quarantined at New,
	// then voted after Bootstrap.
	assert.Equal(t, 0.0, value(t, reg, "redlease_node_quarantined", nil))
	h.Observe(redlock.Event{Kind: redlock.EventQuarantine, Node: "x", Err: errors.New("quarantined"), Outcome: "error"})
	assert.Equal(t, 1.0, value(t, reg, "redlease_node_quarantined", map[string]string{"node": "x"}))
	// A server clock seen jump (for real in lease's TestIntegrationClockJumpDemotesHolder), and run slow.
	h.Observe(redlock.Event{Kind: redlock.EventQuarantine, Node: "y", Evidence: "clock_fast", Err: errors.New("jumped"), Outcome: "error"})
	h.Observe(redlock.Event{Kind: redlock.EventNodeError, Node: "y", Evidence: "clock_slow", Err: errors.New("slow"), Outcome: "error"})
	assert.Equal(t, 1.0, value(t, reg, "redlease_clock_anomalies_total", map[string]string{"node": "y", "evidence": "clock_fast"}))
	assert.Equal(t, 1.0, value(t, reg, "redlease_clock_anomalies_total", map[string]string{"node": "y", "evidence": "clock_slow"}))
	assert.Equal(t, 1.0, value(t, reg, "redlease_node_quarantined", map[string]string{"node": "y"}))
	n, err := testutil.GatherAndCount(reg, "redlease_events_total", "redlease_operation_duration_seconds",
		"redlease_node_errors_total", "redlease_leader", "redlease_extend_spare_total",
		"redlease_extend_validity_left_seconds", "redlease_leaderless_seconds", "redlease_split_brain_total", "redlease_node_quarantined",
		"redlease_clock_anomalies_total")
	require.NoError(t, err)
	assert.Positive(t, n)
}
