package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"
)

// redisServer is one redis-server process started by the harness on a free
// 127.0.0.1 port, stopped by its PID (never by name).
type redisServer struct {
	addr string
	dir  string
	cmd  *exec.Cmd
	done chan struct{} // closed once the process has been reaped
}

// startServers launches n servers (no persistence, noeviction) under base.
func startServers(n int, base string) ([]*redisServer, error) {
	bin := os.Getenv("REDLEASE_REDIS_SERVER")
	if bin == "" {
		bin = "redis-server"
	}
	if _, err := exec.LookPath(bin); err != nil {
		return nil, fmt.Errorf("redis-server not found (make bench installs it): %w", err)
	}
	var out []*redisServer
	for i := range n {
		dir := filepath.Join(base, "redis"+strconv.Itoa(i))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			stopServers(out)
			return nil, err
		}
		var s *redisServer
		var err error
		for range 5 { // a free port may be taken between probe and bind
			if s, err = launchServer(bin, dir); err == nil {
				break
			}
		}
		if err != nil {
			stopServers(out)
			return nil, fmt.Errorf("redis-server %d: %w", i, err)
		}
		out = append(out, s)
	}
	return out, nil
}

func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

func launchServer(bin, dir string) (*redisServer, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	logPath := filepath.Join(dir, "redis.log")
	cmd := exec.Command(bin,
		"--port", strconv.Itoa(port), "--bind", "127.0.0.1",
		"--save", "", "--appendonly", "no",
		"--dir", dir, "--logfile", logPath,
		"--daemonize", "no", "--protected-mode", "no",
		"--maxmemory-policy", "noeviction")
	cmd.SysProcAttr = childAttr()
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	s := &redisServer{addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), dir: dir, cmd: cmd, done: make(chan struct{})}
	go func() { _ = cmd.Wait(); close(s.done) }()

	c := redis.NewClient(&redis.Options{Addr: s.addr, DialTimeout: 200 * time.Millisecond, MaxRetries: -1})
	defer c.Close()
	deadline := time.Now().Add(10 * time.Second)
	for {
		select {
		case <-s.done:
			return nil, fmt.Errorf("exited at start-up: %s", logTail(logPath))
		default:
		}
		ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
		err := c.Ping(ctx).Err()
		cancel()
		if err == nil {
			return s, nil
		}
		if time.Now().After(deadline) {
			s.stop()
			return nil, fmt.Errorf("not ready after 10s (%v): %s", err, logTail(logPath))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// stop sends SIGTERM to the server's PID, then SIGKILL after 5s, and waits
// until it is reaped.
func (s *redisServer) stop() {
	select {
	case <-s.done:
		return
	default:
	}
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.done:
	case <-time.After(5 * time.Second):
		_ = s.cmd.Process.Kill()
		<-s.done
	}
}

func stopServers(ss []*redisServer) {
	for _, s := range ss {
		s.stop()
	}
}

func logTail(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return "(no log)"
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) > 10 {
		lines = lines[len(lines)-10:]
	}
	return strings.Join(lines, " | ")
}

// redisVersion is `redis-server --version`.
func redisVersion() string {
	bin := os.Getenv("REDLEASE_REDIS_SERVER")
	if bin == "" {
		bin = "redis-server"
	}
	out, err := exec.Command(bin, "--version").Output()
	if err != nil {
		return "unknown (" + err.Error() + ")"
	}
	return strings.TrimSpace(string(out))
}
