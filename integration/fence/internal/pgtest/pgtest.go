// Package pgtest runs a real PostgreSQL server for tests: its own cluster
// (initdb) in a temporary directory, on a free 127.0.0.1 port with its own
// socket directory, stopped by PID (never by name) and removed in
// t.Cleanup.
//
// The binaries are Debian's (postgresql 15: /usr/lib/postgresql/15/bin,
// which `make servers` installs), or those of the directory named by
// REDLEASE_PG_BIN. PostgreSQL refuses to run as root: when the tests run
// as root, the server runs as the unprivileged user named by
// REDLEASE_PG_USER (default nobody), in a directory under /tmp it owns.
// A missing binary or user fails the test with what is missing; nothing is
// skipped.
package pgtest

import (
	"context"
	"database/sql"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" database/sql driver
)

const (
	// DefaultBin is where Debian's postgresql-15 puts its server binaries.
	DefaultBin = "/usr/lib/postgresql/15/bin"
	// EnvBin names another directory of initdb and postgres.
	EnvBin = "REDLEASE_PG_BIN"
	// EnvUser names the user the server runs as when the tests run as
	// root (default nobody).
	EnvUser = "REDLEASE_PG_USER"

	readyTimeout = 30 * time.Second
	stopTimeout  = 10 * time.Second
)

// Server is one running PostgreSQL server.
type Server struct {
	// DSN reaches the database postgres as the superuser postgres
	// (trust authentication), for the "pgx" driver.
	DSN  string
	dir  string
	cmd  *exec.Cmd
	done chan error // the server's exit
}

// Start starts a server and registers its stop in t.Cleanup.
func Start(t testing.TB) *Server {
	t.Helper()
	bin := os.Getenv(EnvBin)
	if bin == "" {
		bin = DefaultBin
	}
	for _, b := range []string{"initdb", "postgres"} {
		if _, err := os.Stat(filepath.Join(bin, b)); err != nil {
			t.Fatalf("pgtest: %s not found in %s (%v): install PostgreSQL with `make servers` "+
				"(Debian: apt-get install postgresql), or set %s to the directory of initdb and postgres", b, bin, err, EnvBin)
		}
	}
	cred, base := credential(t)
	dir, err := os.MkdirTemp(base, "redlease-pg-")
	if err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	if cred != nil {
		if err := os.Chown(dir, int(cred.Uid), int(cred.Gid)); err != nil {
			t.Fatalf("pgtest: chown %s to uid %d: %v", dir, cred.Uid, err)
		}
	}
	s := &Server{dir: dir}
	initdb := exec.Command(filepath.Join(bin, "initdb"), "-D", s.data(), "-U", "postgres",
		"--auth=trust", "--no-sync", "-E", "UTF8", "--locale=C")
	initdb.Dir, initdb.SysProcAttr = dir, &syscall.SysProcAttr{Credential: cred}
	if out, err := initdb.CombinedOutput(); err != nil {
		t.Fatalf("pgtest: initdb in %s: %v\n%s", dir, err, out)
	}
	var lastErr error
	for range 5 { // a free port may be taken before the server binds it
		if lastErr = s.launch(bin, cred); lastErr == nil {
			t.Cleanup(s.stop)
			return s
		}
	}
	t.Fatalf("pgtest: %v", lastErr)
	return nil
}

// credential is the user the server runs as (nil: this process's) and
// the directory to make its own in.
func credential(t testing.TB) (*syscall.Credential, string) {
	if os.Geteuid() != 0 {
		return nil, os.TempDir()
	}
	name := os.Getenv(EnvUser)
	if name == "" {
		name = "nobody"
	}
	u, err := user.Lookup(name)
	if err != nil {
		t.Fatalf("pgtest: the tests run as root, which PostgreSQL refuses, and the user %q to run it as is missing (%v): "+
			"create it, or name another unprivileged user with %s", name, err, EnvUser)
	}
	uid, _ := strconv.ParseUint(u.Uid, 10, 32)
	gid, _ := strconv.ParseUint(u.Gid, 10, 32)
	// /tmp: every user can reach it, where TMPDIR may be root's own.
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, "/tmp"
}

func (s *Server) data() string { return filepath.Join(s.dir, "data") }

// launch starts postgres on a free port and waits until it accepts a
// connection or exits.
func (s *Server) launch(bin string, cred *syscall.Credential) error {
	port, err := freePort()
	if err != nil {
		return err
	}
	logf, err := os.Create(filepath.Join(s.dir, fmt.Sprintf("postgres-%d.log", port)))
	if err != nil {
		return err
	}
	defer logf.Close()
	cmd := exec.Command(filepath.Join(bin, "postgres"), "-D", s.data(), "-p", strconv.Itoa(port),
		"-k", s.dir, "-c", "listen_addresses=127.0.0.1", "-c", "fsync=off",
		"-c", "synchronous_commit=off", "-c", "full_page_writes=off", "-c", "max_connections=200")
	cmd.Dir, cmd.Stdout, cmd.Stderr = s.dir, logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred, Setpgid: true}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start postgres: %w", err)
	}
	s.cmd, s.done = cmd, make(chan error, 1)
	go func() { s.done <- cmd.Wait() }()
	s.DSN = fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", port)
	if err := s.waitReady(); err != nil {
		s.stop()
		log, _ := os.ReadFile(logf.Name())
		return fmt.Errorf("postgres on port %d: %w\n%s", port, err, log)
	}
	return nil
}

// waitReady waits until the server answers a ping, or exits.
func (s *Server) waitReady() error {
	db, err := sql.Open("pgx", s.DSN)
	if err != nil {
		return err
	}
	defer db.Close()
	deadline := time.Now().Add(readyTimeout)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		err = db.PingContext(ctx)
		cancel()
		if err == nil {
			return nil
		}
		select {
		case werr := <-s.done:
			s.done <- werr
			return fmt.Errorf("exited before it was ready (%v); last ping: %w", werr, err)
		case <-time.After(20 * time.Millisecond): // poll: postgres has no readiness notice to wait on
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("not ready after %s: %w", readyTimeout, err)
		}
	}
}

// stop asks the server for a fast shutdown (SIGINT) by PID, and kills it
// if it has not exited within stopTimeout.
func (s *Server) stop() {
	if s.cmd == nil || s.cmd.Process == nil {
		return
	}
	_ = s.cmd.Process.Signal(syscall.SIGINT)
	select {
	case <-s.done:
	case <-time.After(stopTimeout):
		_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL) // its process group: the postmaster's children too
		<-s.done
	}
	s.cmd = nil
}

// DB opens the server's database through database/sql and closes it in
// t.Cleanup.
func (s *Server) DB(t testing.TB) *sql.DB {
	t.Helper()
	db, err := sql.Open("pgx", s.DSN)
	if err != nil {
		t.Fatalf("pgtest: open %s: %v", s.DSN, err)
	}
	t.Cleanup(func() { _ = db.Close() })
	return db
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
