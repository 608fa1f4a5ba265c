package sim

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// INFO, shaped like Redis 7.0's: sections opened by "# Name", fields
// "name:value", CRLF line ends, a blank line between sections; section
// arguments as Redis 7 takes them (several allowed, case-insensitive,
// "default", "all", "everything").

var infoDefault = []string{"server", "clients", "memory", "persistence", "stats", "replication", "cpu", "modules", "errorstats", "cluster", "keyspace"}

func (s *Server) info(args []string) any {
	want := map[string]bool{}
	if len(args) == 0 {
		args = []string{"default"}
	}
	for _, a := range args {
		switch a = strings.ToLower(a); a {
		case "default", "all", "everything":
			for _, n := range infoDefault {
				want[n] = true
			}
		default:
			want[a] = true
		}
	}
	var b strings.Builder
	for _, sec := range infoDefault {
		if !want[sec] {
			continue
		}
		if b.Len() > 0 {
			b.WriteString("\r\n")
		}
		s.infoSection(&b, sec)
	}
	return b.String()
}

// infoFields writes one section's "name:value" lines.
type infoFields struct{ b *strings.Builder }

func (w infoFields) f(k string, v any) {
	w.b.WriteString(k)
	w.b.WriteByte(':')
	switch v := v.(type) {
	case string:
		w.b.WriteString(v)
	case int:
		w.b.WriteString(strconv.Itoa(v))
	case int64:
		w.b.WriteString(strconv.FormatInt(v, 10))
	default:
		fmt.Fprint(w.b, v)
	}
	w.b.WriteString("\r\n")
}

func (s *Server) infoSection(b *strings.Builder, sec string) {
	w := infoFields{b}
	switch sec {
	case "server":
		s.infoServer(w)
	case "replication":
		s.infoReplication(w)
	case "keyspace":
		s.infoKeyspace(w)
	default:
		s.infoSmall(w, sec)
	}
}

// infoSmall writes the sections of a few fixed fields.
func (s *Server) infoSmall(w infoFields, sec string) {
	f := w.f
	switch sec {
	case "clients":
		w.b.WriteString("# Clients\r\n")
		f("connected_clients", len(s.sess))
		f("cluster_connections", 0)
		f("maxclients", 10000)
		f("blocked_clients", 0)
	case "memory":
		w.b.WriteString("# Memory\r\n")
		f("used_memory", 1000000+len(s.db)*100)
		f("maxmemory", 0)
		f("maxmemory_policy", "noeviction")
	case "persistence":
		w.b.WriteString("# Persistence\r\n")
		f("loading", 0)
		f("aof_enabled", 0)
	case "stats":
		w.b.WriteString("# Stats\r\n")
		f("total_connections_received", len(s.sess))
	case "cpu":
		w.b.WriteString("# CPU\r\n")
		f("used_cpu_sys", "0.010000")
		f("used_cpu_user", "0.010000")
	case "modules":
		w.b.WriteString("# Modules\r\n")
	case "errorstats":
		w.b.WriteString("# Errorstats\r\n")
	case "cluster":
		w.b.WriteString("# Cluster\r\n")
		f("cluster_enabled", 0)
	}
}

func (s *Server) infoServer(w infoFields) {
	f := w.f
	now := s.nowTime()
	up := time.Since(s.started)
	w.b.WriteString("# Server\r\n")
	f("redis_version", "7.0.15")
	f("redis_git_sha1", "00000000")
	f("redis_git_dirty", 0)
	f("redis_build_id", "d81b8ff71cfb150e")
	f("redis_mode", "standalone")
	f("os", "Linux 6.1.0 x86_64")
	f("arch_bits", 64)
	f("monotonic_clock", "POSIX clock_gettime")
	f("multiplexing_api", "epoll")
	f("atomicvar_api", "c11-builtin")
	f("gcc_version", "12.2.0")
	f("process_id", s.pid)
	f("process_supervised", "no")
	f("run_id", s.runID)
	f("tcp_port", 6379)
	f("server_time_usec", now.UnixMicro())
	f("uptime_in_seconds", int64(up.Seconds()))
	f("uptime_in_days", int64(up.Hours()/24))
	f("hz", 10)
	f("configured_hz", 10)
	f("lru_clock", now.Unix()&(1<<24-1))
	f("executable", "/usr/bin/redis-server")
	f("config_file", "")
	f("io_threads_active", 0)
}

func (s *Server) infoReplication(w infoFields) {
	f := w.f
	w.b.WriteString("# Replication\r\n")
	replID, replID2 := s.replID, s.replID2
	if s.lie.FixedReplID {
		replID, replID2 = s.runID, strings.Repeat("0", 40)
	}
	if m := s.master; m != nil {
		f("role", "slave")
		f("master_host", m.name)
		f("master_port", 6379)
		f("master_link_status", "up")
		f("master_last_io_seconds_ago", 0)
		f("master_sync_in_progress", 0)
		f("slave_read_repl_offset", s.offset)
		f("slave_repl_offset", s.offset)
		f("slave_priority", 100)
		f("slave_read_only", 1)
		f("replica_announced", 1)
		f("connected_slaves", 0)
	} else {
		f("role", "master")
		f("connected_slaves", len(s.reps))
		for i, r := range s.reps {
			// (The replica's own offset is under its lock: this
			// reports what was sent.)
			f(fmt.Sprintf("slave%d", i), fmt.Sprintf("ip=%s,port=6379,state=online,offset=%d,lag=0", r.name, s.offset))
		}
	}
	f("master_failover_state", "no-failover")
	f("master_replid", replID)
	f("master_replid2", replID2)
	f("master_repl_offset", s.offset)
	f("second_repl_offset", -1)
	f("repl_backlog_active", min(len(s.reps), 1))
	f("repl_backlog_size", 1048576)
	f("repl_backlog_first_byte_offset", 1)
	f("repl_backlog_histlen", s.offset)
}

func (s *Server) infoKeyspace(w infoFields) {
	w.b.WriteString("# Keyspace\r\n")
	keys, expires := 0, 0
	for _, e := range s.db {
		if e.exp != 0 && e.exp <= s.now {
			continue
		}
		keys++
		if e.exp != 0 {
			expires++
		}
	}
	if keys > 0 {
		w.f("db0", fmt.Sprintf("keys=%d,expires=%d,avg_ttl=0", keys, expires))
	}
}
