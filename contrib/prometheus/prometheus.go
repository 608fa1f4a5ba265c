// Package redleaseprom records redlease's events (redlock.Config.Hooks) as
// Prometheus metrics. It is a module of its own, so that redlease itself
// does not depend on client_golang.
//
//	h, err := redleaseprom.New(prometheus.DefaultRegisterer)
//	client, err := redlock.New(ctx, redlock.Config{Hooks: h.Observe}, nodes...)
//
// The leases, electors and observers built on the client report through
// it too. The metrics (docs/observability.md; `redlease run --metrics-addr`
// serves the same ones):
//
//	redlease_events_total{op, outcome}                    counter (not node errors nor quarantines)
//	redlease_operation_duration_seconds{op, outcome}      histogram (op: acquire, extend, release)
//	redlease_node_errors_total{node, outcome}             counter
//	redlease_leader{election}                             gauge: 1 while this process leads
//	redlease_extend_spare_total{spare}                    counter: successful extends by spare copies
//	redlease_extend_validity_left_seconds                 histogram: validity left at each successful extend
//	redlease_leaderless_seconds{election}                 histogram: time with no leader before each term won here
//	redlease_split_brain_total{election, evidence}        counter: evidence of two holders at once (alert on any)
//	redlease_node_quarantined{node}                       gauge: 1 while the node is quarantined (as of its last answer)
//	redlease_clock_anomalies_total{node, evidence}        counter: server clocks seen jump (clock_fast; alert on any) or run slow (clock_slow)
//
// spare is redlock.Event.Spare: how many nodes held the lock's copy beyond
// the majority it needs, after the extend ("0": a bare majority, one more
// lost copy and the lock can no longer be extended; alert on its rate).
// op is redlock.Event.Kind (acquire, extend, release, lost, node_error, and
// election's elected, demoted, leader_changed), outcome is redlock.Event.Outcome (ok,
// busy, refused, timeout, error), node a name of redlock.Client.Nodes.
// Keys are not labels: a process may hold any number of them.
package redleaseprom

import (
	"strconv"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/redlease/redlease/election"
	"github.com/redlease/redlease/redlock"
)

// Buckets are the upper bounds, in seconds, of the duration histogram:
// from a local round trip to well past the default NodeTimeout (50ms) and
// RetryDelay (100ms).
var Buckets = []float64{0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5}

// marginBuckets are the upper bounds, in seconds, of the histograms of
// the validity left at a refresh and of the time with no leader: from a
// graceful handover's milliseconds to past the default MaxTTL (30s).
var marginBuckets = []float64{0.001, 0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60}

// Hooks is the hooks (redlock.Config.Hooks: pass its Observe) that records every event in Prometheus
// collectors. It is safe for concurrent use.
type Hooks struct {
	events    *prometheus.CounterVec
	durations *prometheus.HistogramVec
	nodeErrs  *prometheus.CounterVec
	leader    *prometheus.GaugeVec
	spare     *prometheus.CounterVec
	validity  prometheus.Histogram
	gaps      *prometheus.HistogramVec
	alarms    *prometheus.CounterVec
	quarant   *prometheus.GaugeVec
	clock     *prometheus.CounterVec
}

var _ func(redlock.Event) = (*Hooks)(nil).Observe

// New makes the collectors and registers them with reg (nil:
// prometheus.DefaultRegisterer). It fails when reg already has collectors
// of the same names.
func New(reg prometheus.Registerer) (*Hooks, error) {
	if reg == nil {
		reg = prometheus.DefaultRegisterer
	}
	h := &Hooks{
		events: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "redlease_events_total",
			Help: "Events reported to redlock.Config.Hooks, by kind (op) and outcome.",
		}, []string{"op", "outcome"}),
		durations: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "redlease_operation_duration_seconds",
			Help:    "Duration of acquire, extend and release calls.",
			Buckets: Buckets,
		}, []string{"op", "outcome"}),
		nodeErrs: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "redlease_node_errors_total",
			Help: "Requests a node gave no valid answer to, by node and outcome.",
		}, []string{"node", "outcome"}),
		leader: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "redlease_leader",
			Help: "1 while this process leads the election, 0 otherwise.",
		}, []string{"election"}),
		spare: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "redlease_extend_spare_total",
			Help: "Successful extends, by how many nodes held the lock's copy beyond the majority (spare; 0: a bare majority).",
		}, []string{"spare"}),
		validity: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "redlease_extend_validity_left_seconds",
			Help:    "Validity a lock had left when a successful extend (refresh) returned: the margin it was refreshed with.",
			Buckets: marginBuckets,
		}),
		gaps: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "redlease_leaderless_seconds",
			Help:    "Time the election had no leader before a term won by this process, as far as it knows.",
			Buckets: marginBuckets,
		}, []string{"election"}),
		alarms: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "redlease_split_brain_total",
			Help: "Evidence seen of two holders at once (a safety assumption failed), by election and rule (evidence).",
		}, []string{"election", "evidence"}),
		quarant: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "redlease_node_quarantined",
			Help: "1 while a node is quarantined (it may have forgotten its locks and does not vote), as of its last answer; 0 once it votes.",
		}, []string{"node"}),
		clock: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "redlease_clock_anomalies_total",
			Help: "Server clocks seen jump forward or run fast (clock_fast: the node is quarantined) or run slow or step back (clock_slow), by node and evidence.",
		}, []string{"node", "evidence"}),
	}
	for _, c := range []prometheus.Collector{h.events, h.durations, h.nodeErrs, h.leader, h.spare, h.validity, h.gaps, h.alarms, h.quarant, h.clock} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return h, nil
}

// Observe records ev (the function for redlock.Config.Hooks).
func (h *Hooks) Observe(ev redlock.Event) {
	outcome := ev.Outcome
	if ev.Evidence != "" && (ev.Kind == redlock.EventNodeError || ev.Kind == redlock.EventQuarantine) {
		h.clock.WithLabelValues(ev.Node, ev.Evidence).Inc() // a server clock (clock_fast, clock_slow)
	}
	switch ev.Kind {
	case redlock.EventNodeError:
		if ev.Evidence == "" {
			h.nodeErrs.WithLabelValues(ev.Node, outcome).Inc()
		}
		return
	case redlock.EventQuarantine:
		h.quarant.WithLabelValues(ev.Node).Set(b2f(ev.Err != nil))
		return
	case election.EventElected:
		h.leader.WithLabelValues(ev.Key).Set(1)
		if ev.Duration > 0 {
			h.gaps.WithLabelValues(ev.Key).Observe(ev.Duration.Seconds())
		}
	case election.EventDemoted:
		h.leader.WithLabelValues(ev.Key).Set(0)
	case redlock.EventExtend:
		if ev.Err == nil {
			h.spare.WithLabelValues(strconv.Itoa(ev.Spare)).Inc()
			h.validity.Observe(ev.Validity.Seconds())
		}
	case redlock.EventSplitBrain:
		h.alarms.WithLabelValues(ev.Key, ev.Evidence).Inc()
	}
	op := string(ev.Kind)
	h.events.WithLabelValues(op, outcome).Inc()
	switch ev.Kind {
	case redlock.EventAcquire, redlock.EventExtend, redlock.EventRelease:
		h.durations.WithLabelValues(op, outcome).Observe(ev.Duration.Seconds())
	}
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
