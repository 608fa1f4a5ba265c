package lease_test

// BenchmarkLeaseScale: one process holds many leases on 5 real
// redis-servers (TTL 10s, default RenewInterval TTL/3, default client
// Config) and keeps them for an observation window; the figures are per
// second of that window.
//
//	go test -run '^$' -bench LeaseScale -benchtime 1x -count 1 ./lease/
//
// REDLEASE_SCALE_LEASES=n runs one size, n leases, instead of 1,000 and
// 10,000. REDLEASE_SCALE_HOGS=k starts k busy-loop processes once the
// leases are held, for the window: the process and the servers then run
// short of CPU (overload, on purpose).
//
// Each b.N iteration is one window (scaleWindow, > 7 renew intervals), so
// ns/op is the window's length; acquisition and release are outside the
// timer. The servers and the leases are fresh for each sub-benchmark.
// Metrics:
//
//	cpu-%              this process's CPU time (user+sys, getrusage) / wall, in % of one core
//	redis-cpu-%        the 5 servers' CPU time (INFO cpu) / wall, summed, in % of one core
//	redis-cmds/s       INFO stats total_commands_processed, summed over the servers
//	evalsha/s          INFO commandstats calls of evalsha + eval, summed
//	round-trips/s      go-redis round trips: one per Process, one per pipeline
//	pipelines/s        go-redis pipelines (redlock's batches)
//	cmds/pipeline      mean commands per pipeline
//	batched-%          share of the scripts sent inside a pipeline
//	refreshes/s        refreshes seen (ValidUntil moved), sampled every 100ms
//	retried-refreshes  refreshes that came later than RenewInterval + RetryInterval/2
//	                   after the previous one (at least one failed attempt between)
//	failed-refreshes   refresh attempts that failed and were retried (the lease's
//	                   debug log; the reasons are logged)
//	max-renew-gap-s    longest time between the starts of two refreshes of a lease
//	min-margin-s       least ValidUntil - now seen over every sample of every lease
//	                   (the lease itself ends SafetyMargin = 0.5s earlier)
//	lost-leases        leases whose Done closed during the window (must be 0)
//	acquire-s          time to acquire the N leases (64 workers)
//	load1              1-minute load average at the end of the window
//
// The log adds per-node figures and the servers' time per script.

import (
	"context"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"regexp"
	"runtime/metrics"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/redis/go-redis/v9"

	"github.com/redlease/redlease/internal/lockrule"
	"github.com/redlease/redlease/internal/testing/redistest"
	"github.com/redlease/redlease/lease"
	"github.com/redlease/redlease/redlock"
)

const (
	scaleNodes   = 5
	scaleTTL     = 10 * time.Second
	scaleWindow  = 25 * time.Second
	scaleSample  = 100 * time.Millisecond
	scaleWorkers = 64
	// How long one lease may take to acquire: on a loaded host an attempt
	// can miss NodeTimeout, and its leftovers block the key up to a TTL.
	scaleAcquireBudget = 2 * scaleTTL
	// redlock keeps at most 4 requests or pipelines in flight per node;
	// the rest is stragglers and Pub/Sub publishes at acquisition.
	scalePool = 16
)

func BenchmarkLeaseScale(b *testing.B) {
	if testing.Short() {
		b.Skip("starts real redis-server processes")
	}
	sizes := []int{1000, 10000}
	if v := os.Getenv("REDLEASE_SCALE_LEASES"); v != "" { // e.g. 30000: past what the host can refresh
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 {
			b.Fatalf("REDLEASE_SCALE_LEASES=%q: want a positive number of leases", v)
		}
		sizes = []int{n}
	}
	for _, n := range sizes {
		b.Run(fmt.Sprintf("leases=%d", n), func(b *testing.B) { benchLeaseScale(b, n) })
	}
}

func benchLeaseScale(b *testing.B, n int) {
	g := redistest.Start(b, scaleNodes)
	var (
		nodes    []redis.UniversalClient
		counters []*rtCounter
		admin    []*redis.Client // INFO, outside the counted clients
	)
	for _, s := range g.Servers() {
		c := redis.NewClient(&redis.Options{Addr: s.Addr(), PoolSize: scalePool})
		b.Cleanup(func() { _ = c.Close() })
		h := &rtCounter{}
		c.AddHook(h)
		nodes = append(nodes, c)
		counters = append(counters, h)
		admin = append(admin, s.Client(b))
	}
	ctx := context.Background()
	client, err := redlock.New(ctx, redlock.Config{}, nodes...)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = client.Close() })
	if err := client.Bootstrap(ctx); err != nil {
		b.Fatal(err)
	}
	rlog := &refreshLog{Logger: hclog.NewNullLogger(), reasons: map[string]int{}}
	cfg := lease.Config{TTL: scaleTTL, ID: "scale-bench", Logger: rlog}
	full := cfg
	full.RenewInterval = scaleTTL / 3 // the defaults, spelled out for the metrics
	full.RetryInterval = full.RenewInterval / 4

	// Acquire, 64 workers.
	leases := make([]*lease.Lease, n)
	var released atomic.Bool
	b.Cleanup(func() { // on failure paths too; before the client closes
		if !released.Load() {
			releaseAll(leases)
		}
	})
	t0 := time.Now()
	var (
		wg      sync.WaitGroup
		next    atomic.Int64
		retries atomic.Int64
		failMu  sync.Mutex
		failErr error
	)
	for range scaleWorkers {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				key := fmt.Sprintf("scale:%d:%d", n, i)
				giveUp := time.Now().Add(scaleAcquireBudget)
				for attempt := 1; ; attempt++ {
					l, err := lease.TryAcquire(ctx, client, key, cfg)
					if err == nil {
						leases[i] = l
						break
					}
					if time.Now().After(giveUp) {
						failMu.Lock()
						failErr = fmt.Errorf("acquire %s: %d attempts: %w", key, attempt, err)
						failMu.Unlock()
						return
					}
					retries.Add(1)
					// A failed attempt deletes its keys in the background,
					// and a copy it could not delete blocks the key on that
					// node until it expires (TTL): back off.
					time.Sleep(min(time.Duration(attempt)*100*time.Millisecond, time.Second))
				}
			}
		})
	}
	wg.Wait()
	acquire := time.Since(t0)
	if failErr != nil {
		diagnose(b, client, nodes)
		b.Fatal(failErr)
	}
	b.Logf("acquired %d leases in %s (%.0f/s, %d retried attempts)",
		n, acquire.Round(time.Millisecond), float64(n)/acquire.Seconds(), retries.Load())

	var (
		wall, cpu                        time.Duration
		total                            serverStats
		rt                               rtSnapshot
		perNode                          = make([]rtSnapshot, scaleNodes)
		perServer                        = make([]serverStats, scaleNodes)
		sched                            schedStats
		timeline                         []string
		refreshes, retried               int
		maxGap                           time.Duration
		minMargin                        = scaleTTL
		lastVU                           = make([]time.Time, n)
		lateThreshold                    = full.RenewInterval + full.RetryInterval/2
		driftAllowance, expectedInterval = redlockDrift(client, scaleTTL), full.RenewInterval
	)
	for i, l := range leases {
		lastVU[i] = l.ValidUntil()
	}
	startHogs(b)
	rlog.reset() // acquisition's failures are not the window's
	b.ResetTimer()
	for range b.N {
		srv0 := readServers(b, admin)
		rt0 := snapshotAll(counters)
		cpu0 := processCPU()
		sched0 := readSched()
		start := time.Now()
		tick := time.NewTicker(scaleSample)
		sec0 := timelinePoint{refreshes: refreshes, failures: rlog.count(), cpu: cpu0, at: start}
		for end := start.Add(scaleWindow); time.Now().Before(end); {
			<-tick.C
			now := time.Now()
			if now.Sub(sec0.at) >= time.Second {
				p := timelinePoint{refreshes: refreshes, failures: rlog.count(), cpu: processCPU(), at: now}
				timeline = append(timeline, p.since(sec0))
				sec0 = p
			}
			for i, l := range leases {
				if m := lastVU[i].Sub(now); m < minMargin {
					minMargin = m
				}
				vu := l.ValidUntil()
				if vu.Equal(lastVU[i]) {
					continue
				}
				gap := vu.Sub(lastVU[i]) // between the starts of two refreshes
				refreshes++
				maxGap = max(maxGap, gap)
				if gap > lateThreshold {
					retried++
				}
				lastVU[i] = vu
			}
		}
		tick.Stop()
		wall += time.Since(start)
		cpu += processCPU() - cpu0
		sched = sched.add(readSched().sub(sched0))
		srv1 := readServers(b, admin)
		for j := range srv1 {
			d := srv1[j].sub(srv0[j])
			perServer[j] = perServer[j].add(d)
			total = total.add(d)
		}
		rt1 := snapshotAll(counters)
		for j := range rt1 {
			d := rt1[j].sub(rt0[j])
			perNode[j] = perNode[j].add(d)
			rt = rt.add(d)
		}
	}
	b.StopTimer()

	lost := 0
	var lostErr error
	for _, l := range leases {
		select {
		case <-l.Context().Done():
			lost++
			if lostErr == nil {
				lostErr = context.Cause(l.Context())
			}
		default:
		}
	}
	load := loadAverage()

	sec := wall.Seconds()
	b.ReportMetric(100*cpu.Seconds()/sec, "cpu-%")
	b.ReportMetric(100*total.cpu/sec, "redis-cpu-%")
	b.ReportMetric(float64(total.commands)/sec, "redis-cmds/s")
	b.ReportMetric(float64(total.scripts)/sec, "evalsha/s")
	b.ReportMetric(float64(rt.cmds+rt.pipelines)/sec, "round-trips/s")
	b.ReportMetric(float64(rt.pipelines)/sec, "pipelines/s")
	b.ReportMetric(ratio(rt.pipelined, rt.pipelines), "cmds/pipeline")
	b.ReportMetric(100*ratio(rt.pipelined, rt.pipelined+rt.cmds), "batched-%")
	b.ReportMetric(float64(refreshes)/sec, "refreshes/s")
	b.ReportMetric(float64(retried), "retried-refreshes")
	failures, reasons := rlog.result()
	b.ReportMetric(float64(failures), "failed-refreshes")
	b.ReportMetric(maxGap.Seconds(), "max-renew-gap-s")
	b.ReportMetric(minMargin.Seconds(), "min-margin-s")
	b.ReportMetric(float64(lost), "lost-leases")
	b.ReportMetric(acquire.Seconds(), "acquire-s")
	b.ReportMetric(load, "load1")
	b.Logf("window %s: expected %.0f refreshes/s (N/RenewInterval); healthy margin at refresh start TTL - drift - RenewInterval = %s",
		wall.Round(time.Millisecond), float64(n)/expectedInterval.Seconds(),
		(scaleTTL - driftAllowance - expectedInterval).Round(time.Millisecond))
	var nodeLine strings.Builder
	for j := range perNode {
		p, s := perNode[j], perServer[j]
		fmt.Fprintf(&nodeLine, " [%d: %.0f cmds/s, %.0f evalsha/s, cpu %.1f%%; %.0f single + %.0f pipelines/s x %.1f; %d slow]",
			j, float64(s.commands)/sec, float64(s.scripts)/sec, 100*s.cpu/sec,
			float64(p.cmds)/sec, float64(p.pipelines)/sec, ratio(p.pipelined, p.pipelines), p.slow)
	}
	b.Logf("per node (server: commands, scripts, CPU; client: round trips, slow = round trips >= 50ms):%s", nodeLine.String())
	b.Logf("servers: %.1f us per script (inner commands included); INFO: %.0f calls/s, %.1f us each, %.0f%% of script time. "+
		"Go scheduler (sampled): %d goroutine waits for a thread, %d of them >= 10ms, %d >= 50ms; %d GC cycles",
		ratio(total.scriptUsec, total.scripts), float64(total.infoCalls)/sec, ratio(total.infoUsec, total.infoCalls),
		100*ratio(total.infoUsec, total.scriptUsec), sched.waits, sched.over10ms, sched.over50ms, sched.gcs)
	if failures > 0 || lost > 0 {
		b.Logf("timeline, per second (refreshes seen/failed refreshes/process CPU%%): %s", strings.Join(timeline, " "))
	}
	// The most frequent reason (the log keeps 10 lines).
	keys := slices.Collect(maps.Keys(reasons))
	slices.SortFunc(keys, func(x, y string) int { return reasons[y] - reasons[x] })
	if len(keys) > 0 {
		sampled := 0
		for _, n := range reasons {
			sampled += n
		}
		b.Logf("refresh failed %d times; of %d sampled failures, %d for the most frequent reason (%d other reasons): %s",
			failures, sampled, reasons[keys[0]], len(keys)-1, keys[0])
	}
	diagnose(b, client, nodes)
	if lost > 0 {
		// A failed benchmark prints no metrics line: repeat the main ones.
		b.Errorf("%d of %d leases lost during the window (cpu %.1f%%, %d failed refreshes, %.0f refreshes/s, load1 %.2f); first: %v",
			lost, n, 100*cpu.Seconds()/sec, failures, float64(refreshes)/sec, load, lostErr)
	}

	t1 := time.Now()
	releaseAll(leases)
	released.Store(true)
	b.Logf("released %d leases in %s", n, time.Since(t1).Round(time.Millisecond))
}

// startHogs starts REDLEASE_SCALE_HOGS busy-loop processes, stopped by PID
// when the benchmark ends.
func startHogs(b *testing.B) {
	v := os.Getenv("REDLEASE_SCALE_HOGS")
	if v == "" {
		return
	}
	k, err := strconv.Atoi(v)
	if err != nil || k < 0 {
		b.Fatalf("REDLEASE_SCALE_HOGS=%q: want a number of processes", v)
	}
	for range k {
		cmd := exec.Command("sh", "-c", "while :; do :; done")
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		})
	}
	b.Logf("started %d busy-loop processes for the window", k)
}

// diagnose logs, per node, how requests fare through redlock (5 Inspects,
// 200ms apart: an error is a missed NodeTimeout or a refusal) next to a
// PING sent straight on the same go-redis client: a node that answers the
// PING at once but fails every redlock request is stuck in the client.
func diagnose(b *testing.B, client *redlock.Client, nodes []redis.UniversalClient) {
	b.Helper()
	ctx := context.Background()
	const rounds = 5
	fails := make([]int, len(nodes))
	lastErr := make([]error, len(nodes))
	for r := range rounds {
		if r > 0 {
			time.Sleep(200 * time.Millisecond)
		}
		info, err := client.Inspect(ctx, "scale:diagnose")
		if info == nil {
			b.Logf("diagnose: inspect: %v", err)
			return
		}
		for i, ns := range info.Nodes {
			if ns.Err != nil {
				fails[i]++
				lastErr[i] = ns.Err
			}
		}
	}
	var line strings.Builder
	for i, c := range nodes {
		pctx, cancel := context.WithTimeout(ctx, time.Second)
		t0 := time.Now()
		err := c.Ping(pctx).Err()
		rtt := time.Since(t0)
		cancel()
		fmt.Fprintf(&line, " [%d: %d/%d failed", i, fails[i], rounds)
		if lastErr[i] != nil {
			fmt.Fprintf(&line, " (%v)", lastErr[i])
		}
		fmt.Fprintf(&line, ", PING %s", rtt.Round(time.Microsecond))
		if err != nil {
			fmt.Fprintf(&line, " (%v)", err)
		}
		line.WriteString("]")
	}
	b.Logf("diagnose: redlock requests per node vs a direct PING:%s", line.String())
}

// releaseAll releases every lease (nil entries skipped), 64 at a time.
func releaseAll(leases []*lease.Lease) {
	var (
		wg   sync.WaitGroup
		next atomic.Int64
	)
	for range scaleWorkers {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= len(leases) {
					return
				}
				if l := leases[i]; l != nil {
					_ = l.Release(context.Background())
				}
			}
		})
	}
	wg.Wait()
}

// refreshLog is a lease Logger that counts failed refreshes by error,
// and drops every other message (as the default null logger does).
type refreshLog struct {
	hclog.Logger
	mu       sync.Mutex
	failures int
	reasons  map[string]int
}

var scaleKeyRE = regexp.MustCompile(`scale:\d+:\d+`)

func (r *refreshLog) Debug(msg string, args ...any) {
	if msg != "refresh failed; retrying" {
		return
	}
	r.mu.Lock()
	r.failures++
	n := r.failures
	r.mu.Unlock()
	// Formatting an error costs as much as a refresh: sample the reasons
	// (every one of the first 100, then one in 100), or an overloaded run
	// would measure this logger as much as the leases.
	if n > 100 && n%100 != 0 {
		return
	}
	reason := "?"
	for i := 0; i+1 < len(args); i += 2 {
		if args[i] == "error" {
			reason = scaleKeyRE.ReplaceAllString(fmt.Sprint(args[i+1]), "<key>")
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.reasons) < 20 {
		r.reasons[reason]++
	} else if _, ok := r.reasons[reason]; ok {
		r.reasons[reason]++
	}
}

func (r *refreshLog) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.failures
}

func (r *refreshLog) reset() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.failures = 0
	clear(r.reasons)
}

func (r *refreshLog) result() (int, map[string]int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.failures, maps.Clone(r.reasons)
}

// timelinePoint is a reading of the window's counters.
type timelinePoint struct {
	refreshes, failures int
	cpu                 time.Duration
	at                  time.Time
}

// since formats what happened from o to p, per second.
func (p timelinePoint) since(o timelinePoint) string {
	d := p.at.Sub(o.at).Seconds()
	return fmt.Sprintf("%.0f/%.0f/%.0f", float64(p.refreshes-o.refreshes)/d, float64(p.failures-o.failures)/d,
		100*(p.cpu-o.cpu).Seconds()/d)
}

// redlockDrift is redlock's drift allowance for ttl (see redlock.Config).
func redlockDrift(c *redlock.Client, ttl time.Duration) time.Duration {
	return lockrule.Drift(ttl, c.Config().DriftFactor)
}

func ratio(a, b int64) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

// rtCounter is a go-redis hook that counts round trips: single commands
// (one Process each) and pipelines with the commands they carry.
// It also counts the round trips slower than redlock's default NodeTimeout
// (connection wait, network and server; not the time queued in redlock).
type rtCounter struct {
	cmds, pipelines, pipelined, slow atomic.Int64
}

type rtSnapshot struct{ cmds, pipelines, pipelined, slow int64 }

func (s rtSnapshot) sub(o rtSnapshot) rtSnapshot {
	return rtSnapshot{s.cmds - o.cmds, s.pipelines - o.pipelines, s.pipelined - o.pipelined, s.slow - o.slow}
}

func (s rtSnapshot) add(o rtSnapshot) rtSnapshot {
	return rtSnapshot{s.cmds + o.cmds, s.pipelines + o.pipelines, s.pipelined + o.pipelined, s.slow + o.slow}
}

func snapshotAll(hs []*rtCounter) []rtSnapshot {
	out := make([]rtSnapshot, len(hs))
	for i, h := range hs {
		out[i] = rtSnapshot{h.cmds.Load(), h.pipelines.Load(), h.pipelined.Load(), h.slow.Load()}
	}
	return out
}

func (h *rtCounter) timed(t0 time.Time) {
	if time.Since(t0) >= lockrule.DefaultNodeTimeout {
		h.slow.Add(1)
	}
}

func (h *rtCounter) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h *rtCounter) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		h.cmds.Add(1)
		defer h.timed(time.Now())
		return next(ctx, cmd)
	}
}

func (h *rtCounter) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		h.pipelines.Add(1)
		h.pipelined.Add(int64(len(cmds)))
		defer h.timed(time.Now())
		return next(ctx, cmds)
	}
}

// serverStats is what INFO tells about one server (or a sum).
type serverStats struct {
	commands   int64   // total_commands_processed
	scripts    int64   // calls of evalsha and eval
	scriptUsec int64   // their server time (inner commands included)
	infoCalls  int64   // calls of INFO (the scripts' run_id lookup, and ours)
	infoUsec   int64   // their server time
	cpu        float64 // used_cpu_user + used_cpu_sys, seconds
}

func (s serverStats) sub(o serverStats) serverStats {
	return serverStats{s.commands - o.commands, s.scripts - o.scripts, s.scriptUsec - o.scriptUsec,
		s.infoCalls - o.infoCalls, s.infoUsec - o.infoUsec, s.cpu - o.cpu}
}

func (s serverStats) add(o serverStats) serverStats {
	return serverStats{s.commands + o.commands, s.scripts + o.scripts, s.scriptUsec + o.scriptUsec,
		s.infoCalls + o.infoCalls, s.infoUsec + o.infoUsec, s.cpu + o.cpu}
}

func readServers(b *testing.B, admin []*redis.Client) []serverStats {
	b.Helper()
	out := make([]serverStats, len(admin))
	for i, c := range admin {
		info, err := c.Info(context.Background(), "stats", "commandstats", "cpu").Result()
		if err != nil {
			b.Fatal(err)
		}
		for line := range strings.SplitSeq(info, "\n") {
			name, val, ok := strings.Cut(strings.TrimSpace(line), ":")
			if !ok {
				continue
			}
			switch name {
			case "total_commands_processed":
				out[i].commands, _ = strconv.ParseInt(val, 10, 64)
			case "used_cpu_user", "used_cpu_sys":
				f, _ := strconv.ParseFloat(val, 64)
				out[i].cpu += f
			case "cmdstat_evalsha", "cmdstat_eval":
				calls, usec := cmdstat(val)
				out[i].scripts += calls
				out[i].scriptUsec += usec
			case "cmdstat_info":
				out[i].infoCalls, out[i].infoUsec = cmdstat(val)
			}
		}
	}
	return out
}

// cmdstat reads calls and usec from an INFO commandstats line's value.
func cmdstat(val string) (calls, usec int64) {
	for field := range strings.SplitSeq(val, ",") {
		k, v, _ := strings.Cut(field, "=")
		switch k {
		case "calls":
			calls, _ = strconv.ParseInt(v, 10, 64)
		case "usec":
			usec, _ = strconv.ParseInt(v, 10, 64)
		}
	}
	return calls, usec
}

// schedStats counts, from runtime/metrics, how long runnable goroutines
// waited to run (/sched/latencies:seconds) and the GC cycles.
type schedStats struct{ waits, over10ms, over50ms, gcs uint64 }

func (s schedStats) sub(o schedStats) schedStats {
	return schedStats{s.waits - o.waits, s.over10ms - o.over10ms, s.over50ms - o.over50ms, s.gcs - o.gcs}
}

func (s schedStats) add(o schedStats) schedStats {
	return schedStats{s.waits + o.waits, s.over10ms + o.over10ms, s.over50ms + o.over50ms, s.gcs + o.gcs}
}

func readSched() schedStats {
	ms := []metrics.Sample{{Name: "/sched/latencies:seconds"}, {Name: "/gc/cycles/total:gc-cycles"}}
	metrics.Read(ms)
	var s schedStats
	if ms[0].Value.Kind() == metrics.KindFloat64Histogram {
		h := ms[0].Value.Float64Histogram()
		for i, c := range h.Counts {
			s.waits += c
			lo := h.Buckets[i] // the bucket's lower bound
			if lo >= 0.010 {
				s.over10ms += c
			}
			if lo >= 0.050 {
				s.over50ms += c
			}
		}
	}
	if ms[1].Value.Kind() == metrics.KindUint64 {
		s.gcs = ms[1].Value.Uint64()
	}
	return s
}

// processCPU is the CPU time (user + system) this process has used.
func processCPU() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// loadAverage is the 1-minute load average (Linux; 0 elsewhere).
func loadAverage() float64 {
	raw, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return 0
	}
	fields := strings.Fields(string(raw))
	if len(fields) == 0 {
		return 0
	}
	f, _ := strconv.ParseFloat(fields[0], 64)
	return f
}
