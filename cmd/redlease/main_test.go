package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/redlease/redlease/election"
	"github.com/redlease/redlease/internal/testing/redistest"
	"github.com/redlease/redlease/lease"
	"github.com/redlease/redlease/redlock"
)

func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == watchdogCmd {
		main() // `redlease run` in a test re-executes the test binary as its watchdog
	}
	subprocessMain() // the processes of the watchdog's tests
	// Under -race, a process sleeps 1s on exit (atexit_sleep_ms) to let
	// reports in: the watchdog re-executed from the test binary would exit
	// 1s after COMMAND, and redlease see COMMAND stop that late.
	_ = os.Setenv("GORACE", strings.TrimSpace(os.Getenv("GORACE")+" atexit_sleep_ms=0"))
	goleak.VerifyTestMain(m)
}

// The tests run the CLI in process, through run, against real
// redis-server processes (internal/testing/redistest), with real child processes.
// They wait for output and events, never for a fixed time.

// waitLong bounds every wait for output or an event: far above what it
// takes (milliseconds to a TTL), so that only a hang fails a test.
const waitLong = 20 * time.Second

// syncBuffer is an output stream that tests wait on.
type syncBuffer struct {
	mu      sync.Mutex
	b       bytes.Buffer
	changed chan struct{} // closed and replaced on every write
}

func newSyncBuffer() *syncBuffer { return &syncBuffer{changed: make(chan struct{})} }

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	close(b.changed)
	b.changed = make(chan struct{})
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// waitFor waits until the output satisfies ok, and returns it.
func (b *syncBuffer) waitFor(t testing.TB, what string, ok func(string) bool) string {
	t.Helper()
	timer := time.NewTimer(waitLong)
	defer timer.Stop()
	for {
		b.mu.Lock()
		s, ch := b.b.String(), b.changed
		b.mu.Unlock()
		if ok(s) {
			return s
		}
		select {
		case <-ch:
		case <-timer.C:
			t.Fatalf("no %s within %s; output so far:\n%s", what, waitLong, s)
		}
	}
}

// waitContains waits until the output contains sub.
func (b *syncBuffer) waitContains(t testing.TB, sub string) string {
	t.Helper()
	return b.waitFor(t, fmt.Sprintf("%q", sub), func(s string) bool { return strings.Contains(s, sub) })
}

// cli is one run of the CLI in a goroutine.
type cli struct {
	stdout, stderr *syncBuffer
	cancel         context.CancelCauseFunc
	done           chan struct{}
	code           int // set before done is closed
}

// startCLI runs the CLI with args in a goroutine; it is interrupted and
// waited for on cleanup.
func startCLI(t testing.TB, args ...string) *cli {
	t.Helper()
	ctx, cancel := context.WithCancelCause(context.Background())
	c := &cli{stdout: newSyncBuffer(), stderr: newSyncBuffer(), cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(c.done)
		c.code = run(ctx, args, c.stdout, c.stderr)
	}()
	t.Cleanup(func() {
		cancel(signalCause{syscall.SIGTERM})
		<-c.done
		if t.Failed() {
			t.Logf("redlease %s\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), c.stdout, c.stderr)
		}
	})
	return c
}

// interrupt delivers sig as main would, and returns the exit code.
func (c *cli) interrupt(t testing.TB, sig signalCause) int {
	t.Helper()
	c.cancel(sig)
	return c.wait(t)
}

// wait returns the exit code once the CLI has returned.
func (c *cli) wait(t testing.TB) int {
	t.Helper()
	select {
	case <-c.done:
		return c.code
	case <-time.After(waitLong):
		t.Fatalf("redlease did not return within %s; stderr:\n%s", waitLong, c.stderr)
		return -1
	}
}

// runCLI runs the CLI to its end and returns its exit code and output.
func runCLI(t testing.TB, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	c := startCLI(t, args...)
	code = c.wait(t)
	return code, c.stdout.String(), c.stderr.String()
}

// runOK runs the CLI to its end, requires exit 0, and returns its stdout.
func runOK(t testing.TB, args ...string) (stdout string) {
	t.Helper()
	code, stdout, stderr := runCLI(t, args...)
	require.Equal(t, exitOK, code, "stdout:\n%s\nstderr:\n%s", stdout, stderr)
	return stdout
}

// servers starts n redis-servers and returns them with their node list.
func servers(t testing.TB, n int, opts ...redistest.Options) (*redistest.Group, string) {
	t.Helper()
	g := redistest.Start(t, n, opts...)
	return g, strings.Join(g.Addrs(), ",")
}

// testLogger sends logs to t.Log.
func testLogger(t testing.TB) hclog.Logger {
	return hclog.New(&hclog.LoggerOptions{Name: t.Name(), Level: hclog.Debug, Output: tWriter{t}})
}

type tWriter struct{ t testing.TB }

func (w tWriter) Write(p []byte) (int, error) {
	w.t.Log(string(bytes.TrimRight(p, "\n")))
	return len(p), nil
}

// testClient is a bootstrapped redlock.Client over the servers of g (with
// password, when given), closed on cleanup.
func testClient(t testing.TB, g *redistest.Group, password string) *redlock.Client {
	t.Helper()
	var nodes []redis.UniversalClient
	for _, a := range g.Addrs() {
		c := redis.NewClient(&redis.Options{Addr: a, Password: password, DialTimeout: 250 * time.Millisecond,
			ReadTimeout: 500 * time.Millisecond, WriteTimeout: 500 * time.Millisecond, MaxRetries: -1})
		t.Cleanup(func() { _ = c.Close() })
		nodes = append(nodes, c)
	}
	return newTestClient(t, func() (*redlock.Client, error) {
		return redlock.New(context.Background(), redlock.Config{NodeTimeout: 200 * time.Millisecond, Logger: testLogger(t)}, nodes...)
	})
}

func newTestClient(t testing.TB, open func() (*redlock.Client, error)) *redlock.Client {
	t.Helper()
	c, err := open()
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	require.NoError(t, c.Bootstrap(context.Background()))
	return c
}

// candidate is an Elector of the test, running until cleanup.
type candidate struct {
	*election.Elector
	id     string
	cancel context.CancelFunc
	done   chan struct{}
}

// campaign runs an Elector called id for the election name on client,
// and waits until it leads.
func campaign(t testing.TB, client *redlock.Client, name, id string) *candidate {
	t.Helper()
	return campaignTTL(t, client, name, id, 3*time.Second)
}

// campaignTTL is campaign with terms of ttl.
func campaignTTL(t testing.TB, client *redlock.Client, name, id string, ttl time.Duration) *candidate {
	t.Helper()
	c := standByTTL(t, client, name, id, ttl)
	c.waitElected(t)
	return c
}

// standBy runs an Elector called id for the election name on client.
func standBy(t testing.TB, client *redlock.Client, name, id string) *candidate {
	t.Helper()
	return standByTTL(t, client, name, id, 3*time.Second)
}

// standByTTL is standBy with terms of ttl.
func standByTTL(t testing.TB, client *redlock.Client, name, id string, ttl time.Duration) *candidate {
	t.Helper()
	e, err := election.New(client, name, election.Config{Lease: lease.Config{ID: id, TTL: ttl, RetryDelay: 20 * time.Millisecond, Logger: testLogger(t)}})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	c := &candidate{Elector: e, id: id, cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(c.done)
		_ = e.Run(ctx)
	}()
	t.Cleanup(func() { cancel(); <-c.done })
	return c
}

// waitElected waits until the candidate is elected.
func (c *candidate) waitElected(t testing.TB) {
	t.Helper()
	timer := time.NewTimer(waitLong)
	defer timer.Stop()
	for {
		select {
		case ev := <-c.Events():
			if ev.Kind == election.EventElected {
				return
			}
		case <-timer.C:
			t.Fatalf("%s was not elected within %s", c.id, waitLong)
		}
	}
}

// elected returns the term of a candidate that leads.
func (c *candidate) term(t testing.TB) election.Term {
	t.Helper()
	term, ok := c.Term()
	require.True(t, ok, "%s leads", c.id)
	return term
}
