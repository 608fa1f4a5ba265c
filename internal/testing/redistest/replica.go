package redistest

import (
	"context"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// StartReplica starts one redis-server, configured by opts as by Start,
// that replicates the server at master ("host:port"), and waits until its
// first synchronisation is done. master may be a proxy in front of the
// master server, so that a test can cut or slow the replication link.
// The replica stays one across Restart until Promote. It calls t.Fatalf
// when the server does not start or does not synchronise within 10s, and
// is stopped by t.Cleanup like the servers of Start.
func StartReplica(t testing.TB, master string, opts ...Options) *Server {
	t.Helper()
	host, port, err := net.SplitHostPort(master)
	if err != nil {
		t.Fatalf("redistest.StartReplica: master %q: %v", master, err)
	}
	var o Options
	if len(opts) > 1 {
		t.Fatalf("redistest.StartReplica: at most one Options, got %d", len(opts))
	}
	if len(opts) == 1 {
		o = opts[0]
	}
	// The directive comes first, so that Options.Extra can still change it.
	o.Extra = append([]string{"replicaof " + host + " " + port}, o.Extra...)
	s := Start(t, 1, o).Server(0)
	if err := s.waitRole(readyTimeout, func(info string) bool {
		return strings.Contains(info, "\nmaster_link_status:up\r") && strings.Contains(info, "\nmaster_sync_in_progress:0\r")
	}); err != nil {
		t.Fatalf("redistest.StartReplica of %s (%s): not synchronised: %v (log %s)", master, describe(s.bin), err, s.logPath)
	}
	return s
}

// Promote makes a replica a master (REPLICAOF NO ONE), as a failover
// manager does, and returns once the server reports itself a master. It
// keeps the data the replica had, and stays a master across Restart.
func (s *Server) Promote() error {
	s.ops.Lock()
	defer s.ops.Unlock()
	c := s.adminClient()
	defer c.Close()
	if err := c.Do(context.Background(), "REPLICAOF", "NO", "ONE").Err(); err != nil {
		return fmt.Errorf("redistest: promote %s: %w", s.Addr(), err)
	}
	var extra []string
	for _, l := range s.opts.Extra {
		if !strings.HasPrefix(l, "replicaof ") {
			extra = append(extra, l)
		}
	}
	s.opts.Extra = extra
	if err := s.waitRole(readyTimeout, func(info string) bool { return strings.Contains(info, "\nrole:master\r") }); err != nil {
		return fmt.Errorf("redistest: promote %s: %w", s.Addr(), err)
	}
	return nil
}

func (s *Server) adminClient() *redis.Client {
	return redis.NewClient(&redis.Options{Addr: s.Addr(), DialTimeout: time.Second,
		ReadTimeout: time.Second, WriteTimeout: time.Second, MaxRetries: -1})
}

// waitRole polls INFO replication until ok says yes, for up to timeout.
func (s *Server) waitRole(timeout time.Duration, ok func(info string) bool) error {
	c := s.adminClient()
	defer c.Close()
	deadline := time.Now().Add(timeout)
	var last string
	for time.Now().Before(deadline) {
		info, err := c.Info(context.Background(), "replication").Result()
		if err == nil && ok("\n"+info) {
			return nil
		}
		last = fmt.Sprint(info, err)
		time.Sleep(10 * time.Millisecond)
	}
	return fmt.Errorf("not within %s; INFO replication: %s", timeout, strings.ReplaceAll(strings.TrimSpace(last), "\r\n", " "))
}
