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
	r := newScaleRun(b, n)
	r.acquireAll()
	startHogs(b)
	r.rlog.reset() // acquisition's failures are not the window's
	b.ResetTimer()
	for range b.N {
		r.window()
	}
	b.StopTimer()
	r.report()
	t1 := time.Now()
	releaseAll(r.leases)
	r.released.Store(true)
	b.Logf("released %d leases in %s", n, time.Since(t1).Round(time.Millisecond))
}

// scaleRun is one sub-benchmark: its servers and clients, its leases, and
// the figures its windows add up.
type scaleRun struct {
	b        *testing.B
	n        int
	client   *redlock.Client
	nodes    []redis.UniversalClient
	counters []*rtCounter
	admin    []*redis.Client // INFO, outside the counted clients
	rlog     *refreshLog
	cfg      lease.Config
	leases   []*lease.Lease
	released atomic.Bool
	acquire  time.Duration

	wall, cpu            time.Duration
	total                serverStats
	rt                   rtSnapshot
	perNode              []rtSnapshot
	perServer            []serverStats
	sched                schedStats
	timeline             []string
	refreshes, retried   int
	maxGap, minMargin    time.Duration
	lastVU               []time.Time
	renew, lateThreshold time.Duration
}

// newScaleRun starts the servers and a client on them, counting round trips.
func newScaleRun(b *testing.B, n int) *scaleRun {
	r := &scaleRun{b: b, n: n, perNode: make([]rtSnapshot, scaleNodes), perServer: make([]serverStats, scaleNodes),
		minMargin: scaleTTL, lastVU: make([]time.Time, n), leases: make([]*lease.Lease, n)}
	for _, s := range redistest.Start(b, scaleNodes).Servers() {
		c := redis.NewClient(&redis.Options{Addr: s.Addr(), PoolSize: scalePool})
		b.Cleanup(func() { _ = c.Close() })
		h := &rtCounter{}
		c.AddHook(h)
		r.nodes = append(r.nodes, c)
		r.counters = append(r.counters, h)
		r.admin = append(r.admin, s.Client(b))
	}
	ctx := context.Background()
	client, err := redlock.New(ctx, redlock.Config{}, r.nodes...)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = client.Close() })
	if err := client.Bootstrap(ctx); err != nil {
		b.Fatal(err)
	}
	r.client = client
	r.rlog = &refreshLog{Logger: hclog.NewNullLogger(), reasons: map[string]int{}}
	r.cfg = lease.Config{TTL: scaleTTL, ID: "scale-bench", Logger: r.rlog}
	r.renew = scaleTTL / 3 // the defaults, spelled out for the metrics
	r.lateThreshold = r.renew + r.renew/4/2
	b.Cleanup(func() { // on failure paths too; before the client closes
		if !r.released.Load() {
			releaseAll(r.leases)
		}
	})
	return r
}

// acquireAll acquires the n leases with scaleWorkers workers.
func (r *scaleRun) acquireAll() {
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
			for i := int(next.Add(1) - 1); i < r.n; i = int(next.Add(1) - 1) {
				if err := r.acquireOne(i, &retries); err != nil {
					failMu.Lock()
					failErr = err
					failMu.Unlock()
					return
				}
			}
		})
	}
	wg.Wait()
	r.acquire = time.Since(t0)
	if failErr != nil {
		diagnose(r.b, r.client, r.nodes)
		r.b.Fatal(failErr)
	}
	r.b.Logf("acquired %d leases in %s (%.0f/s, %d retried attempts)",
		r.n, r.acquire.Round(time.Millisecond), float64(r.n)/r.acquire.Seconds(), retries.Load())
	for i, l := range r.leases {
		r.lastVU[i] = l.ValidUntil()
	}
}

// acquireOne acquires lease i, retrying within scaleAcquireBudget.
func (r *scaleRun) acquireOne(i int, retries *atomic.Int64) error {
	key := fmt.Sprintf("scale:%d:%d", r.n, i)
	giveUp := time.Now().Add(scaleAcquireBudget)
	for attempt := 1; ; attempt++ {
		l, err := lease.TryAcquire(context.Background(), r.client, key, r.cfg)
		if err == nil {
			r.leases[i] = l
			return nil
		}
		if time.Now().After(giveUp) {
			return fmt.Errorf("acquire %s: %d attempts: %w", key, attempt, err)
		}
		retries.Add(1)
		// A failed attempt deletes its keys in the background, and a copy
		// it could not delete blocks the key on that node until it
		// expires (TTL): back off.
		time.Sleep(min(time.Duration(attempt)*100*time.Millisecond, time.Second))
	}
}

// window watches the leases for scaleWindow and adds up its figures.
func (r *scaleRun) window() {
	srv0 := readServers(r.b, r.admin)
	rt0 := snapshotAll(r.counters)
	cpu0 := processCPU()
	sched0 := readSched()
	start := time.Now()
	tick := time.NewTicker(scaleSample)
	sec0 := timelinePoint{refreshes: r.refreshes, failures: r.rlog.count(), cpu: cpu0, at: start}
	for end := start.Add(scaleWindow); time.Now().Before(end); {
		<-tick.C
		now := time.Now()
		if now.Sub(sec0.at) >= time.Second {
			p := timelinePoint{refreshes: r.refreshes, failures: r.rlog.count(), cpu: processCPU(), at: now}
			r.timeline = append(r.timeline, p.since(sec0))
			sec0 = p
		}
		r.sample(now)
	}
	tick.Stop()
	r.wall += time.Since(start)
	r.cpu += processCPU() - cpu0
	r.sched = r.sched.add(readSched().sub(sched0))
	for j, s := range readServers(r.b, r.admin) {
		d := s.sub(srv0[j])
		r.perServer[j] = r.perServer[j].add(d)
		r.total = r.total.add(d)
	}
	for j, s := range snapshotAll(r.counters) {
		d := s.sub(rt0[j])
		r.perNode[j] = r.perNode[j].add(d)
		r.rt = r.rt.add(d)
	}
}

// sample records, for every lease, the margin left and a refresh seen
// since the last sample (ValidUntil moved).
func (r *scaleRun) sample(now time.Time) {
	for i, l := range r.leases {
		if m := r.lastVU[i].Sub(now); m < r.minMargin {
			r.minMargin = m
		}
		vu := l.ValidUntil()
		if vu.Equal(r.lastVU[i]) {
			continue
		}
		gap := vu.Sub(r.lastVU[i]) // between the starts of two refreshes
		r.refreshes++
		r.maxGap = max(r.maxGap, gap)
		if gap > r.lateThreshold {
			r.retried++
		}
		r.lastVU[i] = vu
	}
}

// lost counts the leases that ended during the windows, with the first
// one's error.
func (r *scaleRun) lost() (int, error) {
	lost := 0
	var first error
	for _, l := range r.leases {
		select {
		case <-l.Context().Done():
			lost++
			if first == nil {
				first = context.Cause(l.Context())
			}
		default:
		}
	}
	return lost, first
}

// report reports the metrics and logs the details; it fails the
// benchmark if a lease was lost.
func (r *scaleRun) report() {
	b, sec := r.b, r.wall.Seconds()
	lost, lostErr := r.lost()
	load := loadAverage()
	failures, reasons := r.rlog.result()
	for _, m := range []struct {
		v    float64
		unit string
	}{
		{100 * r.cpu.Seconds() / sec, "cpu-%"},
		{100 * r.total.cpu / sec, "redis-cpu-%"},
		{float64(r.total.commands) / sec, "redis-cmds/s"},
		{float64(r.total.scripts) / sec, "evalsha/s"},
		{float64(r.rt.cmds+r.rt.pipelines) / sec, "round-trips/s"},
		{float64(r.rt.pipelines) / sec, "pipelines/s"},
		{ratio(r.rt.pipelined, r.rt.pipelines), "cmds/pipeline"},
		{100 * ratio(r.rt.pipelined, r.rt.pipelined+r.rt.cmds), "batched-%"},
		{float64(r.refreshes) / sec, "refreshes/s"},
		{float64(r.retried), "retried-refreshes"},
		{float64(failures), "failed-refreshes"},
		{r.maxGap.Seconds(), "max-renew-gap-s"},
		{r.minMargin.Seconds(), "min-margin-s"},
		{float64(lost), "lost-leases"},
		{r.acquire.Seconds(), "acquire-s"},
		{load, "load1"},
	} {
		b.ReportMetric(m.v, m.unit)
	}
	r.logDetails(failures, lost, reasons)
	diagnose(b, r.client, r.nodes)
	if lost > 0 {
		// A failed benchmark prints no metrics line: repeat the main ones.
		b.Errorf("%d of %d leases lost during the window (cpu %.1f%%, %d failed refreshes, %.0f refreshes/s, load1 %.2f); first: %v",
			lost, r.n, 100*r.cpu.Seconds()/sec, failures, float64(r.refreshes)/sec, load, lostErr)
	}
}

// logDetails logs the expected rate, the per-node figures, the servers'
// time per script and the most frequent reason a refresh failed.
func (r *scaleRun) logDetails(failures, lost int, reasons map[string]int) {
	b, sec := r.b, r.wall.Seconds()
	b.Logf("window %s: expected %.0f refreshes/s (N/RenewInterval); healthy margin at refresh start TTL - drift - RenewInterval = %s",
		r.wall.Round(time.Millisecond), float64(r.n)/r.renew.Seconds(),
		(scaleTTL - redlockDrift(r.client, scaleTTL) - r.renew).Round(time.Millisecond))
	var nodeLine strings.Builder
	for j := range r.perNode {
		p, s := r.perNode[j], r.perServer[j]
		fmt.Fprintf(&nodeLine, " [%d: %.0f cmds/s, %.0f evalsha/s, cpu %.1f%%; %.0f single + %.0f pipelines/s x %.1f; %d slow]",
			j, float64(s.commands)/sec, float64(s.scripts)/sec, 100*s.cpu/sec,
			float64(p.cmds)/sec, float64(p.pipelines)/sec, ratio(p.pipelined, p.pipelines), p.slow)
	}
	b.Logf("per node (server: commands, scripts, CPU; client: round trips, slow = round trips >= 50ms):%s", nodeLine.String())
	t, sc := r.total, r.sched
	b.Logf("servers: %.1f us per script (inner commands included); INFO: %.0f calls/s, %.1f us each, %.0f%% of script time. "+
		"Go scheduler (sampled): %d goroutine waits for a thread, %d of them >= 10ms, %d >= 50ms; %d GC cycles",
		ratio(t.scriptUsec, t.scripts), float64(t.infoCalls)/sec, ratio(t.infoUsec, t.infoCalls),
		100*ratio(t.infoUsec, t.scriptUsec), sc.waits, sc.over10ms, sc.over50ms, sc.gcs)
	if failures > 0 || lost > 0 {
		b.Logf("timeline, per second (refreshes seen/failed refreshes/process CPU%%): %s", strings.Join(r.timeline, " "))
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
			case "cmdstat_evalsha", "cmdstat_eval", "cmdstat_fcall":
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
