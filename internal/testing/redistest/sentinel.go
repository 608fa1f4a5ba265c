package redistest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// EnvSentinelBinary names the environment variable that overrides the
// redis-sentinel binary (a path or a name looked up in PATH). Without it,
// redis-sentinel is looked up in PATH, then redis-server --sentinel.
const EnvSentinelBinary = "REDLEASE_REDIS_SENTINEL"

// SentinelOptions configures the sentinels started by StartSentinels.
// Zero means the default.
type SentinelOptions struct {
	// Quorum is how many sentinels must agree that a master is down
	// (default: a majority of the sentinels).
	Quorum int
	// DownAfter is down-after-milliseconds: how long a master may not
	// answer before a sentinel thinks it down (default 1s: with 500ms, a
	// master promoted a moment before was thought down on a loaded
	// two-core machine, and the group failed over again, to the old
	// master that had just come back empty).
	DownAfter time.Duration
	// FailoverTimeout is failover-timeout (default 3s); a failover of a
	// group is not retried within twice that.
	FailoverTimeout time.Duration
}

// Sentinels is a set of redis-sentinel processes that monitor the same
// groups (a master and its replicas, by name). Its methods are safe for
// concurrent use.
type Sentinels struct {
	servers []*Server
	groups  []string
}

// StartSentinels launches n redis-sentinel processes on free 127.0.0.1
// ports, each monitoring every group of masters (name -> "host:port" of
// the group's master), and waits until every sentinel knows every group's
// master, its replicas (as many as the master reports) and the other
// n-1 sentinels, so that a failover can be agreed on at once. It calls
// t.Fatalf on failure; the processes are stopped by PID by t.Cleanup.
// Sentinels rewrite their own configuration: they are not restarted.
func StartSentinels(t testing.TB, n int, masters map[string]string, opts ...SentinelOptions) *Sentinels {
	t.Helper()
	if n < 1 || len(masters) == 0 || len(opts) > 1 {
		t.Fatalf("redistest.StartSentinels: need n >= 1, a group and at most one SentinelOptions, got n=%d, %d groups, %d options", n, len(masters), len(opts))
	}
	var o SentinelOptions
	if len(opts) == 1 {
		o = opts[0]
	}
	if o.Quorum == 0 {
		o.Quorum = n/2 + 1
	}
	if o.DownAfter == 0 {
		o.DownAfter = time.Second
	}
	if o.FailoverTimeout == 0 {
		o.FailoverTimeout = 3 * time.Second
	}
	bin, args, err := sentinelBinary()
	if err != nil {
		t.Fatalf("redis-sentinel not found: run `make test` (installs it) or `apt-get install redis-sentinel` (%v)", err)
	}
	ss := &Sentinels{}
	var lines []string
	for name := range masters {
		ss.groups = append(ss.groups, name)
	}
	slices.Sort(ss.groups)
	replicas := map[string]int{}
	for _, name := range ss.groups {
		host, port, err := net.SplitHostPort(masters[name])
		if err != nil {
			t.Fatalf("redistest.StartSentinels: group %s: master %q: %v", name, masters[name], err)
		}
		lines = append(lines,
			fmt.Sprintf("sentinel monitor %s %s %s %d", name, host, port, o.Quorum),
			fmt.Sprintf("sentinel down-after-milliseconds %s %d", name, o.DownAfter.Milliseconds()),
			fmt.Sprintf("sentinel failover-timeout %s %d", name, o.FailoverTimeout.Milliseconds()),
			fmt.Sprintf("sentinel parallel-syncs %s 1", name))
		replicas[name] = connectedReplicas(t, masters[name])
	}
	for i := range n {
		s, err := startServer(t, &Server{bin: bin, args: args, sentinel: true, opts: Options{Extra: lines}})
		if err != nil {
			t.Fatalf("redistest: sentinel %d: %v", i, err)
		}
		if err := s.speedUp(); err != nil {
			t.Fatalf("redistest: sentinel %d: %v", i, err)
		}
		ss.servers = append(ss.servers, s)
	}
	for _, s := range ss.servers {
		for _, name := range ss.groups {
			if err := s.waitSentinel(name, n-1, replicas[name]); err != nil {
				t.Fatalf("redistest: sentinel %s: %v (log %s)", s.Addr(), err, s.logPath)
			}
		}
	}
	return ss
}

// sentinelPeriods are the timings a sentinel is given at start-up
// (SENTINEL DEBUG, Redis 7.0 and later): it reads INFO from the servers
// every 200ms instead of 10s, so that it sees a new replica or an old
// master back within a test's time, and says hello to the other sentinels
// every second instead of 2s. Not shorter: a sentinel turns a replica that
// reports itself a master back into a replica after 4 hello periods, and
// with 200ms it did so to the replica a forced failover had just
// promoted, before the new configuration reached it. A TILT (the
// sentinel's timer was late by 2s, on a loaded machine) lasts 2s instead
// of 30s. It pings every 250ms: the default period is DownAfter itself
// (at most 1s), and a sentinel counts a master it has just switched to as
// unanswered since the switch, so its first ping, sent one period later,
// raced DownAfter: three sentinels thought a master promoted 1s before
// down and failed the group over again (seen in make test).
var sentinelPeriods = []any{"info-period", 200, "ping-period", 250, "publish-period", 1000, "ask-period", 200, "tilt-period", 2000}

func (s *Server) speedUp() error {
	c := s.adminClient()
	defer c.Close()
	args := append([]any{"SENTINEL", "DEBUG"}, sentinelPeriods...)
	if err := c.Do(context.Background(), args...).Err(); err != nil {
		return fmt.Errorf("SENTINEL DEBUG (needs redis-sentinel 7.0 or later): %w", err)
	}
	return nil
}

// connectedReplicas is the number of replicas the master at addr reports.
func connectedReplicas(t testing.TB, addr string) int {
	c := redis.NewClient(&redis.Options{Addr: addr, DialTimeout: time.Second, ReadTimeout: time.Second, MaxRetries: -1})
	defer c.Close()
	info, err := c.Info(context.Background(), "replication").Result()
	if err != nil {
		t.Fatalf("redistest.StartSentinels: master %s: %v", addr, err)
	}
	n, _ := strconv.Atoi(InfoField(info, "connected_slaves"))
	return n
}

// waitSentinel waits, up to 15s,
// until the sentinel knows peers other sentinels and replicas replicas of
// group name, none of them thought down.
func (s *Server) waitSentinel(name string, peers, replicas int) error {
	sc := redis.NewSentinelClient(&redis.Options{Addr: s.Addr(), DialTimeout: time.Second, ReadTimeout: time.Second, MaxRetries: -1})
	defer sc.Close()
	ctx := context.Background()
	deadline := time.Now().Add(15 * time.Second)
	var last string
	for time.Now().Before(deadline) {
		ps, err1 := sc.Sentinels(ctx, name).Result()
		rs, err2 := sc.Replicas(ctx, name).Result()
		up := func(m map[string]string) bool { return !strings.Contains(m["flags"], "down") }
		err := errors.Join(err1, err2)
		if err == nil && len(ps) >= peers && len(rs) >= replicas && allOf(ps, up) && allOf(rs, up) {
			return nil
		}
		last = fmt.Sprintf("%d sentinels, %d replicas known (%v)", len(ps), len(rs), err)
		time.Sleep(50 * time.Millisecond)
	}
	return fmt.Errorf("group %s: want %d other sentinels and %d replicas within 15s: %s", name, peers, replicas, last)
}

func allOf(ms []map[string]string, ok func(map[string]string) bool) bool {
	for _, m := range ms {
		if !ok(m) {
			return false
		}
	}
	return true
}

// Addrs returns the "127.0.0.1:port" address of every sentinel, for
// redis.FailoverOptions.SentinelAddrs.
func (ss *Sentinels) Addrs() []string {
	var out []string
	for _, s := range ss.servers {
		out = append(out, s.Addr())
	}
	return out
}

// Sentinel returns the i-th sentinel process (0-based), for faults.
func (ss *Sentinels) Sentinel(i int) *Server { return ss.servers[i] }

// Groups returns the names of the groups, sorted.
func (ss *Sentinels) Groups() []string { return slices.Clone(ss.groups) }

// MasterAddr is the address of group name's master according to the
// first sentinel that answers (SENTINEL GET-MASTER-ADDR-BY-NAME).
func (ss *Sentinels) MasterAddr(name string) (string, error) {
	var errs []error
	for _, s := range ss.servers {
		a, err := s.masterAddr(name)
		if err == nil {
			return a, nil
		}
		errs = append(errs, err)
	}
	return "", errors.Join(errs...)
}

func (s *Server) masterAddr(name string) (string, error) {
	sc := redis.NewSentinelClient(&redis.Options{Addr: s.Addr(), DialTimeout: time.Second, ReadTimeout: time.Second, MaxRetries: -1})
	defer sc.Close()
	hp, err := sc.GetMasterAddrByName(context.Background(), name).Result()
	if err != nil {
		return "", fmt.Errorf("sentinel %s: %w", s.Addr(), err)
	}
	if len(hp) != 2 {
		return "", fmt.Errorf("sentinel %s: master of %s: %v", s.Addr(), name, hp)
	}
	return net.JoinHostPort(hp[0], hp[1]), nil
}

// WaitMaster waits until every sentinel names addr as group name's master,
// and fails after timeout with what they said last.
func (ss *Sentinels) WaitMaster(name, addr string, timeout time.Duration) error {
	err := ss.waitAll(timeout, func(s *Server) (bool, string) {
		a, err := s.masterAddr(name)
		if err != nil {
			a = err.Error()
		}
		return a == addr, a
	})
	if err != nil {
		return fmt.Errorf("redistest: the sentinels do not name %s the master of %s within %s: they say %s", addr, name, timeout, err)
	}
	return nil
}

// waitAll polls every sentinel with ok, every 20ms, until all say yes; after
// timeout it returns what each said last, as the error's text.
func (ss *Sentinels) waitAll(timeout time.Duration, ok func(s *Server) (bool, string)) error {
	deadline := time.Now().Add(timeout)
	for {
		var said []string
		all := true
		for _, s := range ss.servers {
			yes, what := ok(s)
			all = all && yes
			said = append(said, what)
		}
		if all {
			return nil
		}
		if time.Now().After(deadline) {
			return errors.New(strings.Join(said, "; "))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// WaitReplica waits, up to timeout, until every sentinel sees the server
// at addr as a healthy replica of group name's master: reported as a
// replica by the server itself, up, its link to the master up. Wait for it
// before Failover to that server: a sentinel that has not yet seen the
// server as a replica (an old master back as a master, converted a moment
// before) may turn it back into a replica right after the failover
// promotes it, before the new configuration reaches that sentinel.
func (ss *Sentinels) WaitReplica(name, addr string, timeout time.Duration) error {
	err := ss.waitAll(timeout, func(s *Server) (bool, string) { return s.seesReplica(name, addr) })
	if err != nil {
		return fmt.Errorf("redistest: the sentinels do not all see %s as a healthy replica in %s within %s: %s", addr, name, timeout, err)
	}
	return nil
}

func (s *Server) seesReplica(name, addr string) (bool, string) {
	sc := redis.NewSentinelClient(&redis.Options{Addr: s.Addr(), DialTimeout: time.Second, ReadTimeout: time.Second, MaxRetries: -1})
	defer sc.Close()
	rs, err := sc.Replicas(context.Background(), name).Result()
	if err != nil {
		return false, fmt.Sprintf("sentinel %s: %v", s.Addr(), err)
	}
	for _, r := range rs {
		if net.JoinHostPort(r["ip"], r["port"]) != addr {
			continue
		}
		ok := r["flags"] == "slave" && r["role-reported"] == "slave" && r["master-link-status"] == "ok"
		return ok, fmt.Sprintf("sentinel %s: flags %s, role-reported %s, master-link-status %s",
			s.Addr(), r["flags"], r["role-reported"], r["master-link-status"])
	}
	return false, fmt.Sprintf("sentinel %s: no replica %s", s.Addr(), addr)
}

// Failover forces a failover of group name to one of its replicas
// (SENTINEL FAILOVER), as an operator does, and returns once a sentinel
// accepted it, not once it is done (see WaitMaster). While the sentinels
// find no replica fit (NOGOODSLAVE: they have not yet seen a replica that
// came back synchronised) or still end a previous failover (INPROG: it
// lasts until its replicas are reconfigured, or failover-timeout) it asks
// again, for up to timeout.
func (ss *Sentinels) Failover(name string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		var errs []error
		again := false
		for _, s := range ss.servers {
			sc := redis.NewSentinelClient(&redis.Options{Addr: s.Addr(), DialTimeout: time.Second, ReadTimeout: time.Second, MaxRetries: -1})
			err := sc.Failover(context.Background(), name).Err()
			_ = sc.Close()
			if err == nil {
				return nil
			}
			// By the reply's code, its first word.
			if re, ok := errors.AsType[redis.Error](err); ok {
				code, _, _ := strings.Cut(re.Error(), " ")
				again = again || code == "NOGOODSLAVE" || code == "INPROG"
			}
			errs = append(errs, fmt.Errorf("sentinel %s: %w", s.Addr(), err))
		}
		err := errors.Join(errs...)
		if !again || time.Now().After(deadline) {
			return fmt.Errorf("redistest: SENTINEL FAILOVER %s: %w", name, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// WaitReplicaOf waits, up to timeout, until the server replicates master
// ("host:port") with its link up and its synchronisation done, as a
// sentinel makes an old master that came back do.
func (s *Server) WaitReplicaOf(master string, timeout time.Duration) error {
	host, port, err := net.SplitHostPort(master)
	if err != nil {
		return err
	}
	err = s.waitRole(timeout, func(info string) bool {
		return InfoField(info, "role") == "slave" && InfoField(info, "master_host") == host &&
			InfoField(info, "master_port") == port && InfoField(info, "master_link_status") == "up" &&
			InfoField(info, "master_sync_in_progress") == "0"
	})
	if err != nil {
		return fmt.Errorf("redistest: %s is not a synchronised replica of %s: %w", s.Addr(), master, err)
	}
	return nil
}

// sentinelBinary locates redis-sentinel (honouring EnvSentinelBinary), or
// redis-server, which runs as a sentinel with --sentinel.
func sentinelBinary() (string, []string, error) {
	if v := os.Getenv(EnvSentinelBinary); v != "" {
		bin, err := exec.LookPath(v)
		return bin, nil, err
	}
	if bin, err := exec.LookPath("redis-sentinel"); err == nil {
		return bin, nil, nil
	}
	bin, err := serverBinary()
	if err != nil {
		return "", nil, err
	}
	return bin, []string{"--sentinel"}, nil
}
