package main

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/redlease/redlease/election"
	"github.com/redlease/redlease/redlock"
)

// The CLI's /metrics (--metrics-addr): the metrics of docs/observability.md,
// the same names, labels and buckets as contrib/prometheus, written in the
// Prometheus text format (version 0.0.4) by hand, so that the root module
// needs no metrics library.

// durationBuckets are the histogram's upper bounds in seconds (the same as
// contrib/prometheus and contrib/otel).
var durationBuckets = []float64{0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5}

// histogram is one label set's histogram.
type histogram struct {
	counts []uint64 // per bucket, not cumulative
	sum    float64
	n      uint64
}

// cliMetrics keeps the metrics: its Observe is the CLI's
// redlock.Config.Hooks. Safe for concurrent use.
type cliMetrics struct {
	mu        sync.Mutex
	events    map[[2]string]uint64     // op, outcome
	durations map[[2]string]*histogram // op, outcome
	nodeErrs  map[[2]string]uint64     // node, outcome
	leader    map[string]float64       // election name: 1 while this process leads
	spare     map[string]uint64        // successful extends by Event.Spare
}

func newCLIMetrics() *cliMetrics {
	return &cliMetrics{events: map[[2]string]uint64{}, durations: map[[2]string]*histogram{},
		nodeErrs: map[[2]string]uint64{}, leader: map[string]float64{}, spare: map[string]uint64{}}
}

// Observe is the function for redlock.Config.Hooks.
func (m *cliMetrics) Observe(ev redlock.Event) {
	outcome := ev.Outcome
	m.mu.Lock()
	defer m.mu.Unlock()
	switch ev.Kind {
	case redlock.EventNodeError:
		m.nodeErrs[[2]string{ev.Node, outcome}]++
		return
	case election.EventElected:
		m.leader[ev.Key] = 1
	case election.EventDemoted:
		m.leader[ev.Key] = 0
	case redlock.EventExtend:
		if ev.Err == nil {
			m.spare[strconv.Itoa(ev.Spare)]++
		}
	}
	k := [2]string{string(ev.Kind), outcome}
	m.events[k]++
	switch ev.Kind {
	case redlock.EventAcquire, redlock.EventExtend, redlock.EventRelease:
		h := m.durations[k]
		if h == nil {
			h = &histogram{counts: make([]uint64, len(durationBuckets))}
			m.durations[k] = h
		}
		s := ev.Duration.Seconds()
		if i, _ := slices.BinarySearch(durationBuckets, s); i < len(durationBuckets) {
			h.counts[i]++
		}
		h.sum += s
		h.n++
	}
}

// writeTo writes the metrics in the Prometheus text format, sorted.
func (m *cliMetrics) writeTo(w io.Writer) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var b strings.Builder
	b.WriteString("# HELP redlease_events_total Events reported to redlock.Config.Hooks, by kind (op) and outcome.\n")
	b.WriteString("# TYPE redlease_events_total counter\n")
	for _, k := range sortedKeys(m.events) {
		fmt.Fprintf(&b, "redlease_events_total{op=%s,outcome=%s} %d\n", quote(k[0]), quote(k[1]), m.events[k])
	}
	b.WriteString("# HELP redlease_operation_duration_seconds Duration of acquire, extend and release calls.\n")
	b.WriteString("# TYPE redlease_operation_duration_seconds histogram\n")
	for _, k := range sortedKeys(m.durations) {
		h := m.durations[k]
		labels := "op=" + quote(k[0]) + ",outcome=" + quote(k[1])
		var cum uint64
		for i, le := range durationBuckets {
			cum += h.counts[i]
			fmt.Fprintf(&b, "redlease_operation_duration_seconds_bucket{%s,le=%s} %d\n", labels,
				quote(strconv.FormatFloat(le, 'g', -1, 64)), cum)
		}
		fmt.Fprintf(&b, "redlease_operation_duration_seconds_bucket{%s,le=\"+Inf\"} %d\n", labels, h.n)
		fmt.Fprintf(&b, "redlease_operation_duration_seconds_sum{%s} %s\n", labels, strconv.FormatFloat(h.sum, 'g', -1, 64))
		fmt.Fprintf(&b, "redlease_operation_duration_seconds_count{%s} %d\n", labels, h.n)
	}
	b.WriteString("# HELP redlease_node_errors_total Requests a node gave no valid answer to, by node and outcome.\n")
	b.WriteString("# TYPE redlease_node_errors_total counter\n")
	for _, k := range sortedKeys(m.nodeErrs) {
		fmt.Fprintf(&b, "redlease_node_errors_total{node=%s,outcome=%s} %d\n", quote(k[0]), quote(k[1]), m.nodeErrs[k])
	}
	b.WriteString("# HELP redlease_leader 1 while this process leads the election, 0 otherwise.\n")
	b.WriteString("# TYPE redlease_leader gauge\n")
	for _, name := range sortedKeys(m.leader) {
		fmt.Fprintf(&b, "redlease_leader{election=%s} %g\n", quote(name), m.leader[name])
	}
	b.WriteString("# HELP redlease_extend_spare_total Successful extends, by how many nodes held the lock's copy beyond the majority (spare; 0: a bare majority).\n")
	b.WriteString("# TYPE redlease_extend_spare_total counter\n")
	for _, spare := range sortedKeys(m.spare) {
		fmt.Fprintf(&b, "redlease_extend_spare_total{spare=%s} %d\n", quote(spare), m.spare[spare])
	}
	_, _ = io.WriteString(w, b.String())
}

// quote is a label value in the text format: in double quotes, with
// backslash, double quote and newline escaped.
func quote(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`).Replace(s) + `"`
}

func sortedKeys[K interface{ [2]string | string }, V any](m map[K]V) []K {
	keys := make([]K, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b K) int { return strings.Compare(fmt.Sprint(a), fmt.Sprint(b)) })
	return keys
}

// serveMetrics serves m on addr at /metrics until stop is called; it
// returns once the listener is open (a usage error when it cannot be).
func serveMetrics(addr string, m *cliMetrics, log hclog.Logger) (stop func(), err error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, usagef("--metrics-addr %q: %v", addr, err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /metrics", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
		m.writeTo(w)
	})
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("metrics server stopped", "error", err)
		}
	}()
	log.Info("serving metrics", "addr", "http://"+ln.Addr().String()+"/metrics")
	return func() {
		_ = srv.Close()
		<-done
	}, nil
}

// hooksList is several hooks (redlock.Config.Hooks) as one.
type hooksList []func(redlock.Event)

// Observe passes ev to every hook in turn.
func (l hooksList) Observe(ev redlock.Event) {
	for _, h := range l {
		h(ev)
	}
}
