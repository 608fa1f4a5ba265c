package faultproxy

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

const wait = 5 * time.Second // generous deadline for events that must happen

// startEcho starts a TCP echo server on 127.0.0.1 and stops it (waiting for
// all its goroutines) in t.Cleanup.
func startEcho(t *testing.T) string {
	t.Helper()
	return startGreeter(t, "")
}

// startGreeter starts an echo server that first sends greeting on every
// connection, so that a test can tell servers apart.
func startGreeter(t *testing.T, greeting string) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		conns = map[net.Conn]struct{}{}
	)
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns[c] = struct{}{}
			mu.Unlock()
			wg.Add(1)
			go func() {
				defer wg.Done()
				if _, err := io.WriteString(c, greeting); err == nil {
					_, _ = io.Copy(c, c)
				}
				_ = c.Close()
				mu.Lock()
				delete(conns, c)
				mu.Unlock()
			}()
		}
	}()
	t.Cleanup(func() {
		_ = ln.Close()
		mu.Lock()
		for c := range conns {
			_ = c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	return ln.Addr().String()
}

func newProxy(t *testing.T, target string) *Proxy {
	t.Helper()
	p, err := New(target)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	return p
}

// echoConn starts an echo server behind a new proxy, dials it and makes one
// round trip of msg: a warm connection.
func echoConn(t *testing.T, msg string) (*Proxy, net.Conn) {
	t.Helper()
	p := newProxy(t, startEcho(t))
	c := dial(t, p)
	roundTrip(t, c, msg)
	return p, c
}

func dial(t *testing.T, p *Proxy) net.Conn {
	t.Helper()
	c, err := net.DialTimeout("tcp", p.Addr(), wait)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

func send(t *testing.T, c net.Conn, s string) {
	t.Helper()
	if err := c.SetWriteDeadline(time.Now().Add(wait)); err != nil {
		t.Fatal(err)
	}
	if _, err := io.WriteString(c, s); err != nil {
		t.Fatalf("write: %v", err)
	}
}

func recv(c net.Conn, n int, timeout time.Duration) (string, error) {
	if err := c.SetReadDeadline(time.Now().Add(timeout)); err != nil {
		return "", err
	}
	buf := make([]byte, n)
	_, err := io.ReadFull(c, buf)
	return string(buf), err
}

func mustRecv(t *testing.T, c net.Conn, want string) {
	t.Helper()
	got, err := recv(c, len(want), wait)
	if err != nil {
		t.Fatalf("read: %v", err)
	}
	if got != want {
		t.Fatalf("read %q, want %q", got, want)
	}
}

func roundTrip(t *testing.T, c net.Conn, s string) {
	t.Helper()
	send(t, c, s)
	mustRecv(t, c, s)
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// expectSilence asserts no data arrives within a short window.
func expectSilence(t *testing.T, c net.Conn) {
	t.Helper()
	got, err := recv(c, 1, 100*time.Millisecond)
	if !isTimeout(err) {
		t.Fatalf("expected read timeout, got %q, %v", got, err)
	}
}

// expectClosed asserts the connection fails (EOF/reset), not times out.
func expectClosed(t *testing.T, c net.Conn) {
	t.Helper()
	_, err := recv(c, 1, wait)
	if err == nil || isTimeout(err) {
		t.Fatalf("expected connection error, got %v", err)
	}
}

// eventually polls cond until it holds or the deadline passes.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(wait)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

func TestForward(t *testing.T) {
	p := newProxy(t, startEcho(t))
	c1, c2 := dial(t, p), dial(t, p)
	roundTrip(t, c1, "hello")
	roundTrip(t, c2, "world!")
	big := bytes.Repeat([]byte("0123456789"), 20000)
	send(t, c1, string(big))
	mustRecv(t, c1, string(big))
	if n := p.Conns(); n != 2 {
		t.Fatalf("Conns = %d, want 2", n)
	}
	// The count follows the write upstream: the echo may come back first.
	eventually(t, "BytesUp", func() bool { return p.BytesUp() == int64(11+len(big)) })
	eventually(t, "BytesDown", func() bool { return p.BytesDown() == int64(11+len(big)) })
	_ = c1.Close()
	eventually(t, "conn removal", func() bool { return p.Conns() == 1 })
}

// TestSetTarget: new connections go to the new target; open ones keep
// their upstream until reset.
func TestSetTarget(t *testing.T) {
	a, b := startGreeter(t, "A"), startGreeter(t, "B")
	p := newProxy(t, a)
	old := dial(t, p)
	mustRecv(t, old, "A")
	p.SetTarget(b)
	if got := p.Target(); got != b {
		t.Fatalf("Target = %s, want %s", got, b)
	}
	moved := dial(t, p)
	mustRecv(t, moved, "B")
	roundTrip(t, moved, "to b")
	roundTrip(t, old, "still a")
	p.ResetAll()
	expectClosed(t, old)
	mustRecv(t, dial(t, p), "B")
}

func TestUpstreamDown(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	target := ln.Addr().String()
	_ = ln.Close()
	p := newProxy(t, target)
	expectClosed(t, dial(t, p))
}

func TestLatency(t *testing.T) {
	p, c := echoConn(t, "warm")
	const d = 150 * time.Millisecond
	p.SetLatency(d)
	if p.Latency() != d {
		t.Fatal("Latency mismatch")
	}
	start := time.Now()
	roundTrip(t, c, "ping")
	if el := time.Since(start); el < d {
		t.Fatalf("reply after %v, want >= %v", el, d)
	}

	// Lowering latency releases a pending chunk early.
	p.SetLatency(time.Hour)
	send(t, c, "slow")
	eventually(t, "pending chunk", func() bool { return p.Pending() == 1 })
	expectSilence(t, c)
	p.SetLatency(0)
	mustRecv(t, c, "slow")
}

func TestHoldRelease(t *testing.T) {
	p, c := echoConn(t, "x")
	p.Hold()
	if p.Held() != 0 {
		t.Fatal("Held != 0 before any reply")
	}
	send(t, c, "a")
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	if err := p.WaitHeld(ctx); err != nil {
		t.Fatal(err)
	}
	send(t, c, "b")
	eventually(t, "second held chunk", func() bool { return p.Held() == 2 })
	expectSilence(t, c)
	p.Release()
	if p.Held() != 0 {
		t.Fatal("Held != 0 after Release")
	}
	mustRecv(t, c, "ab")
	roundTrip(t, c, "c")
}

func TestWaitHeldCanceled(t *testing.T) {
	p := newProxy(t, startEcho(t))
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if err := p.WaitHeld(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("WaitHeld = %v", err)
	}
	done := make(chan error, 1)
	go func() { done <- p.WaitHeld(context.Background()) }()
	_ = p.Close()
	select {
	case err := <-done:
		if !errors.Is(err, ErrClosed) {
			t.Fatalf("WaitHeld after Close = %v", err)
		}
	case <-time.After(wait):
		t.Fatal("WaitHeld not woken by Close")
	}
}

func TestPartitionHeal(t *testing.T) {
	p, c := echoConn(t, "before")
	p.Partition()
	send(t, c, "lost")
	expectSilence(t, c)
	c2 := dial(t, p) // new connections are blackholed too
	send(t, c2, "lost2")
	expectSilence(t, c2)
	p.Heal()
	roundTrip(t, c, "after")
	roundTrip(t, c2, "after2")
	roundTrip(t, dial(t, p), "fresh")
}

func TestPartitionDropsDelayedReplies(t *testing.T) {
	p, c := echoConn(t, "x")
	p.Hold()
	send(t, c, "dropped")
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	if err := p.WaitHeld(ctx); err != nil {
		t.Fatal(err)
	}
	p.Partition()
	p.Release()
	eventually(t, "drop", func() bool { return p.Pending() == 0 })
	p.Heal()
	roundTrip(t, c, "y")
}

func TestResetAll(t *testing.T) {
	p := newProxy(t, startEcho(t))
	c1, c2 := dial(t, p), dial(t, p)
	roundTrip(t, c1, "1")
	roundTrip(t, c2, "2")
	p.ResetAll()
	if n := p.Conns(); n != 0 {
		t.Fatalf("Conns after ResetAll = %d", n)
	}
	expectClosed(t, c1)
	expectClosed(t, c2)
	roundTrip(t, dial(t, p), "new")
}

func TestDisableEnable(t *testing.T) {
	p, c := echoConn(t, "1")
	p.Disable()
	expectClosed(t, c)
	c2, err := net.DialTimeout("tcp", p.Addr(), wait)
	if err == nil { // dial may succeed (backlog); the conn must then fail
		defer func() { _ = c2.Close() }()
		_, _ = c2.Write([]byte("x"))
		expectClosed(t, c2)
	}
	if n := p.Conns(); n != 0 {
		t.Fatalf("Conns while disabled = %d", n)
	}
	p.Enable()
	roundTrip(t, dial(t, p), "back")
}

func TestCloseWithFaults(t *testing.T) {
	p, err := New(startEcho(t))
	if err != nil {
		t.Fatal(err)
	}
	held, slow, part := dial(t, p), dial(t, p), dial(t, p)
	for _, c := range []net.Conn{held, slow, part} {
		roundTrip(t, c, "ok")
	}
	p.SetLatency(time.Hour)
	send(t, slow, "slow")
	eventually(t, "pending", func() bool { return p.Pending() == 1 })
	p.Hold()
	send(t, held, "held")
	eventually(t, "held", func() bool { return p.Held() == 2 })
	p.Partition()
	send(t, part, "part")
	_ = p.Close()
	if err := p.Close(); err != nil {
		t.Fatalf("second Close = %v", err)
	}
	for _, c := range []net.Conn{held, slow, part} {
		expectClosed(t, c)
	}
	if _, err := net.DialTimeout("tcp", p.Addr(), wait); err == nil {
		t.Fatal("dial after Close succeeded")
	}
}

func TestCloseBlockedWriters(t *testing.T) {
	p, c := echoConn(t, "x")
	// Flood without reading.
	chunk := bytes.Repeat([]byte("z"), 64<<10)
	_ = c.SetWriteDeadline(time.Now().Add(wait))
	for sent := 0; sent < 8<<20; sent += len(chunk) {
		if _, err := c.Write(chunk); err != nil {
			t.Fatal(err)
		}
	}
	// Replies the client does not read pile up in the proxy, whose write to
	// the client blocks once the socket buffers are full.
	eventually(t, "blocked delivery", func() bool { return p.Pending() > 0 })
	done := make(chan struct{})
	go func() { _ = p.Close(); close(done) }()
	select {
	case <-done:
	case <-time.After(wait):
		t.Fatal("Close blocked")
	}
}

func TestConcurrentFaults(t *testing.T) {
	p := newProxy(t, startEcho(t))
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() { cycleFaults(p, stop) })
	for range 4 {
		wg.Go(func() { pingLoop(p, stop) })
	}
	time.Sleep(300 * time.Millisecond) // stress duration, not synchronization
	close(stop)
	wg.Wait()
	p.Heal()
	p.Release()
	p.Enable()
	p.SetLatency(0)
	roundTrip(t, dial(t, p), "final")
}

// cycleFaults sets and lifts every kind of fault on p in turn, a
// millisecond apart, until stop is closed.
func cycleFaults(p *Proxy, stop <-chan struct{}) {
	for i := 0; ; i++ {
		select {
		case <-stop:
			return
		default:
		}
		switch i % 8 {
		case 0:
			p.SetLatency(time.Millisecond)
		case 1:
			p.Hold()
		case 2:
			p.Release()
		case 3:
			p.Partition()
		case 4:
			p.Heal()
		case 5:
			p.ResetAll()
		case 6:
			p.Disable()
		case 7:
			p.Enable()
			p.SetLatency(0)
		}
		_, _, _ = p.Conns(), p.Held(), p.Pending()
		time.Sleep(time.Millisecond)
	}
}

// pingLoop connects through p and pings a few times per connection,
// whatever fails, until stop is closed.
func pingLoop(p *Proxy, stop <-chan struct{}) {
	buf := make([]byte, 16)
	for {
		select {
		case <-stop:
			return
		default:
		}
		c, err := net.DialTimeout("tcp", p.Addr(), wait)
		if err != nil {
			continue
		}
		_ = c.SetDeadline(time.Now().Add(20 * time.Millisecond))
		for j := 0; j < 5; j++ {
			if _, err := c.Write([]byte("ping")); err != nil {
				break
			}
			if _, err := c.Read(buf); err != nil {
				break
			}
		}
		_ = c.Close()
	}
}
