// Package redistest runs real redis-server processes for tests: single
// servers, replicas (StartReplica), Redis Clusters (StartCluster) and
// redis-sentinel processes watching groups of them (StartSentinels). It is
// the one real-server rig of the repository: StartRig adds the clients and
// fault proxies a test of a client needs (Rig), NewClient and NewProxy make
// them one at a time, and StartMain serves TestMain and the benchmark
// harness, which have no testing.TB.
//
// Start launches servers on free 127.0.0.1 ports, each with its own
// t.TempDir, and registers a t.Cleanup that stops every process it started
// (by PID, never by name) and reaps it, so no process or goroutine outlives
// the test.
//
// Error handling: Start and Client run on the test goroutine and call
// t.Fatalf on failure. The fault methods of Server (Stop, Kill, Pause,
// Resume, Restart) return an error instead, so they may be called from any
// goroutine; tests check them with require.NoError.
//
// docs/design.md §7.1 describes the suites that use it.
package redistest

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

const (
	// readyTimeout bounds how long a started server may take to answer.
	readyTimeout = 10 * time.Second
	// stopTimeout bounds how long a SIGTERMed server may take to exit
	// before it is sent SIGKILL.
	stopTimeout = 5 * time.Second
	// bindAttempts is how many free ports Start tries per server.
	bindAttempts = 5
	// logTailLines is how many log lines startup errors include.
	logTailLines = 30
)

// EnvServerBinary names the environment variable that picks the server
// binary the tests run (a path, or a name looked up in PATH): redis-server
// when unset; `make test` sets it to run the suite on Redis and on Valkey.
// Setup failures name the binary and its version.
const EnvServerBinary = "REDLEASE_REDIS_SERVER"

// Persistence selects how a server persists its data set.
type Persistence int

const (
	// PersistNone disables persistence (save "" and appendonly no): a
	// server comes back empty from any restart.
	PersistNone Persistence = iota
	// PersistAOF enables the append-only file with appendfsync always, so
	// every acknowledged write survives Stop, Kill and Restart(false).
	PersistAOF
	// PersistRDB enables RDB snapshots with Redis' default save points.
	// Stop (SIGTERM) and the SAVE/BGSAVE commands write dump.rdb; Kill
	// loses writes made since the last snapshot.
	PersistRDB
)

// Options configures the servers started by Start. The zero value means
// PersistNone and no extra directives.
type Options struct {
	// Persistence selects the persistence mode.
	Persistence Persistence
	// Extra holds additional redis.conf lines, such as
	// "maxmemory-policy allkeys-lru". They are appended after the
	// generated directives and therefore take precedence.
	Extra []string
	// Env holds additional environment variables of the server processes
	// ("NAME=value"), such as a clockshim.Clock's Env (LD_PRELOAD).
	Env []string
}

// Group is a set of servers started together by Start.
type Group struct {
	servers []*Server
}

// Start launches n redis-server processes configured by opts (at most
// one Options value) and waits until each is ready. It calls t.Fatalf if
// redis-server is not installed or a server fails to start; the error
// includes the tail of that server's log. Every process is stopped and
// reaped by t.Cleanup.
func Start(t testing.TB, n int, opts ...Options) *Group {
	t.Helper()
	if n < 1 || len(opts) > 1 {
		t.Fatalf("redistest.Start: need n >= 1 and at most one Options, got n=%d and %d Options", n, len(opts))
	}
	o, bin := setup(t, opts)
	g := &Group{servers: make([]*Server, n)}
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		// Each server's directory and cleanup are registered here, in
		// the test's goroutine; the servers start side by side.
		s := prepareServer(t, &Server{bin: bin, opts: o})
		g.servers[i] = s
		wg.Go(func() { errs[i] = s.startOnFreePort() })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("redistest: server %d: %v", i, err)
		}
	}
	return g
}

// setup returns the Options of opts (the zero value when there is none;
// the callers refuse more than one) and the server binary; it fails the
// test when there is no binary.
func setup(t testing.TB, opts []Options) (Options, string) {
	t.Helper()
	var o Options
	if len(opts) == 1 {
		o = opts[0]
	}
	bin, err := serverBinary()
	if err != nil {
		t.Fatalf("redistest: %v: run `make test` (installs redis-server and valkey-server) or `apt-get install redis-server`, or name a server binary in %s", err, EnvServerBinary)
	}
	return o, bin
}

// startServer gives s its directories, starts it on a free port and
// registers its stop with t.Cleanup.
func startServer(t testing.TB, s *Server) (*Server, error) {
	s = prepareServer(t, s)
	return s, s.startOnFreePort()
}

// prepareServer gives s its directory and registers its cleanup.
func prepareServer(t testing.TB, s *Server) *Server {
	dir := t.TempDir()
	s.dataDir = filepath.Join(dir, "data")
	s.logPath = filepath.Join(dir, "redis.log")
	s.cfgPath = filepath.Join(dir, "redis.conf")
	// Registered after t.TempDir, so it runs before the directory is
	// removed. SIGKILL: the data is thrown away, and a graceful stop
	// waits for the server's next cron tick (up to 100ms at hz 10).
	t.Cleanup(func() { _ = s.Kill() })
	return s
}

// Servers returns the servers in start order.
func (g *Group) Servers() []*Server {
	return append([]*Server(nil), g.servers...)
}

// Server returns the i-th server (0-based).
func (g *Group) Server(i int) *Server {
	return g.servers[i]
}

// Addrs returns the "127.0.0.1:port" address of every server.
func (g *Group) Addrs() []string {
	addrs := make([]string, len(g.servers))
	for i, s := range g.servers {
		addrs[i] = s.Addr()
	}
	return addrs
}

// Clients returns one new client per server, as Server.Client does.
func (g *Group) Clients(t testing.TB) []*redis.Client {
	clients := make([]*redis.Client, len(g.servers))
	for i, s := range g.servers {
		clients[i] = s.Client(t)
	}
	return clients
}

// Server is one redis-server process. Its port and directories stay the
// same across restarts. Its methods are safe for concurrent use.
type Server struct {
	bin  string
	args []string // after the config file's path
	opts Options
	// sentinel: a redis-sentinel process (see StartSentinels): its
	// configuration is its monitor lines (opts.Extra), and it is ready
	// when it answers as its process (it has no data to load).
	sentinel bool
	port     int // set before the Server is published, then constant
	dataDir  string
	logPath  string
	cfgPath  string

	ops sync.Mutex              // serializes Stop, Kill, Pause, Resume and Restart
	cur atomic.Pointer[process] // most recently started process
}

// process is one started redis-server and the goroutine reaping it.
type process struct {
	p    *os.Process
	done chan struct{} // closed once the process has been reaped
	err  error         // Wait's result; read only after done is closed
}

func (pr *process) exited() bool {
	select {
	case <-pr.done:
		return true
	default:
		return false
	}
}

// Addr returns the server's "127.0.0.1:port" address.
func (s *Server) Addr() string {
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(s.port))
}

// Port returns the server's TCP port.
func (s *Server) Port() int {
	return s.port
}

// LogPath returns the path of the server's log file, for a failed test's
// report.
func (s *Server) LogPath() string {
	return s.logPath
}

// PID returns the process ID of the most recently started redis-server
// process, which may have exited since.
func (s *Server) PID() int {
	return s.cur.Load().p.Pid
}

// Running reports whether the server process is alive (a paused server is
// running).
func (s *Server) Running() bool {
	return !s.cur.Load().exited()
}

// Client returns a new go-redis client for the server, closed by
// t.Cleanup. It keeps go-redis' default options (3 retries, 5s dial and
// 3s read timeouts), so a call to a dead or paused server fails only after
// those bounds; build a client with redis.NewClient and Addr for other
// settings.
func (s *Server) Client(t testing.TB) *redis.Client {
	c := redis.NewClient(&redis.Options{Addr: s.Addr()})
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// Stop shuts the server down gracefully: SIGTERM (and SIGCONT, in case it
// is paused), then waits for it to exit. A server that has not exited
// within 5s is killed with SIGKILL and Stop returns an error saying so.
// Stopping a server that is not running does nothing.
func (s *Server) Stop() error {
	s.ops.Lock()
	defer s.ops.Unlock()
	return s.halt(true)
}

// Kill kills the server with SIGKILL and waits for it to exit. Killing a
// server that is not running does nothing.
func (s *Server) Kill() error {
	s.ops.Lock()
	defer s.ops.Unlock()
	return s.halt(false)
}

// Pause freezes the server with SIGSTOP: it keeps its port and accepts TCP
// connections, but answers nothing until Resume. On Linux, Pause returns
// once the process is stopped.
func (s *Server) Pause() error {
	return s.signal("pause", syscall.SIGSTOP, waitStopped)
}

// Resume continues a server frozen by Pause (SIGCONT).
func (s *Server) Resume() error {
	return s.signal("resume", syscall.SIGCONT, func(*process) error { return nil })
}

// signal sends sig to the running process and then waits with then;
// op names the operation in errors.
func (s *Server) signal(op string, sig syscall.Signal, then func(*process) error) error {
	s.ops.Lock()
	defer s.ops.Unlock()
	pr := s.cur.Load()
	if pr.exited() {
		return fmt.Errorf("redistest: %s %s: not running", op, s.Addr())
	}
	if err := pr.p.Signal(sig); err != nil {
		return fmt.Errorf("redistest: %s %s: %w", op, s.Addr(), err)
	}
	return then(pr)
}

// Restart starts the server again on the same port and waits until it is
// ready. A running server is first stopped as by Stop. With empty set, the
// data directory is wiped first, so the server comes back with no data;
// otherwise it reloads its AOF or RDB files (see Persistence).
func (s *Server) Restart(empty bool) error {
	s.ops.Lock()
	defer s.ops.Unlock()
	_ = s.halt(true) // escalating to SIGKILL is not a reason to fail a restart
	if empty {
		if err := os.RemoveAll(s.dataDir); err != nil {
			return fmt.Errorf("redistest: restart %s: %w", s.Addr(), err)
		}
	}
	if err := s.launch(); err != nil {
		return fmt.Errorf("redistest: restart %s: %w", s.Addr(), err)
	}
	return nil
}

// halt stops the current process, gracefully or with SIGKILL, and waits
// until it is reaped. The caller holds s.ops.
func (s *Server) halt(graceful bool) error {
	pr := s.cur.Load()
	if pr == nil || pr.exited() {
		return nil
	}
	if graceful {
		// Signal errors only mean the process is already gone.
		_ = pr.p.Signal(syscall.SIGTERM)
		_ = pr.p.Signal(syscall.SIGCONT)
		timer := time.NewTimer(stopTimeout)
		defer timer.Stop()
		select {
		case <-pr.done:
			return nil
		case <-timer.C:
		}
	}
	_ = pr.p.Kill()
	<-pr.done
	if graceful {
		return fmt.Errorf("redistest: %s (pid %d) did not exit within %v of SIGTERM; sent SIGKILL", s.Addr(), pr.p.Pid, stopTimeout)
	}
	return nil
}

var errAddrInUse = errors.New("address already in use")

// startOnFreePort picks a free port and launches the server on it,
// retrying with another port if someone else grabbed it meanwhile.
func (s *Server) startOnFreePort() error {
	var err error
	for range bindAttempts {
		if s.port, err = freePort(); err != nil {
			return err
		}
		if err = s.launch(); !errors.Is(err, errAddrInUse) {
			return err
		}
	}
	return err
}

// freePort returns a port that was free on 127.0.0.1 a moment ago.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("pick free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// config returns the redis.conf lines for the server. All per-server
// configuration is generated here.
func (s *Server) config() []string {
	lines := []string{
		"bind 127.0.0.1",
		"port " + strconv.Itoa(s.port),
		"dir " + strconv.Quote(s.dataDir),
		"logfile " + strconv.Quote(s.logPath),
		"daemonize no",
		"protected-mode no",
	}
	if s.sentinel {
		return append(lines, s.opts.Extra...)
	}
	lines = append(lines, "repl-diskless-sync-delay 0")
	switch s.opts.Persistence {
	case PersistAOF:
		lines = append(lines, `save ""`, "appendonly yes", "appendfsync always")
	case PersistRDB:
		lines = append(lines, "save 3600 1 300 100 60 10000", "appendonly no")
	default:
		lines = append(lines, `save ""`, "appendonly no")
	}
	return append(lines, s.opts.Extra...)
}

// launch starts redis-server on s.port and waits until it is ready. The
// caller holds s.ops or has not yet published s.
func (s *Server) launch() error {
	if err := os.MkdirAll(s.dataDir, 0o755); err != nil {
		return err
	}
	cfg := strings.Join(s.config(), "\n") + "\n"
	if err := os.WriteFile(s.cfgPath, []byte(cfg), 0o644); err != nil {
		return err
	}
	// redis-server writes early errors (e.g. bad config) to stderr and the
	// rest to logfile; both go to the same file, opened for appending.
	logf, err := os.OpenFile(s.logPath, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer logf.Close()
	logStart, err := logf.Seek(0, io.SeekEnd)
	if err != nil {
		return err
	}
	cmd := exec.Command(s.bin, append([]string{s.cfgPath}, s.args...)...)
	cmd.Stdout, cmd.Stderr = logf, logf // *os.File: no copying goroutines
	cmd.SysProcAttr = sysProcAttr()
	if len(s.opts.Env) > 0 {
		cmd.Env = append(os.Environ(), s.opts.Env...)
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	pr := &process{p: cmd.Process, done: make(chan struct{})}
	go func() {
		pr.err = cmd.Wait()
		close(pr.done)
	}()
	s.cur.Store(pr)

	if err := s.waitReady(pr); err != nil {
		_ = pr.p.Kill()
		<-pr.done
		tail := s.logTail(logStart)
		if strings.Contains(tail, "Address already in use") {
			err = fmt.Errorf("%w: %w", errAddrInUse, err)
		}
		return fmt.Errorf("%s on %s: %w\n--- log tail (%s) ---\n%s", describe(s.bin), s.Addr(), err, s.logPath, tail)
	}
	return nil
}

// waitReady polls the server until it answers as process pr with its data
// loaded, pr exits, or readyTimeout passes.
func (s *Server) waitReady(pr *process) error {
	deadline := time.Now().Add(readyTimeout)
	ticker := time.NewTicker(10 * time.Millisecond)
	defer ticker.Stop()
	for {
		err := probe(s.Addr(), pr.p.Pid, s.sentinel)
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("not ready within %v: %w", readyTimeout, err)
		}
		select {
		case <-pr.done:
			return fmt.Errorf("exited before becoming ready: %v", pr.err)
		case <-ticker.C:
		}
	}
}

// probe sends INFO and checks that the server at addr is process pid (not
// some other process that took the port) and has finished loading its
// data. A server that demands AUTH (requirepass in Options.Extra) counts
// as ready without those checks. A sentinel is ready once it answers as
// process pid.
func probe(addr string, pid int, sentinel bool) error {
	conn, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return err
	}
	defer conn.Close()
	if err := conn.SetDeadline(time.Now().Add(time.Second)); err != nil {
		return err
	}
	req := "INFO server persistence\r\n"
	if sentinel {
		req = "INFO server\r\n"
	}
	if _, err := io.WriteString(conn, req); err != nil {
		return err
	}
	r := bufio.NewReader(conn)
	line, err := r.ReadString('\n')
	if err != nil {
		return err
	}
	line = strings.TrimSpace(line)
	if strings.HasPrefix(line, "-NOAUTH") {
		return nil
	}
	n, err := strconv.Atoi(strings.TrimPrefix(line, "$"))
	if !strings.HasPrefix(line, "$") || err != nil {
		return fmt.Errorf("unexpected INFO reply %q", line)
	}
	info := make([]byte, n)
	if _, err := io.ReadFull(r, info); err != nil {
		return err
	}
	switch {
	case !strings.Contains(string(info), "\nprocess_id:"+strconv.Itoa(pid)+"\r"):
		return errors.New("port answered by another process")
	case !sentinel && !strings.Contains(string(info), "\nloading:0\r"):
		return errors.New("still loading data")
	}
	return nil
}

// logTail returns the last lines the log gained since offset.
func (s *Server) logTail(offset int64) string {
	b, err := os.ReadFile(s.logPath)
	if err != nil {
		return err.Error()
	}
	if offset <= int64(len(b)) {
		b = b[offset:]
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > logTailLines {
		lines = lines[len(lines)-logTailLines:]
	}
	return strings.Join(lines, "\n")
}

// serverBinary locates redis-server, honouring EnvServerBinary.
func serverBinary() (string, error) {
	name := "redis-server"
	if v := os.Getenv(EnvServerBinary); v != "" {
		name = v
	}
	return exec.LookPath(name)
}
