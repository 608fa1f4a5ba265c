package faults

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redlease/redlease/internal/testing/checker"
	"github.com/redlease/redlease/internal/testing/checker/wire"
	"github.com/redlease/redlease/internal/testing/faultproxy"
	"github.com/redlease/redlease/internal/testing/redistest"
	"github.com/redlease/redlease/redlock"
)

// Timing of every scenario: a TTL short enough for a test, a quarantine
// (MaxTTL) of two TTLs, a node timeout a few round trips long under -race
// on two cores.
const (
	ttl         = time.Second
	maxTTL      = 2 * time.Second
	nodeTimeout = 100 * time.Millisecond
	electionKey = "faults:election"
	fenceKey    = electionKey + ":fence"
	markerKey   = "{redlease}:marker"
	// waitLong bounds the waits for what must happen within a few TTLs.
	waitLong = 10 * time.Second
)

// rigOptions describe a scenario's deployment.
type rigOptions struct {
	nodes, cands int // default 3 and 3
	persistence  redistest.Persistence
	resignAfter  time.Duration // candidates resign after this long in office (0: never)
	// redisDefaults candidates (the first ones) use go-redis clients with
	// their default options (retries, second-long timeouts), which redlock
	// must not depend on; the others use short timeouts and no retries.
	redisDefaults int
	// Negative controls: guards turned off.
	unsafe        bool // candidates believe they lead from OnElected to OnDemoted
	noFencing     bool // redlock DisableFencing: every token is 0
	unfencedStore bool // the store checks no token
	noQuarantine  bool // redlock DisableQuarantine: forgetful nodes vote at once
	noReplIDCheck bool // the quarantine compares run_ids only (internal/unsafeopt)
	allowEviction bool // redlock AllowEviction: evicting nodes vote
	// permits, above 0: the candidates hold permits of a semaphore of
	// this many (candidate -permits) instead of campaigning, judged by CK
	// and per permit by C1 and C2; plusOne (a negative control) takes
	// them among one key more.
	permits int
	plusOne bool
	// sentinel: every node is a Sentinel group (a master and one
	// replica, watched by three sentinels), reached by the candidates
	// through go-redis FailoverClients, without proxies (see sentinel_test.go).
	sentinel bool
	// cluster: the nodes are one Redis Cluster of 3 masters with a
	// replica each, reached by the candidates through go-redis
	// ClusterClients (redlock.NewCluster) whose dialer goes through one
	// proxy per server (see cluster_test.go); node i is server i.
	cluster      bool
	compute, gap time.Duration
}

// rig is one scenario's world: servers, a fenced store, candidate
// processes each with one proxy per node, and the history of it all.
type rig struct {
	t     *testing.T
	o     rigOptions
	bin   string
	dir   string
	rng   *rand.Rand
	g     *redistest.Group
	admin []*redis.Client // direct to the servers, for faults and checks
	store *store
	hist  *history
	slots []*slot
	sent  *sentinels         // rigOptions.sentinel
	cl    *redistest.Cluster // rigOptions.cluster

	mu           sync.Mutex
	procs        []*proc
	serverPaused map[int]bool
	readers      sync.WaitGroup
}

// slot is one candidate seat: its proxies (one per node) and the process
// that sits in it now (a killed candidate is replaced by a new process).
type slot struct {
	i       int
	name    string // the candidates' ID: c<i> unless set
	proxies []*faultproxy.Proxy
	cur     *proc
	gen     int
}

// proc is one candidate process.
type proc struct {
	id     string
	pid    int
	cmd    *exec.Cmd
	log    string
	slot   *slot
	exited chan struct{}
	err    error // Wait's result, once exited is closed
	// wantExit is the exit status the test expects (see spawnRefused);
	// 0: the candidate must run until the test ends it.
	wantExit int

	mu     sync.Mutex
	ending bool // killed or stopped by the test
}

func (p *proc) setEnding() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.ending = true
}

func (p *proc) isEnding() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.ending
}

func (p *proc) alive() bool {
	select {
	case <-p.exited:
		return false
	default:
		return true
	}
}

// runSeed is the seed of the whole run: REDLEASE_FAULTS_SEED, or the time
// of the first call, so that one seed replays every scenario of a run.
var runSeed = sync.OnceValues(func() (uint64, error) {
	if v := os.Getenv("REDLEASE_FAULTS_SEED"); v != "" {
		s, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("REDLEASE_FAULTS_SEED: %w", err)
		}
		return s, nil
	}
	return uint64(time.Now().UnixNano()), nil
})

// seed returns the seed of a scenario: the run's seed mixed with the
// scenario's name, so that every scenario has its own.
func seed(t *testing.T) uint64 {
	s, err := runSeed()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("seed %d (REDLEASE_FAULTS_SEED=%d replays this scenario's choices)", s, s)
	h := fnv.New64a()
	h.Write([]byte(t.Name()))
	return s ^ h.Sum64()
}

func newRig(t *testing.T, bin string, o rigOptions) *rig {
	if o.nodes == 0 {
		o.nodes = 3
	}
	if o.cands == 0 {
		o.cands = 3
	}
	s := seed(t)
	record(t.Name(), &report{}) // a row in the table, even if the scenario fails early
	dir := t.TempDir()
	if keep := os.Getenv("REDLEASE_FAULTS_KEEP"); keep != "" {
		// A debugging aid: the history and the candidates' logs are kept
		// there after the test.
		dir = filepath.Join(keep, strings.ReplaceAll(t.Name(), "/", "_"))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return &rig{t: t, o: o, bin: bin, dir: dir, rng: rand.New(rand.NewPCG(s, s>>1|1)),
		hist: newHistory(), serverPaused: map[int]bool{}}
}

// start launches the servers (declared brand new, so that they vote at
// once), the store, the proxies and the candidates, and waits for every
// candidate to be ready and for the first term.
func (r *rig) start() {
	t := r.t
	t.Helper()
	if r.o.cluster {
		r.startCluster()
	} else {
		r.g = redistest.Start(t, r.o.nodes, redistest.Options{Persistence: r.o.persistence})
	}
	for _, s := range r.servers() {
		if r.cl != nil {
			r.admin = append(r.admin, clusterAdminClient(t, s.Addr()))
			continue
		}
		r.admin = append(r.admin, adminClient(t, s.Addr()))
	}
	if r.o.sentinel {
		// Before the bootstrap: a master's replication ID changes when
		// its first replica attaches, and would quarantine it.
		r.sent = startSentinels(t, r.g)
	}
	r.bootstrap()
	r.store = newStore(t, !r.o.unfencedStore)
	for i := range r.o.cands {
		sl := &slot{i: i}
		for _, s := range r.servers() {
			if r.sent != nil {
				break // FailoverClients dial what the sentinels name
			}
			sl.proxies = append(sl.proxies, redistest.NewProxy(t, s.Addr()))
		}
		r.slots = append(r.slots, sl)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("history: %s (candidates' logs beside it; REDLEASE_FAULTS_KEEP=<dir> keeps them after the test)", r.dump())
		}
	})
	// Registered last, so it runs first: candidates die before the
	// proxies, the store and the servers they use, and before the history
	// is written.
	t.Cleanup(r.cleanup)
	from := r.hist.len()
	for _, sl := range r.slots {
		r.spawn(sl)
	}
	for _, sl := range r.slots {
		r.waitEv(from, waitLong, "candidate "+sl.cur.id+" ready", func(ev wire.Event) bool {
			return ev.Ev == wire.Ready && ev.PID == sl.cur.pid
		})
	}
	r.waitEv(from, waitLong, "a first term", isElected)
}

// bootstrap declares the servers brand new (no lock can have existed), so
// that they vote at once instead of after MaxTTL.
func (r *rig) bootstrap() {
	if r.cl != nil {
		r.bootstrapCluster()
		return
	}
	var nodes []redis.UniversalClient
	for _, c := range r.admin {
		nodes = append(nodes, c)
	}
	ctx := context.Background()
	c, err := redlock.New(ctx, redlock.Config{NodeTimeout: 500 * time.Millisecond, MaxTTL: maxTTL}, nodes...)
	if err != nil {
		r.t.Fatalf("redlock.New: %v", err)
	}
	defer c.Close()
	if err := c.Bootstrap(ctx); err != nil {
		r.t.Fatalf("bootstrap: %v", err)
	}
}

// spawn starts a candidate process in sl; extra are more flags of the
// candidate program.
func (r *rig) spawn(sl *slot, extra ...string) *proc {
	t := r.t
	t.Helper()
	sl.gen++
	id := sl.name
	if id == "" {
		id = fmt.Sprintf("c%d", sl.i)
	}
	if sl.gen > 1 {
		id = fmt.Sprintf("%s.%d", id, sl.gen)
	}
	args := append(r.candidateArgs(sl, id), extra...)
	p := &proc{id: id, slot: sl, log: filepath.Join(r.dir, id+".log"), exited: make(chan struct{})}
	logf, err := os.Create(p.log)
	if err != nil {
		t.Fatalf("candidate log: %v", err)
	}
	defer logf.Close()
	p.cmd = exec.Command(r.bin, args...)
	p.cmd.Stderr = logf
	// The kernel kills the candidate if this process dies without its
	// cleanups (see redistest's Pdeathsig).
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	out, err := p.cmd.StdoutPipe()
	if err != nil {
		t.Fatalf("candidate stdout: %v", err)
	}
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("start candidate: %v", err)
	}
	p.pid = p.cmd.Process.Pid
	r.mu.Lock()
	r.procs = append(r.procs, p)
	r.mu.Unlock()
	sl.cur = p
	r.hist.add(wire.Event{Ev: checker.Spawn, ID: id, PID: p.pid, T: wire.Now()})
	r.readers.Go(func() { r.read(p, out) })
	return p
}

// candidateArgs are the flags of candidate id in sl: its nodes (servers,
// cluster or Sentinel groups) and the rig's options.
func (r *rig) candidateArgs(sl *slot, id string) []string {
	nodes := []string{"-nodes", strings.Join(sl.addrs(), ",")}
	if r.cl != nil {
		nodes = r.clusterArgs(sl)
	}
	if r.sent != nil {
		nodes = []string{"-sentinels", strings.Join(r.sent.ss.Addrs(), ","), "-masters", strings.Join(r.sent.ss.Groups(), ",")}
	}
	args := append([]string{"-id", id}, nodes...)
	args = append(args, "-key", electionKey, "-store", r.store.url(),
		"-ttl", ttl.String(), "-maxttl", maxTTL.String(), "-node-timeout", nodeTimeout.String(),
		"-resign-after", r.o.resignAfter.String())
	for _, f := range []struct {
		on   bool
		flag string
	}{
		{r.o.unsafe, "-unsafe-ignore-deadline"},
		{r.o.noFencing, "-fencing=false"},
		{sl.i < r.o.redisDefaults, "-redis-defaults"},
	} {
		if f.on {
			args = append(args, f.flag)
		}
	}
	if r.o.compute > 0 {
		args = append(args, "-compute", r.o.compute.String())
	}
	if r.o.gap > 0 {
		args = append(args, "-gap", r.o.gap.String())
	}
	for _, f := range []struct {
		on   bool
		flag string
	}{
		{r.o.noQuarantine, "-disable-quarantine"},
		{r.o.allowEviction, "-allow-eviction"},
		{r.o.noReplIDCheck, "-no-replication-id-check"},
		{r.o.plusOne, "-unsafe-permits-plus-one"},
	} {
		if f.on {
			args = append(args, f.flag)
		}
	}
	if r.o.permits > 0 {
		args = append(args, "-permits", strconv.Itoa(r.o.permits))
	}
	return args
}

// read adds the events candidate p writes on out to the history, until
// it exits.
func (r *rig) read(p *proc, out io.Reader) {
	sc := bufio.NewScanner(out)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		var ev wire.Event
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			r.hist.add(wire.Event{Ev: wire.Failure, ID: p.id, PID: p.pid, T: wire.Now(), Cause: "bad line: " + sc.Text()})
			continue
		}
		ev.PID = p.pid
		r.hist.add(ev)
	}
	p.err = p.cmd.Wait()
	close(p.exited)
}

// spawnRefused starts a candidate in sl that redlock.New must refuse, and
// returns the Refused event it reports, once it has exited with status 3.
// It fails the test if the candidate starts campaigning instead, or says
// nothing within waitLong.
func (r *rig) spawnRefused(sl *slot, extra ...string) wire.Event {
	t := r.t
	t.Helper()
	from := r.hist.len()
	p := r.spawn(sl, extra...)
	p.wantExit = 3
	ev, _ := r.waitEv(from, waitLong, "candidate "+p.id+" refused or ready", func(ev wire.Event) bool {
		return ev.PID == p.pid && (ev.Ev == wire.Refused || ev.Ev == wire.Ready)
	})
	if ev.Ev == wire.Ready {
		r.kill(p)
		t.Fatalf("candidate %s was not refused: redlock.New accepted its nodes %v", p.id, sl.addrs())
	}
	select {
	case <-p.exited:
	case <-time.After(waitLong):
		r.kill(p)
		t.Fatalf("refused candidate %s did not exit within %s", p.id, waitLong)
	}
	if code := p.cmd.ProcessState.ExitCode(); code != p.wantExit {
		t.Errorf("refused candidate %s exited with status %d, want %d: %v", p.id, code, p.wantExit, p.err)
	}
	t.Logf("candidate %s refused by redlock.New: %s", p.id, ev.Cause)
	return ev
}

func (sl *slot) addrs() []string { return faultproxy.Addrs(sl.proxies) }

// newSlot makes a candidate seat outside the rig's slots (no fault of the
// rig reaches it), with one new proxy per target.
func (r *rig) newSlot(name string, targets ...string) *slot {
	sl := &slot{i: -1, name: name}
	for _, target := range targets {
		sl.proxies = append(sl.proxies, redistest.NewProxy(r.t, target))
	}
	return sl
}

// cleanup kills every candidate still running, by PID, and waits for it.
func (r *rig) cleanup() {
	r.mu.Lock()
	procs := slices.Clone(r.procs)
	r.mu.Unlock()
	for _, p := range procs {
		if p.alive() {
			p.setEnding()
			_ = p.cmd.Process.Signal(syscall.SIGCONT)
			_ = p.cmd.Process.Kill()
		}
	}
	for _, p := range procs {
		<-p.exited
	}
	r.readers.Wait()
}

// mark records a fault in the history and returns when it happened.
func (r *rig) mark(format string, args ...any) int64 {
	now := wire.Now()
	what := fmt.Sprintf(format, args...)
	r.hist.add(wire.Event{Ev: checker.Fault, T: now, What: what})
	r.t.Logf("fault: %s", what)
	return now
}

// waitEv waits for the first event at index >= from that matches, and
// fails the test if none comes within timeout.
func (r *rig) waitEv(from int, timeout time.Duration, what string, match func(wire.Event) bool) (wire.Event, int) {
	r.t.Helper()
	ev, i, ok := r.hist.next(from, timeout, match)
	if !ok {
		r.t.Fatalf("no %s within %s", what, timeout)
	}
	return ev, i
}

func isElected(ev wire.Event) bool { return ev.Ev == wire.Elected }

// electedOther matches the start of a term of another process than p.
func electedOther(p *proc) func(wire.Event) bool {
	return func(ev wire.Event) bool { return ev.Ev == wire.Elected && ev.PID != p.pid }
}

// ended matches the given kind of event of p's term that began at ts.
func ended(kind string, p *proc, ts int64) func(wire.Event) bool {
	return func(ev wire.Event) bool { return ev.Ev == kind && ev.PID == p.pid && ev.TS == ts }
}

// leader waits until some candidate leads (a term began and has not been
// seen to end) and returns it with its term's Elected event.
func (r *rig) leader() (*proc, wire.Event) {
	r.t.Helper()
	p, ev, ok := r.tryLeader(waitLong)
	if !ok {
		r.t.Fatalf("nobody leads after %s", waitLong)
	}
	return p, ev
}

// tryLeader returns the leader if somebody leads within timeout.
func (r *rig) tryLeader(timeout time.Duration) (*proc, wire.Event, bool) {
	deadline := time.Now().Add(timeout)
	for {
		evs, changed := r.hist.snapshot()
		open := map[termKey]wire.Event{}
		for _, ev := range evs {
			switch ev.Ev {
			case wire.Elected:
				open[termKey{ev.PID, ev.TS}] = ev
			case wire.Stepdown, wire.Demoted:
				delete(open, termKey{ev.PID, ev.TS})
			}
		}
		var best wire.Event
		for _, ev := range open {
			if best.TS < ev.TS {
				best = ev
			}
		}
		if p := r.proc(best.PID); p != nil && p.alive() && !p.isEnding() {
			return p, best, true
		}
		select {
		case <-changed:
		case <-time.After(time.Until(deadline)):
			return nil, wire.Event{}, false
		}
	}
}

// waitWrites waits for n accepted writes of p's term ts.
func (r *rig) waitWrites(p *proc, ts int64, n int) {
	r.t.Helper()
	r.waitWritesWhere("write by "+p.id, n, func(ev wire.Event) bool { return ev.PID == p.pid && ev.TS == ts })
}

// waitWritesSince waits for n accepted writes of terms that began at or
// after the reading ts, by any leader: where leaders resign every few
// hundred milliseconds, one term may end before it wrote n times.
func (r *rig) waitWritesSince(ts int64, n int) {
	r.t.Helper()
	r.waitWritesWhere("a write", n, func(ev wire.Event) bool { return ev.TS >= ts })
}

// waitWritesWhere waits for n accepted writes that match, one after
// another in the history.
func (r *rig) waitWritesWhere(what string, n int, match func(wire.Event) bool) {
	r.t.Helper()
	from := 0
	for range n {
		_, i := r.waitEv(from, waitLong, what, func(ev wire.Event) bool {
			return ev.Ev == wire.Write && ev.OK && match(ev)
		})
		from = i + 1
	}
}

// waitTerms waits for n terms that begin at or after the reading since.
func (r *rig) waitTerms(n int, since int64, timeout time.Duration) []wire.Event {
	r.t.Helper()
	var out []wire.Event
	from := 0
	deadline := time.Now().Add(timeout)
	for len(out) < n {
		ev, i := r.waitEv(from, time.Until(deadline), fmt.Sprintf("%d terms (got %d)", n, len(out)), func(ev wire.Event) bool {
			return ev.Ev == wire.Elected && ev.TS >= since
		})
		out = append(out, ev)
		from = i + 1
	}
	return out
}

func (r *rig) proc(pid int) *proc {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, p := range r.procs {
		if p.pid == pid {
			return p
		}
	}
	return nil
}

// pause stops a candidate process (SIGSTOP) and returns once it is stopped.
func (r *rig) pause(p *proc) int64 {
	r.t.Helper()
	if err := p.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		r.t.Fatalf("SIGSTOP %s: %v", p.id, err)
	}
	if err := waitStopped(p.pid); err != nil {
		r.t.Fatal(err)
	}
	now := wire.Now()
	r.hist.add(wire.Event{Ev: checker.Pause, ID: p.id, PID: p.pid, T: now})
	r.t.Logf("fault: SIGSTOP candidate %s (pid %d)", p.id, p.pid)
	return now
}

func (r *rig) resume(p *proc) {
	r.t.Helper()
	r.hist.add(wire.Event{Ev: checker.Resume, ID: p.id, PID: p.pid, T: wire.Now()})
	if err := p.cmd.Process.Signal(syscall.SIGCONT); err != nil {
		r.t.Errorf("SIGCONT %s: %v", p.id, err)
	}
}

// kill kills a candidate process (SIGKILL) and waits for it.
func (r *rig) kill(p *proc) int64 {
	p.setEnding()
	now := wire.Now()
	r.hist.add(wire.Event{Ev: checker.Kill, ID: p.id, PID: p.pid, T: now})
	_ = p.cmd.Process.Kill()
	<-p.exited
	r.t.Logf("fault: kill -9 candidate %s (pid %d)", p.id, p.pid)
	return now
}

// waitStopped waits until /proc says pid is stopped.
func waitStopped(pid int) error {
	path := "/proc/" + strconv.Itoa(pid) + "/stat"
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		stat, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if i := bytes.LastIndexByte(stat, ')'); i >= 0 && i+2 < len(stat) && stat[i+2] == 'T' {
			return nil
		}
		time.Sleep(time.Millisecond)
	}
	return fmt.Errorf("pid %d not stopped after 5s", pid)
}

// nodeProxies are every candidate's proxies to node n.
func (r *rig) nodeProxies(n int) []*faultproxy.Proxy {
	var out []*faultproxy.Proxy
	for _, sl := range r.slots {
		out = append(out, sl.proxies[n])
	}
	return out
}

func (r *rig) allProxies() []*faultproxy.Proxy {
	var out []*faultproxy.Proxy
	for _, sl := range r.slots {
		out = append(out, sl.proxies...)
	}
	return out
}

func (r *rig) pauseServer(i int) int64 {
	r.t.Helper()
	if err := r.server(i).Pause(); err != nil {
		r.t.Fatal(err)
	}
	r.mu.Lock()
	r.serverPaused[i] = true
	r.mu.Unlock()
	return r.mark("SIGSTOP server %d", i)
}

func (r *rig) resumeServer(i int) {
	r.t.Helper()
	r.mark("SIGCONT server %d", i)
	if err := r.server(i).Resume(); err != nil {
		r.t.Error(err)
	}
	r.mu.Lock()
	delete(r.serverPaused, i)
	r.mu.Unlock()
}

// healAll ends every fault of proxies and servers.
func (r *rig) healAll() {
	for _, p := range r.allProxies() {
		p.Heal()
		p.SetLatency(0)
		p.Release()
		p.Enable()
	}
	r.mu.Lock()
	paused := slices.Collect(func(yield func(int) bool) {
		for i := range r.serverPaused {
			if !yield(i) {
				return
			}
		}
	})
	r.mu.Unlock()
	for _, i := range paused {
		r.resumeServer(i)
	}
}

// stopAll stops every live candidate gracefully (SIGTERM; SIGCONT first,
// for a paused one) and waits for it: its term, if any, is handed over.
func (r *rig) stopAll() {
	r.mu.Lock()
	procs := slices.Clone(r.procs)
	r.mu.Unlock()
	for _, p := range procs {
		if p.alive() && !p.isEnding() {
			p.setEnding()
			_ = p.cmd.Process.Signal(syscall.SIGCONT)
			_ = p.cmd.Process.Signal(syscall.SIGTERM)
		}
	}
	for _, p := range procs {
		r.awaitStop(p)
	}
}

// stop stops one candidate gracefully (SIGTERM) and waits for it: its
// term, if it holds one, is handed over.
func (r *rig) stop(p *proc) {
	p.setEnding()
	r.mark("SIGTERM candidate %s (pid %d)", p.id, p.pid)
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	r.awaitStop(p)
}

// awaitStop waits for a candidate sent SIGTERM to exit, and kills it if
// it has not within 15s.
func (r *rig) awaitStop(p *proc) {
	select {
	case <-p.exited:
	case <-time.After(15 * time.Second):
		r.t.Errorf("candidate %s (pid %d) did not stop within 15s of SIGTERM; killed", p.id, p.pid)
		_ = p.cmd.Process.Kill()
		<-p.exited
	}
}

// report is the verdict of the checkers on a scenario's history.
type report struct {
	terms          []*checker.Term
	c1, c2, c3, c4 []string
	ck             []string // a semaphore's: never more than rigOptions.permits at once
	alarms         []string // the split-brain alarms the candidates raised
	failovers      []time.Duration
	path           string
}

// finish ends the faults, stops the candidates, writes the history to a
// file and runs the checkers. Crashes and data races of the candidates
// fail the test.
func (r *rig) finish() *report {
	t := r.t
	t.Helper()
	r.healAll()
	r.stopAll()
	r.mu.Lock()
	procs := slices.Clone(r.procs)
	r.mu.Unlock()
	for _, p := range procs {
		logb, _ := os.ReadFile(p.log)
		if i := bytes.Index(logb, []byte("WARNING: DATA RACE")); i >= 0 {
			t.Errorf("candidate %s: data race (log %s):\n%s", p.id, p.log, logb[i:min(len(logb), i+6000)])
		}
		if p.wantExit != 0 {
			continue // checked by spawnRefused
		}
		if p.err != nil && !p.isEnding() {
			t.Errorf("candidate %s (pid %d) exited on its own: %v; log tail:\n%s", p.id, p.pid, p.err, tail(logb, 20))
		} else if p.err != nil && !strings.Contains(p.err.Error(), "killed") {
			t.Errorf("candidate %s (pid %d) did not exit cleanly: %v; log tail:\n%s", p.id, p.pid, p.err, tail(logb, 20))
		}
	}
	evs, _ := r.hist.snapshot()
	rep := &report{path: r.dump()}
	for _, ev := range evs {
		switch ev.Ev {
		case wire.Failure:
			t.Errorf("candidate %s: %s", ev.ID, ev.Cause)
		case wire.Alarm:
			rep.alarms = append(rep.alarms, fmt.Sprintf("candidate %s: split-brain alarm (token %d): %s", ev.ID, ev.Token, ev.Cause))
		}
	}
	r.judge(rep, evs)
	record(t.Name(), rep)
	value, accepted, refused, _ := r.store.stats()
	ids := map[string]bool{}
	var margins []time.Duration // validity left when the holder saw its term end
	for _, tm := range rep.terms {
		ids[tm.ID] = true
		if tm.Stepdown != 0 && tm.Disturbed == "" {
			margins = append(margins, time.Duration(tm.VU-tm.Stepdown))
		}
	}
	t.Logf("%d terms held by %d candidates; store: counter %d, %d writes accepted, %d requests refused; failovers after a lost term: %s; validity left when a holder saw its term end: min %s; split-brain alarms: %d",
		len(rep.terms), len(ids), value, accepted, refused, durs(rep.failovers), minDur(margins), len(rep.alarms))
	return rep
}

// judge runs the checkers over the history evs. A semaphore's terms
// (rigOptions.permits) are judged per permit by C1 and C2, and all
// together by CK; they have no failovers (a term's successor is on
// another permit as often as not).
func (r *rig) judge(rep *report, evs []wire.Event) {
	var orphans []string
	rep.terms, orphans = checker.Terms(evs)
	rep.c3 = r.store.check()
	rep.c4 = checker.C4(rep.terms, c4Slack)
	if k := r.o.permits; k > 0 {
		rep.c1 = append(orphans, checker.PerPermit(rep.terms, func(per []*checker.Term) []string { return checker.C1(per, nil) })...)
		rep.c2 = checker.PerPermit(rep.terms, checker.C2)
		rep.ck = checker.CK(rep.terms, k)
		return
	}
	rep.c1 = checker.C1(rep.terms, orphans)
	rep.c2 = checker.C2(rep.terms)
	rep.failovers = checker.Failovers(rep.terms)
}

// dump writes the history (and the store's log) to a file, and returns its
// path.
func (r *rig) dump() string {
	evs, _ := r.hist.snapshot()
	if r.store != nil {
		_, _, _, slog := r.store.stats()
		evs = append(evs, slog...)
	}
	slices.SortStableFunc(evs, func(a, b wire.Event) int { return int(min(max(a.T-b.T, -1), 1)) })
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	for _, ev := range evs {
		_ = enc.Encode(ev)
	}
	path := filepath.Join(r.dir, "history.jsonl")
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		r.t.Errorf("history: %v", err)
	}
	return path
}

// expect fails the test for every violation of the checkers not listed in
// skip (the history's path is logged at the end of a failed test).
func (r *rig) expect(rep *report, skip ...string) {
	r.t.Helper()
	for _, c := range []struct {
		name string
		v    []string
	}{{"C1", rep.c1}, {"C2", rep.c2}, {"C3", rep.c3}, {"C4", rep.c4}, {"CK", rep.ck}, {"alarm", rep.alarms}} {
		// A scenario that makes two leaders on purpose (C1 skipped) may
		// raise the alarm: that is what it is for.
		if slices.Contains(skip, c.name) || (c.name == "alarm" && slices.Contains(skip, "C1")) || len(c.v) == 0 {
			continue
		}
		r.t.Errorf("%s: %d violations:\n%s", c.name, len(c.v), strings.Join(c.v[:min(len(c.v), 10)], "\n"))
	}
}

// noStrayKeys waits until the servers hold no key but the quarantine
// marker and the fencing counter (the election's key is released, or has
// expired; on a cluster: any copy's or bucket's markers and counters, and
// the layout record), and fails the test if they still do after timeout.
func (r *rig) noStrayKeys(timeout time.Duration) {
	r.t.Helper()
	ctx := context.Background()
	deadline := time.Now().Add(timeout)
	for {
		var stray []string
		for i, c := range r.admin {
			keys, err := c.Keys(ctx, "*").Result()
			if err != nil {
				stray = append(stray, fmt.Sprintf("server %d: %v", i, err))
				continue
			}
			for _, k := range keys {
				if !r.kept(k) {
					pttl, _ := c.PTTL(ctx, k).Result()
					stray = append(stray, fmt.Sprintf("server %d: %q (pttl %s)", i, k, pttl))
				}
			}
		}
		if len(stray) == 0 {
			return
		}
		if time.Now().After(deadline) {
			r.t.Errorf("stray keys %s after the end: %s", timeout, strings.Join(stray, "; "))
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// kept reports whether k is a key that outlives the locks on purpose.
func (r *rig) kept(k string) bool {
	if r.o.cluster {
		return strings.HasSuffix(k, "}:marker") || strings.HasSuffix(k, ":fence")
	}
	return k == markerKey || k == fenceKey
}

func tail(b []byte, n int) string {
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

func durs(ds []time.Duration) string {
	if len(ds) == 0 {
		return "none"
	}
	s := slices.Sorted(slices.Values(ds))
	return fmt.Sprintf("%d, min %s, median %s, max %s", len(s), s[0].Round(time.Millisecond),
		s[len(s)/2].Round(time.Millisecond), s[len(s)-1].Round(time.Millisecond))
}

func minDur(ds []time.Duration) string {
	if len(ds) == 0 {
		return "n/a"
	}
	return slices.Min(ds).Round(time.Millisecond).String()
}

// history is every event of a scenario, in the order the test got them.
type history struct {
	mu      sync.Mutex
	evs     []wire.Event
	changed chan struct{} // closed and replaced on every event
}

func newHistory() *history { return &history{changed: make(chan struct{})} }

func (h *history) add(ev wire.Event) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.evs = append(h.evs, ev)
	close(h.changed)
	h.changed = make(chan struct{})
}

func (h *history) len() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.evs)
}

// snapshot returns the events so far and a channel closed on the next.
func (h *history) snapshot() ([]wire.Event, <-chan struct{}) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.evs), h.changed
}

// next waits for the first event at index >= from that matches.
func (h *history) next(from int, timeout time.Duration, match func(wire.Event) bool) (wire.Event, int, bool) {
	timer := time.NewTimer(max(timeout, 0))
	defer timer.Stop()
	for {
		h.mu.Lock()
		for i := from; i < len(h.evs); i++ {
			if match(h.evs[i]) {
				ev := h.evs[i]
				h.mu.Unlock()
				return ev, i, true
			}
		}
		from = len(h.evs)
		ch := h.changed
		h.mu.Unlock()
		select {
		case <-ch:
		case <-timer.C:
			return wire.Event{}, 0, false
		}
	}
}
