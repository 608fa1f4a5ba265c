// Command candidate is one candidate of the fault tests
// (integration/faults): it runs an election.Elector on the nodes it is
// given (the test's fault proxies), does read-modify-writes on the test's
// fenced store while it leads (or, with -permits K, holds permits of a
// semaphore again and again: permits.go), and reports what it sees on stdout as JSON
// lines (see package wire), with CLOCK_MONOTONIC times, so that the test
// can check a history made of several processes. The test builds it with
// go build and runs it as a child process, so that it can be paused
// (SIGSTOP) and killed (SIGKILL) for real. SIGTERM stops it gracefully:
// the elector hands its term over and the process exits.
//
// See docs/design.md §7.1 for the fault suite.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/redis/go-redis/v9"

	"github.com/redlease/redlease/election"
	"github.com/redlease/redlease/internal/testing/checker/wire"
	"github.com/redlease/redlease/lease"
	"github.com/redlease/redlease/redlock"
)

type options struct {
	id, nodes, key, store string
	sentinels, masters    string
	cluster, addrMap      string
	copies, buckets       int
	ttl, maxTTL           time.Duration
	nodeTimeout           time.Duration
	retryDelay            time.Duration
	resignAfter           time.Duration
	compute, gap          time.Duration
	fencing               bool
	allowEviction         bool
	noQuarantine          bool
	noReplIDCheck         bool
	redisDefaults         bool
	unsafe                bool
	permits               int
	plusOne               bool
	logLevel              string
}

func main() {
	var o options
	flag.StringVar(&o.id, "id", "", "candidate ID")
	flag.StringVar(&o.nodes, "nodes", "", "comma-separated node addresses")
	flag.StringVar(&o.sentinels, "sentinels", "", "comma-separated Sentinel addresses (with -masters, instead of -nodes)")
	flag.StringVar(&o.masters, "masters", "", "comma-separated Sentinel master names: one node per group, reached through a go-redis FailoverClient")
	flag.StringVar(&o.cluster, "cluster", "",
		"comma-separated seed addresses of one Redis Cluster (instead of -nodes): redlock.NewCluster with -copies and -buckets")
	flag.StringVar(&o.addrMap, "addr-map", "",
		"with -cluster: comma-separated from=to pairs; the cluster client dials to when the cluster names from (the test's fault proxies)")
	flag.IntVar(&o.copies, "copies", 3, "with -cluster: copies of each lock (NewCluster's n)")
	flag.IntVar(&o.buckets, "buckets", 0, "with -cluster: buckets (0: the default of redlock.Config.Buckets)")
	flag.StringVar(&o.key, "key", "faults:election", "election name")
	flag.StringVar(&o.store, "store", "", "base URL of the fenced store (empty: no work)")
	flag.DurationVar(&o.ttl, "ttl", time.Second, "election TTL")
	flag.DurationVar(&o.maxTTL, "maxttl", 2*time.Second, "redlock MaxTTL")
	flag.DurationVar(&o.nodeTimeout, "node-timeout", 100*time.Millisecond, "redlock NodeTimeout")
	flag.DurationVar(&o.retryDelay, "retry-delay", 50*time.Millisecond, "election RetryDelay")
	flag.DurationVar(&o.resignAfter, "resign-after", 0, "resign after this long in office (jittered x0.5-1.5; 0: never)")
	flag.DurationVar(&o.compute, "compute", 4*time.Millisecond, "time between the read and the write of a read-modify-write")
	flag.DurationVar(&o.gap, "gap", 6*time.Millisecond, "time between two read-modify-writes")
	flag.BoolVar(&o.fencing, "fencing", true, "fencing tokens (false: redlock DisableFencing, every token is 0)")
	flag.BoolVar(&o.allowEviction, "allow-eviction", false, "redlock AllowEviction: accept nodes with an evicting maxmemory-policy")
	flag.BoolVar(&o.noQuarantine, "disable-quarantine", false,
		"NEGATIVE CONTROL: redlock DisableQuarantine: a node that forgot its locks votes at once")
	flag.BoolVar(&o.noReplIDCheck, "no-replication-id-check", false,
		"NEGATIVE CONTROL: the quarantine compares run_ids only (internal/unsafeopt): a master that failed back after a full resync votes at once")
	flag.BoolVar(&o.redisDefaults, "redis-defaults", false,
		"go-redis clients with their default options (3 retries, 5s dial and 3s read timeouts): redlock must not depend on them")
	flag.BoolVar(&o.unsafe, "unsafe-ignore-deadline", false,
		"NEGATIVE CONTROL: believe it leads from OnElected to a quarter TTL past OnDemoted, ignoring IsLeader and the term's context")
	flag.IntVar(&o.permits, "permits", 0,
		"hold one of this many permits of the semaphore -key (lease.Config.Permits), again and again, instead of campaigning (0: campaign)")
	flag.BoolVar(&o.plusOne, "unsafe-permits-plus-one", false,
		"NEGATIVE CONTROL: with -permits K, take permits among K+1 keys (internal/unsafeopt PermitsPlusOne)")
	flag.StringVar(&o.logLevel, "log-level", "debug", "hclog level of the logs on stderr")
	flag.Parse()
	err := run(o)
	if errors.Is(err, errRefused) {
		os.Exit(3)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "candidate:", err)
		os.Exit(1)
	}
}

// errRefused: redlock.New refused the configuration (reported as a
// Refused event).
var errRefused = errors.New("configuration refused")

// held is the term the candidate holds (or is handing over).
type held struct {
	term election.Term
	ts   int64
}

// margin is the terms' SafetyMargin (lease.Config's default, set
// explicitly so that the events can report each term's deadline:
// ValidUntil - margin).
func (o options) margin() time.Duration { return o.ttl / 20 }

type candidate struct {
	o     options
	clock wire.Clock
	e     *election.Elector
	http  *http.Client

	out sync.Mutex // stdout
	enc *json.Encoder

	cur  atomic.Pointer[held] // from OnElected to OnDemoted
	seen atomic.Pointer[held] // the term Term last returned
	flag atomic.Int64         // -unsafe-ignore-deadline: the TS of the term believed held
}

func run(o options) error {
	given := 0
	for _, v := range []string{o.nodes, o.masters, o.cluster} {
		if v != "" {
			given++
		}
	}
	if o.id == "" || given != 1 {
		return errors.New("-id and one of -nodes, -masters or -cluster are required")
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	log := hclog.New(&hclog.LoggerOptions{Name: o.id, Level: hclog.LevelFromString(o.logLevel), Output: os.Stderr})
	c := &candidate{o: o, clock: wire.NewClock(), enc: json.NewEncoder(os.Stdout),
		http: &http.Client{Timeout: 300 * time.Millisecond}}
	nodes, closeNodes := nodeClients(o)
	defer closeNodes()
	var cc *redis.ClusterClient
	if o.cluster != "" {
		var err error
		if cc, err = clusterClient(o); err != nil {
			return err
		}
		defer cc.Close()
	}
	cfg, err := redlockConfig(o, log)
	if err != nil {
		return err
	}
	cfg.Hooks = c.hook
	client, err := newClient(ctx, o, cfg, cc, nodes)
	if err != nil {
		c.emit(wire.Event{Ev: wire.Refused, PID: os.Getpid(), Cause: err.Error(), OK: errors.Is(err, redlock.ErrInvalidArgument)})
		return errRefused
	}
	defer client.Close()
	lcfg := lease.Config{ID: o.id, TTL: o.ttl, RetryDelay: o.retryDelay, Logger: log, SafetyMargin: o.margin()}
	if o.permits > 0 {
		lcfg.Permits = o.permits
		return c.holdPermits(ctx, client, lcfg)
	}
	c.e, err = election.New(client, o.key, election.Config{
		Lease:     lcfg,
		OnElected: c.onElected, OnDemoted: c.onDemoted,
	})
	if err != nil {
		return err
	}
	return c.campaign(ctx)
}

// campaign runs the election until ctx ends, sampling the term meanwhile,
// and says so on stdout.
func (c *candidate) campaign(ctx context.Context) error {
	sctx, stopSampler := context.WithCancel(context.Background())
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		c.sample(sctx, c.belief, c.holding)
	}()
	c.emit(wire.Event{Ev: wire.Ready, PID: os.Getpid()})
	err := c.e.Run(ctx)
	stopSampler()
	<-sampled
	c.emit(wire.Event{Ev: wire.Exit, Cause: fmt.Sprint(err)})
	if ctx.Err() != nil { // stopped
		return nil
	}
	return err
}

// nodeClients are the go-redis clients of -masters (a FailoverClient per
// Sentinel group) and -nodes; closeNodes closes them, the last first.
func nodeClients(o options) (nodes []redis.UniversalClient, closeNodes func()) {
	closeNodes = func() {
		for i := len(nodes) - 1; i >= 0; i-- {
			_ = nodes[i].Close()
		}
	}
	for name := range strings.SplitSeq(o.masters, ",") {
		if name == "" {
			continue
		}
		nodes = append(nodes, redis.NewFailoverClient(&redis.FailoverOptions{
			MasterName: name, SentinelAddrs: strings.Split(o.sentinels, ","),
			DialTimeout: 200 * time.Millisecond, ReadTimeout: 300 * time.Millisecond, WriteTimeout: 300 * time.Millisecond,
			PoolTimeout: 300 * time.Millisecond, MaxRetries: -1,
		}))
	}
	for a := range strings.SplitSeq(o.nodes, ",") {
		if a == "" {
			continue
		}
		ro := &redis.Options{
			Addr: a, DialTimeout: 200 * time.Millisecond,
			ReadTimeout: 300 * time.Millisecond, WriteTimeout: 300 * time.Millisecond,
			PoolTimeout: 300 * time.Millisecond, MaxRetries: -1, DialerRetries: 1,
		}
		if o.redisDefaults {
			ro = &redis.Options{Addr: a}
		}
		nodes = append(nodes, redis.NewClient(ro))
	}
	return nodes, closeNodes
}

// redlockConfig is the Client's configuration the flags ask for.
func redlockConfig(o options, log hclog.Logger) (redlock.Config, error) {
	cfg := redlock.Config{NodeTimeout: o.nodeTimeout, MaxTTL: o.maxTTL,
		DisableFencing: !o.fencing, AllowEviction: o.allowEviction, DisableQuarantine: o.noQuarantine,
		Logger: log.Named("redlock")}
	if o.noReplIDCheck {
		if err := noReplIDCheck(&cfg); err != nil {
			return cfg, err
		}
	}
	if o.plusOne {
		if err := permitsPlusOne(&cfg); err != nil {
			return cfg, err
		}
	}
	return cfg, nil
}

// newClient makes the redlock Client: over the cluster cc (-cluster), or
// over nodes.
func newClient(ctx context.Context, o options, cfg redlock.Config, cc *redis.ClusterClient, nodes []redis.UniversalClient) (*redlock.Client, error) {
	if cc != nil {
		cfg.Buckets = o.buckets
		return redlock.NewCluster(ctx, cfg, cc, o.copies)
	}
	return redlock.New(ctx, cfg, nodes...)
}

// clusterClient is the go-redis cluster client of -cluster: short
// timeouts, no retries of its own, and a dialer that reaches every server
// the cluster names through the proxy -addr-map gives for it.
func clusterClient(o options) (*redis.ClusterClient, error) {
	via := map[string]string{}
	for pair := range strings.SplitSeq(o.addrMap, ",") {
		if pair == "" {
			continue
		}
		from, to, ok := strings.Cut(pair, "=")
		if !ok || from == "" || to == "" {
			return nil, fmt.Errorf("-addr-map: %q is not from=to", pair)
		}
		via[from] = to
	}
	var d net.Dialer
	return redis.NewClusterClient(&redis.ClusterOptions{
		Addrs: strings.Split(o.cluster, ","), DialTimeout: 200 * time.Millisecond,
		ReadTimeout: 300 * time.Millisecond, WriteTimeout: 300 * time.Millisecond,
		PoolTimeout: 300 * time.Millisecond, MaxRetries: -1, DialerRetries: 1, PoolSize: 1000,
		Dialer: func(ctx context.Context, network, addr string) (net.Conn, error) {
			if to, ok := via[addr]; ok {
				addr = to
			}
			return d.DialContext(ctx, network, addr)
		},
	}), nil
}

// hook reports the split-brain alarm (docs/design.md §6.3) on stdout.
func (c *candidate) hook(ev redlock.Event) {
	if ev.Kind == redlock.EventSplitBrain {
		c.emit(wire.Event{Ev: wire.Alarm, Token: ev.Token, Cause: fmt.Sprintf("%s: %v", ev.Evidence, ev.Err)})
	}
}

func (c *candidate) emit(ev wire.Event) {
	ev.ID = c.o.id
	if ev.T == 0 {
		ev.T = wire.Now()
	}
	c.out.Lock()
	defer c.out.Unlock()
	_ = c.enc.Encode(ev) // one write per line; a closed stdout means the test is gone
}

// believes reports whether the candidate believes it leads in the term
// that began at ts: IsLeader (Term, which checks the deadline on every
// call), or, under -unsafe-ignore-deadline, its own flag.
func (c *candidate) believes(ts int64) bool {
	ok, cur, _ := c.belief()
	return ok && cur == ts
}

// belief is one look at whether the candidate leads (IsLeader), and in
// which term.
func (c *candidate) belief() (bool, int64, uint64) {
	if c.o.unsafe {
		ts := c.flag.Load()
		if ts == 0 {
			return false, 0, 0
		}
		var token uint64
		if h := c.cur.Load(); h != nil {
			token = h.term.Token
		}
		return true, ts, token
	}
	if !c.e.IsLeader() {
		return false, 0, 0
	}
	// IsLeader said yes; Term names the term. If the term ended between
	// the two calls, it is the term last seen, or the one OnElected holds.
	if t, ok := c.e.Term(); ok {
		c.seen.Store(&held{term: t, ts: c.clock.Of(t.Start)})
	}
	h := c.seen.Load()
	if h == nil {
		if h = c.cur.Load(); h == nil {
			return false, 0, 0 // cannot name the term: no sample
		}
	}
	return true, h.ts, h.term.Token
}

func (c *candidate) onElected(ctx context.Context, t election.Term) {
	ts := c.clock.Of(t.Start)
	c.cur.Store(&held{term: t, ts: ts})
	c.emit(wire.Event{Ev: wire.Elected, TS: ts, Token: t.Token, VU: c.clock.Of(t.ValidUntil()), DL: c.clock.Of(t.ValidUntil().Add(-c.o.margin()))})
	if c.o.unsafe {
		c.flag.Store(ts)
	}
	worked := make(chan struct{})
	go func() {
		defer close(worked)
		c.work(t, ts)
	}()
	var resign <-chan time.Time
	if d := c.o.resignAfter; d > 0 {
		timer := time.NewTimer(d/2 + rand.N(d+1))
		defer timer.Stop()
		resign = timer.C
	}
	select {
	case <-ctx.Done():
	case <-resign:
		_ = c.e.Resign(ctx) // returns at once: ctx is the term's
		<-ctx.Done()
	}
	now := wire.Now()
	if c.o.unsafe {
		return // NEGATIVE CONTROL: the work goes on until OnDemoted
	}
	c.emit(wire.Event{Ev: wire.Stepdown, T: now, TS: ts, Token: t.Token})
	<-worked
}

func (c *candidate) onDemoted(t election.Term, cause error) {
	ts := c.clock.Of(t.Start)
	if c.o.unsafe {
		// NEGATIVE CONTROL: it goes on believing a quarter TTL past
		// OnDemoted (a flag cleared late), so that it sees its term end
		// well past C4's slack even on an idle machine.
		time.Sleep(c.o.ttl / 4)
		c.flag.CompareAndSwap(ts, 0)
		c.emit(wire.Event{Ev: wire.Stepdown, TS: ts, Token: t.Token})
	}
	c.emit(wire.Event{Ev: wire.Demoted, TS: ts, Token: t.Token, VU: c.clock.Of(t.ValidUntil()), Cause: fmt.Sprint(cause)})
	if h := c.cur.Load(); h != nil && h.ts == ts {
		c.cur.CompareAndSwap(h, nil)
	}
}

// work does read-modify-writes on the store while the term lasts: read
// the counter under the term's token, wait (the computation), check the
// leadership once more, write counter+1 under the token.
func (c *candidate) work(t election.Term, ts int64) {
	if c.o.store == "" {
		return
	}
	for c.believes(ts) {
		v, status := c.call("read", t.Token, ts, -1)
		if status == http.StatusOK {
			time.Sleep(c.o.compute)
			tb := wire.Now()
			if !c.believes(ts) {
				return
			}
			_, status = c.call("write", t.Token, ts, v)
			c.emit(wire.Event{Ev: wire.Write, T: tb, TS: ts, Token: t.Token, OK: status == http.StatusOK, Status: status})
		}
		time.Sleep(c.o.gap)
	}
}

// call is one request to the store: a read, or a write of base+1 computed
// from the value base read. It returns the value and the HTTP status (0
// when the request failed).
func (c *candidate) call(op string, token uint64, ts int64, base int64) (int64, int) {
	q := url.Values{"id": {c.o.id}, "token": {strconv.FormatUint(token, 10)}, "ts": {strconv.FormatInt(ts, 10)}}
	if op == "write" {
		q.Set("base", strconv.FormatInt(base, 10))
	}
	resp, err := c.http.Get(c.o.store + "/" + op + "?" + q.Encode())
	if err != nil {
		return 0, 0
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, 0
	}
	v, _ := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	return v, resp.StatusCode
}

// tenure is what the sampler knows of the term (or permit) held: its
// start (TS), token and validity.
type tenure struct {
	ts         int64
	token      uint64
	validUntil time.Time
}

// holding is the term the elector holds (from OnElected to OnDemoted).
func (c *candidate) holding() (tenure, bool) {
	h := c.cur.Load()
	if h == nil {
		return tenure{}, false
	}
	return tenure{ts: h.ts, token: h.term.Token, validUntil: h.term.ValidUntil()}, true
}

// sample looks at the candidate's belief (ok, in the term that began at
// ts, under token) every millisecond while it leads or holds (every 10ms
// otherwise) and reports each run of "leader" samples when it ends, and
// each move of the validity of the tenure held.
func (c *candidate) sample(ctx context.Context, belief func() (bool, int64, uint64), holding func() (tenure, bool)) {
	var (
		active bool
		run    wire.Event
		lastVU int64
	)
	flush := func() {
		if active {
			c.emit(run)
			active = false
		}
	}
	defer flush()
	for ctx.Err() == nil {
		tb := wire.Now()
		ok, ts, token := belief()
		if active && (!ok || ts != run.TS) {
			flush()
		}
		if ok {
			if !active {
				run, active = wire.Event{Ev: wire.Belief, TS: ts, Token: token, First: tb}, true
			}
			run.Last, run.N = tb, run.N+1
		}
		period := 10 * time.Millisecond
		if h, held := holding(); held {
			period = time.Millisecond
			if vu := c.clock.Of(h.validUntil); vu != lastVU {
				lastVU = vu
				c.emit(wire.Event{Ev: wire.Refresh, TS: h.ts, Token: h.token, VU: vu, DL: c.clock.Of(h.validUntil.Add(-c.o.margin()))})
			}
		}
		if active {
			period = time.Millisecond
		}
		time.Sleep(period)
	}
}
