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

// marginBuckets are the upper bounds in seconds of the histograms of the
// validity left at a refresh and of the time with no leader (the same as
// contrib/prometheus and contrib/otel).
var marginBuckets = []float64{0.001, 0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60}

// histogram is one label set's histogram.
type histogram struct {
	bounds []float64
	counts []uint64 // per bucket, not cumulative
	sum    float64
	n      uint64
}

func newHistogram(bounds []float64) *histogram {
	return &histogram{bounds: bounds, counts: make([]uint64, len(bounds))}
}

func (h *histogram) observe(s float64) {
	if i, _ := slices.BinarySearch(h.bounds, s); i < len(h.bounds) {
		h.counts[i]++
	}
	h.sum += s
	h.n++
}

// write writes h's series of metric name with labels (a label list
// without braces, or "").
func (h *histogram) write(b *strings.Builder, name, labels string) {
	sep := ""
	if labels != "" {
		sep = ","
	}
	var cum uint64
	for i, le := range h.bounds {
		cum += h.counts[i]
		fmt.Fprintf(b, "%s_bucket{%s%sle=%s} %d\n", name, labels, sep, quote(strconv.FormatFloat(le, 'g', -1, 64)), cum)
	}
	fmt.Fprintf(b, "%s_bucket{%s%sle=\"+Inf\"} %d\n", name, labels, sep, h.n)
	if labels != "" {
		labels = "{" + labels + "}"
	}
	fmt.Fprintf(b, "%s_sum%s %s\n", name, labels, strconv.FormatFloat(h.sum, 'g', -1, 64))
	fmt.Fprintf(b, "%s_count%s %d\n", name, labels, h.n)
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
	validity  *histogram               // validity left at successful extends
	gaps      map[string]*histogram    // election name: time with no leader before its terms won here
	alarms    map[[2]string]uint64     // election, evidence: split-brain alarms
	quarant   map[string]float64       // node: 1 while quarantined, as of its last answer
	clock     map[[2]string]uint64     // node, evidence: server clocks seen jump or run slow
}

func newCLIMetrics() *cliMetrics {
	return &cliMetrics{events: map[[2]string]uint64{}, durations: map[[2]string]*histogram{},
		nodeErrs: map[[2]string]uint64{}, leader: map[string]float64{}, spare: map[string]uint64{},
		validity: newHistogram(marginBuckets), gaps: map[string]*histogram{}, alarms: map[[2]string]uint64{},
		quarant: map[string]float64{}, clock: map[[2]string]uint64{}}
}

// Observe is the function for redlock.Config.Hooks.
func (m *cliMetrics) Observe(ev redlock.Event) {
	outcome := ev.Outcome
	m.mu.Lock()
	defer m.mu.Unlock()
	if ev.Evidence != "" && (ev.Kind == redlock.EventNodeError || ev.Kind == redlock.EventQuarantine) {
		m.clock[[2]string{ev.Node, ev.Evidence}]++ // a server clock (clock_fast, clock_slow)
	}
	switch ev.Kind {
	case redlock.EventNodeError:
		if ev.Evidence == "" {
			m.nodeErrs[[2]string{ev.Node, outcome}]++
		}
		return
	case redlock.EventQuarantine:
		m.quarant[ev.Node] = 0
		if ev.Err != nil {
			m.quarant[ev.Node] = 1
		}
		return
	case election.EventElected:
		m.leader[ev.Key] = 1
		if ev.Duration > 0 {
			if m.gaps[ev.Key] == nil {
				m.gaps[ev.Key] = newHistogram(marginBuckets)
			}
			m.gaps[ev.Key].observe(ev.Duration.Seconds())
		}
	case election.EventDemoted:
		m.leader[ev.Key] = 0
	case redlock.EventExtend:
		if ev.Err == nil {
			m.spare[strconv.Itoa(ev.Spare)]++
			m.validity.observe(ev.Validity.Seconds())
		}
	case redlock.EventSplitBrain:
		m.alarms[[2]string{ev.Key, ev.Evidence}]++
	}
	k := [2]string{string(ev.Kind), outcome}
	m.events[k]++
	switch ev.Kind {
	case redlock.EventAcquire, redlock.EventExtend, redlock.EventRelease:
		h := m.durations[k]
		if h == nil {
			h = newHistogram(durationBuckets)
			m.durations[k] = h
		}
		h.observe(ev.Duration.Seconds())
	}
}

// writeTo writes the metrics in the Prometheus text format, sorted.
func (m *cliMetrics) writeTo(w io.Writer) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var b strings.Builder
	head(&b, "redlease_events_total", "counter", "Events reported to redlock.Config.Hooks, by kind (op) and outcome.")
	for _, k := range sortedKeys(m.events) {
		fmt.Fprintf(&b, "redlease_events_total{op=%s,outcome=%s} %d\n", quote(k[0]), quote(k[1]), m.events[k])
	}
	head(&b, "redlease_operation_duration_seconds", "histogram", "Duration of acquire, extend and release calls.")
	for _, k := range sortedKeys(m.durations) {
		m.durations[k].write(&b, "redlease_operation_duration_seconds", "op="+quote(k[0])+",outcome="+quote(k[1]))
	}
	head(&b, "redlease_node_errors_total", "counter", "Requests a node gave no valid answer to, by node and outcome.")
	for _, k := range sortedKeys(m.nodeErrs) {
		fmt.Fprintf(&b, "redlease_node_errors_total{node=%s,outcome=%s} %d\n", quote(k[0]), quote(k[1]), m.nodeErrs[k])
	}
	head(&b, "redlease_leader", "gauge", "1 while this process leads the election, 0 otherwise.")
	for _, name := range sortedKeys(m.leader) {
		fmt.Fprintf(&b, "redlease_leader{election=%s} %g\n", quote(name), m.leader[name])
	}
	head(&b, "redlease_extend_spare_total", "counter", "Successful extends, by how many nodes held the lock's copy beyond the majority (spare; 0: a bare majority).")
	for _, spare := range sortedKeys(m.spare) {
		fmt.Fprintf(&b, "redlease_extend_spare_total{spare=%s} %d\n", quote(spare), m.spare[spare])
	}
	m.writeMargins(&b)
	_, _ = io.WriteString(w, b.String())
}

// head writes a metric's HELP and TYPE lines.
func head(b *strings.Builder, name, kind, help string) {
	fmt.Fprintf(b, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, kind)
}

// writeMargins writes the margins an operator watches and the split-brain
// alarms. The caller holds m.mu.
func (m *cliMetrics) writeMargins(b *strings.Builder) {
	head(b, "redlease_extend_validity_left_seconds", "histogram", "Validity a lock had left when a successful extend (refresh) returned: the margin it was refreshed with.")
	m.validity.write(b, "redlease_extend_validity_left_seconds", "")
	head(b, "redlease_leaderless_seconds", "histogram", "Time the election had no leader before a term won by this process, as far as it knows.")
	for _, name := range sortedKeys(m.gaps) {
		m.gaps[name].write(b, "redlease_leaderless_seconds", "election="+quote(name))
	}
	head(b, "redlease_split_brain_total", "counter", "Evidence seen of two holders at once (a safety assumption failed), by election and rule (evidence).")
	for _, k := range sortedKeys(m.alarms) {
		fmt.Fprintf(b, "redlease_split_brain_total{election=%s,evidence=%s} %d\n", quote(k[0]), quote(k[1]), m.alarms[k])
	}
	head(b, "redlease_node_quarantined", "gauge", "1 while a node is quarantined (it may have forgotten its locks and does not vote), as of its last answer; 0 once it votes.")
	for _, node := range sortedKeys(m.quarant) {
		fmt.Fprintf(b, "redlease_node_quarantined{node=%s} %g\n", quote(node), m.quarant[node])
	}
	head(b, "redlease_clock_anomalies_total", "counter", "Server clocks seen jump forward or run fast (clock_fast: the node is quarantined) or run slow or step back (clock_slow), by node and evidence.")
	for _, k := range sortedKeys(m.clock) {
		fmt.Fprintf(b, "redlease_clock_anomalies_total{node=%s,evidence=%s} %d\n", quote(k[0]), quote(k[1]), m.clock[k])
	}
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
