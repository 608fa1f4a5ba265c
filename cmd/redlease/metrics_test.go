//go:build unix

package main

import (
	"errors"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlease/redlease/election"
	"github.com/redlease/redlease/redlock"
)

// The text format: counters by op and outcome, cumulative histogram
// buckets with +Inf, _sum and _count, node errors, the leader gauge, the
// successful extends by spare copies (failed ones not counted), and label
// values escaped.
func TestCLIMetricsText(t *testing.T) {
	m := newCLIMetrics()
	m.Observe(redlock.Event{Kind: redlock.EventAcquire, Key: "k", Duration: 3 * time.Millisecond, Outcome: "ok"})
	m.Observe(redlock.Event{Kind: redlock.EventAcquire, Key: "k", Duration: 30 * time.Millisecond, Outcome: "ok"})
	m.Observe(redlock.Event{Kind: redlock.EventAcquire, Key: "k", Duration: 10 * time.Second, Outcome: "ok"})
	m.Observe(redlock.Event{Kind: redlock.EventNodeError, Node: `a"b\`, Err: errors.New("refused"), Outcome: "error"})
	m.Observe(redlock.Event{Kind: election.EventElected, Key: "e", Outcome: "ok"})
	m.Observe(redlock.Event{Kind: redlock.EventExtend, Key: "e", Spare: 1, Validity: 2 * time.Second, Outcome: "ok"})
	m.Observe(redlock.Event{Kind: election.EventElected, Key: "e", Duration: 20 * time.Millisecond, Outcome: "ok"})
	m.Observe(redlock.Event{Kind: redlock.EventSplitBrain, Key: "e", Evidence: "token", Err: errors.New("below"), Outcome: "error"})
	m.Observe(redlock.Event{Kind: redlock.EventQuarantine, Node: "n1", Err: errors.New("quarantined"), Outcome: "error"})
	m.Observe(redlock.Event{Kind: redlock.EventQuarantine, Node: "n2", Err: errors.New("quarantined"), Outcome: "error"})
	m.Observe(redlock.Event{Kind: redlock.EventQuarantine, Node: "n2", Outcome: "ok"})
	m.Observe(redlock.Event{Kind: redlock.EventQuarantine, Node: "n3", Evidence: "clock_fast", Err: errors.New("jumped"), Outcome: "error"})
	m.Observe(redlock.Event{Kind: redlock.EventNodeError, Node: "n3", Evidence: "clock_slow", Err: errors.New("slow"), Outcome: "error"})
	m.Observe(redlock.Event{Kind: redlock.EventExtend, Key: "e", Spare: 0, Outcome: "ok"})
	m.Observe(redlock.Event{Kind: redlock.EventExtend, Key: "e", Spare: 0, Outcome: "ok"})
	m.Observe(redlock.Event{Kind: redlock.EventExtend, Key: "e", Err: errors.New("timeout"), Outcome: "timeout"})
	var b strings.Builder
	m.writeTo(&b)
	out := b.String()
	for _, want := range []string{
		`redlease_events_total{op="acquire",outcome="ok"} 3`,
		`redlease_events_total{op="elected",outcome="ok"} 2`,
		`redlease_operation_duration_seconds_bucket{op="acquire",outcome="ok",le="0.001"} 0`,
		`redlease_operation_duration_seconds_bucket{op="acquire",outcome="ok",le="0.005"} 1`,
		`redlease_operation_duration_seconds_bucket{op="acquire",outcome="ok",le="0.05"} 2`,
		`redlease_operation_duration_seconds_bucket{op="acquire",outcome="ok",le="5"} 2`,
		`redlease_operation_duration_seconds_bucket{op="acquire",outcome="ok",le="+Inf"} 3`,
		`redlease_operation_duration_seconds_sum{op="acquire",outcome="ok"} 10.033`,
		`redlease_operation_duration_seconds_count{op="acquire",outcome="ok"} 3`,
		`redlease_node_errors_total{node="a\"b\\",outcome="error"} 1`,
		`redlease_leader{election="e"} 1`,
		`redlease_extend_spare_total{spare="0"} 2`,
		`redlease_extend_spare_total{spare="1"} 1`,
		"# TYPE redlease_extend_spare_total counter",
		"# TYPE redlease_operation_duration_seconds histogram",
		`redlease_extend_validity_left_seconds_bucket{le="1"} 2`,
		`redlease_extend_validity_left_seconds_bucket{le="2.5"} 3`,
		`redlease_extend_validity_left_seconds_count 3`,
		`redlease_leaderless_seconds_bucket{election="e",le="0.01"} 0`,
		`redlease_leaderless_seconds_bucket{election="e",le="0.05"} 1`,
		`redlease_leaderless_seconds_sum{election="e"} 0.02`,
		`redlease_split_brain_total{election="e",evidence="token"} 1`,
		"# TYPE redlease_split_brain_total counter",
		`redlease_node_quarantined{node="n1"} 1`,
		`redlease_node_quarantined{node="n2"} 0`,
		`redlease_node_quarantined{node="n3"} 1`,
		`redlease_clock_anomalies_total{node="n3",evidence="clock_fast"} 1`,
		`redlease_clock_anomalies_total{node="n3",evidence="clock_slow"} 1`,
		"# TYPE redlease_clock_anomalies_total counter",
	} {
		assert.Contains(t, out, want+"\n")
	}
	assert.NotContains(t, out, `redlease_node_errors_total{node="n3"`, "a slow clock is not a node error")
	m.Observe(redlock.Event{Kind: election.EventDemoted, Key: "e", Err: errors.New("resigned")})
	b.Reset()
	m.writeTo(&b)
	assert.Contains(t, b.String(), `redlease_leader{election="e"} 0`+"\n")
}

var metricsURL = regexp.MustCompile(`addr=(http://\S+/metrics)`)

// redlease run --metrics-addr serves the run's metrics while it campaigns.
func TestRunMetricsAddr(t *testing.T) {
	_, nodes := servers(t, 3)
	c := startCLI(t, "run", "--name", "metered", "--bootstrap", "--ttl", "3s", "--grace", "500ms",
		"--metrics-addr", "127.0.0.1:0", "--nodes", nodes, "--", "sh", "-c", `echo "pid=$$"; sleep 30 & wait`)
	reap(t, c.stdout.waitContains(t, "pid="))
	u := metricsURL.FindStringSubmatch(c.stderr.waitContains(t, "/metrics"))
	require.NotNil(t, u, c.stderr.String())
	resp, err := http.Get(u[1])
	require.NoError(t, err)
	body, err := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	require.NoError(t, err)
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, "text/plain; version=0.0.4; charset=utf-8", resp.Header.Get("Content-Type"))
	for _, want := range []string{
		`redlease_events_total{op="acquire",outcome="ok"} 1`,
		`redlease_events_total{op="elected",outcome="ok"} 1`,
		`redlease_leader{election="metered"} 1`,
		`redlease_operation_duration_seconds_count{op="acquire",outcome="ok"} 1`,
	} {
		assert.Contains(t, string(body), want+"\n")
	}
}

// An address that cannot be listened on is a usage error naming it.
func TestRunMetricsAddrRefused(t *testing.T) {
	_, nodes := servers(t, 1)
	code, _, stderr := runCLI(t, "run", "--name", "m", "--metrics-addr", "256.0.0.1:1", "--nodes", nodes, "--", "true")
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, stderr, `--metrics-addr "256.0.0.1:1"`)
}
