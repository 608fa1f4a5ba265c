// Package redleaseotel records redlease's events (redlock.Config.Hooks) as
// OpenTelemetry metrics. It is a module of its own, so that redlease
// itself does not depend on OpenTelemetry.
//
//	h, err := redleaseotel.New(otel.GetMeterProvider())
//	client, err := redlock.New(ctx, redlock.Config{Hooks: h.Observe}, nodes...)
//
// The leases, electors and observers built on the client report through
// it too. The instruments, of the meter "github.com/redlease/redlease"
// (docs/observability.md):
//
//	redlease.events               Int64Counter   {event}  attributes op, outcome
//	redlease.operation.duration   Float64Histogram  s     attributes op, outcome (op: acquire, extend, release)
//	redlease.node.errors          Int64Counter   {error}  attributes node, outcome
//	redlease.leader               Int64Gauge              attribute election: 1 while this process leads
//	redlease.extend.spare         Int64Counter   {extend} attribute spare: successful extends by spare copies
//	redlease.extend.validity_left Float64Histogram  s     validity left at each successful extend
//	redlease.leaderless           Float64Histogram  s     attribute election: time with no leader before each term won here
//	redlease.split_brain          Int64Counter   {alarm}  attributes election, evidence: evidence of two holders at once
//	redlease.node.quarantined     Int64Gauge              attribute node: 1 while the node is quarantined
//	redlease.clock.anomalies      Int64Counter   {anomaly} attributes node, evidence: server clocks seen jump (clock_fast) or run slow (clock_slow)
//
// The attributes are those of the Prometheus adapter's labels (op is
// redlock.Event.Kind, outcome is redlock.Event.Outcome, node a
// name of redlock.Client.Nodes, spare redlock.Event.Spare as a decimal
// string); exported to Prometheus, the instruments get the adapter's names
// (redlease_events_total, ...).
package redleaseotel

import (
	"context"
	"strconv"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/redlease/redlease/election"
	"github.com/redlease/redlease/redlock"
)

// MeterName is the name of the meter the instruments belong to.
const MeterName = "github.com/redlease/redlease"

// Buckets are the explicit bucket boundaries, in seconds, of the duration
// histogram (the same as the Prometheus adapter's).
var Buckets = []float64{0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5}

// marginBuckets are the bucket boundaries, in seconds, of the histograms
// of the validity left at a refresh and of the time with no leader (the
// Prometheus adapter's).
var marginBuckets = []float64{0.001, 0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60}

// Hooks is the hooks (redlock.Config.Hooks: pass its Observe) that records every event with OpenTelemetry
// instruments. It is safe for concurrent use.
type Hooks struct {
	events    metric.Int64Counter
	durations metric.Float64Histogram
	nodeErrs  metric.Int64Counter
	leader    metric.Int64Gauge
	spare     metric.Int64Counter
	validity  metric.Float64Histogram
	gaps      metric.Float64Histogram
	alarms    metric.Int64Counter
	quarant   metric.Int64Gauge
	clock     metric.Int64Counter
}

var _ func(redlock.Event) = (*Hooks)(nil).Observe

// New makes the instruments with a meter of mp.
func New(mp metric.MeterProvider) (*Hooks, error) {
	m := mp.Meter(MeterName)
	h := &Hooks{}
	var err error
	if h.events, err = m.Int64Counter("redlease.events", metric.WithUnit("{event}"),
		metric.WithDescription("Events reported to redlock.Config.Hooks, by kind (op) and outcome.")); err != nil {
		return nil, err
	}
	if h.durations, err = m.Float64Histogram("redlease.operation.duration", metric.WithUnit("s"),
		metric.WithDescription("Duration of acquire, extend and release calls."),
		metric.WithExplicitBucketBoundaries(Buckets...)); err != nil {
		return nil, err
	}
	if h.nodeErrs, err = m.Int64Counter("redlease.node.errors", metric.WithUnit("{error}"),
		metric.WithDescription("Requests a node gave no valid answer to, by node and outcome.")); err != nil {
		return nil, err
	}
	if h.leader, err = m.Int64Gauge("redlease.leader",
		metric.WithDescription("1 while this process leads the election, 0 otherwise.")); err != nil {
		return nil, err
	}
	if h.spare, err = m.Int64Counter("redlease.extend.spare", metric.WithUnit("{extend}"),
		metric.WithDescription("Successful extends, by how many nodes held the lock's copy beyond the majority (spare; 0: a bare majority).")); err != nil {
		return nil, err
	}
	return h, h.margins(m)
}

// margins makes the instruments of the margins an operator watches, of
// the split-brain alarm and of the clock check.
func (h *Hooks) margins(m metric.Meter) error {
	var err error
	if h.validity, err = m.Float64Histogram("redlease.extend.validity_left", metric.WithUnit("s"),
		metric.WithDescription("Validity a lock had left when a successful extend (refresh) returned: the margin it was refreshed with."),
		metric.WithExplicitBucketBoundaries(marginBuckets...)); err != nil {
		return err
	}
	if h.gaps, err = m.Float64Histogram("redlease.leaderless", metric.WithUnit("s"),
		metric.WithDescription("Time the election had no leader before a term won by this process, as far as it knows."),
		metric.WithExplicitBucketBoundaries(marginBuckets...)); err != nil {
		return err
	}
	if h.alarms, err = m.Int64Counter("redlease.split_brain", metric.WithUnit("{alarm}"),
		metric.WithDescription("Evidence seen of two holders at once (a safety assumption failed), by election and rule (evidence).")); err != nil {
		return err
	}
	if h.quarant, err = m.Int64Gauge("redlease.node.quarantined",
		metric.WithDescription("1 while a node is quarantined (it may have forgotten its locks and does not vote), as of its last answer; 0 once it votes.")); err != nil {
		return err
	}
	h.clock, err = m.Int64Counter("redlease.clock.anomalies", metric.WithUnit("{anomaly}"),
		metric.WithDescription("Server clocks seen jump forward or run fast (clock_fast: the node is quarantined) or run slow or step back (clock_slow), by node and evidence."))
	return err
}

// Observe records ev (the function for redlock.Config.Hooks).
func (h *Hooks) Observe(ev redlock.Event) {
	ctx := context.Background()
	outcome := attribute.String("outcome", ev.Outcome)
	if ev.Evidence != "" && (ev.Kind == redlock.EventNodeError || ev.Kind == redlock.EventQuarantine) {
		// A server clock (clock_fast, clock_slow).
		h.clock.Add(ctx, 1, metric.WithAttributes(attribute.String("node", ev.Node), attribute.String("evidence", ev.Evidence)))
	}
	switch ev.Kind {
	case redlock.EventNodeError:
		if ev.Evidence == "" {
			h.nodeErrs.Add(ctx, 1, metric.WithAttributes(attribute.String("node", ev.Node), outcome))
		}
		return
	case redlock.EventQuarantine:
		var q int64
		if ev.Err != nil {
			q = 1
		}
		h.quarant.Record(ctx, q, metric.WithAttributes(attribute.String("node", ev.Node)))
		return
	case election.EventElected:
		h.leader.Record(ctx, 1, metric.WithAttributes(attribute.String("election", ev.Key)))
		if ev.Duration > 0 {
			h.gaps.Record(ctx, ev.Duration.Seconds(), metric.WithAttributes(attribute.String("election", ev.Key)))
		}
	case election.EventDemoted:
		h.leader.Record(ctx, 0, metric.WithAttributes(attribute.String("election", ev.Key)))
	case redlock.EventExtend:
		if ev.Err == nil {
			h.spare.Add(ctx, 1, metric.WithAttributes(attribute.String("spare", strconv.Itoa(ev.Spare))))
			h.validity.Record(ctx, ev.Validity.Seconds())
		}
	case redlock.EventSplitBrain:
		h.alarms.Add(ctx, 1, metric.WithAttributes(attribute.String("election", ev.Key), attribute.String("evidence", ev.Evidence)))
	}
	attrs := metric.WithAttributes(attribute.String("op", string(ev.Kind)), outcome)
	h.events.Add(ctx, 1, attrs)
	switch ev.Kind {
	case redlock.EventAcquire, redlock.EventExtend, redlock.EventRelease:
		h.durations.Record(ctx, ev.Duration.Seconds(), attrs)
	}
}
