// Package faultproxy is an in-process TCP proxy for fault-injection tests.
//
// A Proxy listens on 127.0.0.1 on an ephemeral port and forwards every
// accepted connection to a single target address (one upstream dial per
// accepted connection). Faults (latency, hold, partition, reset, disable) can
// be switched at any time from any goroutine and apply to existing and new
// connections alike.
//
// Data is forwarded in chunks (whatever a single Read returned). Only the
// server->client direction (replies) is subject to latency and hold; the
// partition fault drops data in both directions. Half-close is not supported:
// when either side ends, the whole proxied connection is closed (replies that
// were already read from the server are still delivered first, unless a fault
// intervenes).
//
// docs/design.md §7.1 describes the fault suite that uses it.
package faultproxy

import (
	"context"
	"errors"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// ErrClosed is returned by WaitHeld when the proxy is closed.
var ErrClosed = errors.New("faultproxy: proxy closed")

const (
	bufSize     = 32 << 10
	dialTimeout = 5 * time.Second
)

// Proxy is a fault-injecting TCP proxy. All methods are safe for concurrent
// use by multiple goroutines.
type Proxy struct {
	ln     net.Listener
	ctx    context.Context // canceled by Close; aborts in-flight dials
	cancel context.CancelFunc
	wg     sync.WaitGroup

	bytesUp   atomic.Int64
	bytesDown atomic.Int64
	accepted  atomic.Int64

	mu          sync.Mutex
	changed     chan struct{} // closed and replaced on every state change
	conns       map[*conn]struct{}
	target      string
	latency     time.Duration
	held        bool
	writing     int // server->client chunks being written to clients now
	partitioned bool
	disabled    bool
	closed      bool
}

type chunk struct {
	data    []byte
	arrived time.Time
}

// conn is one proxied connection. All fields except client and done are
// guarded by Proxy.mu; done is closed (under Proxy.mu) when the connection
// is torn down.
type conn struct {
	client net.Conn
	done   chan struct{}

	server net.Conn // nil until the upstream dial succeeds
	queue  []chunk  // server->client chunks not yet delivered
	eof    bool     // server side finished reading
	closed bool
}

// New starts a proxy listening on 127.0.0.1:0 that forwards each accepted
// connection to target. The caller must call Close.
func New(target string) (*Proxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	p := &Proxy{
		ln:      ln,
		target:  target,
		ctx:     ctx,
		cancel:  cancel,
		changed: make(chan struct{}),
		conns:   make(map[*conn]struct{}),
	}
	p.wg.Add(1)
	go p.acceptLoop()
	return p, nil
}

// Addr returns the proxy's listen address ("127.0.0.1:port"). It is safe for
// concurrent use.
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

// Addrs returns the listen address of every proxy of ps, in order.
func Addrs(ps []*Proxy) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = p.Addr()
	}
	return out
}

// Target returns the upstream address new connections are forwarded to.
// It is safe for concurrent use.
func (p *Proxy) Target() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.target
}

// SetTarget forwards the connections accepted from now on to target
// instead, as a failover manager, a DNS name or a virtual IP moving to
// another server would. Connections already open keep their upstream
// until it ends them or ResetAll is called. Safe for concurrent use.
func (p *Proxy) SetTarget(target string) { p.update(func() { p.target = target }) }

// update runs f under the lock, then wakes the connections' goroutines so
// that they see the change.
func (p *Proxy) update(f func()) {
	p.mu.Lock()
	defer p.mu.Unlock()
	f()
	p.notifyLocked()
}

// Close stops the listener, closes all proxied connections and waits until
// every goroutine started by the proxy has exited. It is idempotent and safe
// for concurrent use; it never blocks on faults (held, delayed or
// partitioned data is discarded).
func (p *Proxy) Close() error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		p.wg.Wait()
		return nil
	}
	p.closed = true
	p.cancel()
	err := p.ln.Close()
	p.closeAllLocked(false)
	p.notifyLocked()
	p.mu.Unlock()
	p.wg.Wait()
	return err
}

// SetLatency delays every server->client chunk so that a chunk that arrived
// from the server at time T is delivered to the client no earlier than T+d
// (not cumulative: back-to-back chunks are delayed concurrently, order is
// kept). The current latency is applied to undelivered chunks too, so
// lowering it releases pending chunks early. d <= 0 disables latency. Safe
// for concurrent use.
func (p *Proxy) SetLatency(d time.Duration) { p.update(func() { p.latency = d }) }

// Latency returns the current latency. Safe for concurrent use.
func (p *Proxy) Latency() time.Duration {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.latency
}

// Hold stops delivering server->client data on all connections; replies are
// buffered (in order) until Release. It returns once the chunks that were
// being written to clients when it was called are written: from then on no
// server->client byte is delivered (BytesDown stays put) until Release.
// Safe for concurrent use.
func (p *Proxy) Hold() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.held = true
	p.notifyLocked()
	for p.writing > 0 {
		ch := p.changed
		p.mu.Unlock()
		<-ch
		p.mu.Lock()
	}
}

// Release ends a Hold; buffered replies are flushed in order (still subject
// to latency and partition). Safe for concurrent use.
func (p *Proxy) Release() { p.update(func() { p.held = false }) }

// Held returns the number of server->client chunks currently buffered by a
// Hold (0 when not holding). Safe for concurrent use.
func (p *Proxy) Held() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.held {
		return 0
	}
	return p.pendingLocked()
}

// Pending returns the number of server->client chunks read from the server
// but not yet written to the client (held, delayed, or about to be written).
// Safe for concurrent use.
func (p *Proxy) Pending() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.pendingLocked()
}

// WaitHeld blocks until Held() >= 1, i.e. at least one reply chunk is being
// withheld from a client. It returns ctx.Err() if ctx ends first and
// ErrClosed if the proxy is closed. Safe for concurrent use.
func (p *Proxy) WaitHeld(ctx context.Context) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	for {
		if p.closed {
			return ErrClosed
		}
		if p.held && p.pendingLocked() > 0 {
			return nil
		}
		ch := p.changed
		p.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
		}
		p.mu.Lock()
		if err := ctx.Err(); err != nil {
			return err
		}
	}
}

// Partition blackholes all traffic in both directions on existing and new
// connections without closing them, so clients observe timeouts. Data read
// while partitioned (including replies that were buffered or delayed and
// come due during the partition) is discarded, never delivered later. New
// connections are still accepted and dialed upstream. Safe for concurrent
// use.
func (p *Proxy) Partition() { p.update(func() { p.partitioned = true }) }

// Heal ends a Partition; data sent after Heal flows normally. Data dropped
// during the partition is lost, so a connection used during the partition
// may be desynchronized (e.g. a RESP client will read the wrong replies).
// Safe for concurrent use.
func (p *Proxy) Heal() { p.update(func() { p.partitioned = false }) }

// ResetAll abruptly closes every current connection: the client side is
// reset (SO_LINGER 0, so the client sees ECONNRESET or EOF) and the upstream
// side is closed. Undelivered data is discarded. New connections are
// unaffected. When ResetAll returns, Conns() no longer counts the reset
// connections. Safe for concurrent use.
func (p *Proxy) ResetAll() { p.update(func() { p.closeAllLocked(true) }) }

// Disable emulates a dead node: all current connections are reset as by
// ResetAll and, until Enable, new connections are reset immediately after
// accept (the client's dial may succeed, but its first read or write fails).
// Safe for concurrent use.
func (p *Proxy) Disable() {
	p.update(func() {
		p.disabled = true
		p.closeAllLocked(true)
	})
}

// Enable ends Disable; new connections are proxied again. Safe for concurrent
// use.
func (p *Proxy) Enable() { p.update(func() { p.disabled = false }) }

// Conns returns the number of currently open proxied connections. Safe for
// concurrent use.
func (p *Proxy) Conns() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.conns)
}

// Accepted returns the total number of connections accepted (including ones
// refused by Disable). Safe for concurrent use.
func (p *Proxy) Accepted() int64 { return p.accepted.Load() }

// BytesUp returns the total number of client->server bytes forwarded. Safe
// for concurrent use.
func (p *Proxy) BytesUp() int64 { return p.bytesUp.Load() }

// BytesDown returns the total number of server->client bytes delivered. Safe
// for concurrent use.
func (p *Proxy) BytesDown() int64 { return p.bytesDown.Load() }

// notifyLocked wakes every goroutine waiting for a state change.
func (p *Proxy) notifyLocked() {
	close(p.changed)
	p.changed = make(chan struct{})
}

// waitLocked releases p.mu until the proxy state changes, done is closed or
// (if d > 0) d elapses, then re-acquires p.mu.
func (p *Proxy) waitLocked(done <-chan struct{}, d time.Duration) {
	ch := p.changed
	p.mu.Unlock()
	defer p.mu.Lock()
	var timeout <-chan time.Time
	if d > 0 {
		t := time.NewTimer(d)
		defer t.Stop()
		timeout = t.C
	}
	select {
	case <-ch:
	case <-done:
	case <-timeout:
	}
}

func (p *Proxy) pendingLocked() int {
	n := 0
	for c := range p.conns {
		n += len(c.queue)
	}
	return n
}

func (p *Proxy) closeAllLocked(reset bool) {
	for c := range p.conns {
		p.closeConnLocked(c, reset)
	}
}

// closeConnLocked tears c down; idempotent. Closing sockets does not block
// (no positive linger is ever set).
func (p *Proxy) closeConnLocked(c *conn, reset bool) {
	if c.closed {
		return
	}
	c.closed = true
	c.queue = nil
	delete(p.conns, c)
	close(c.done)
	if reset {
		setLinger0(c.client)
	}
	_ = c.client.Close()
	if c.server != nil {
		_ = c.server.Close()
	}
	p.notifyLocked()
}

func setLinger0(c net.Conn) {
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.SetLinger(0)
	}
}

func (p *Proxy) acceptLoop() {
	defer p.wg.Done()
	for {
		nc, err := p.ln.Accept()
		if err != nil {
			// Listener closed (by Close) or broken: stop accepting.
			return
		}
		p.accepted.Add(1)
		p.mu.Lock()
		switch {
		case p.closed:
			_ = nc.Close()
		case p.disabled:
			setLinger0(nc)
			_ = nc.Close()
		default:
			c := &conn{client: nc, done: make(chan struct{})}
			p.conns[c] = struct{}{}
			p.notifyLocked()
			p.wg.Add(1)
			go p.handle(c)
		}
		p.mu.Unlock()
	}
}

// handle dials upstream, then runs the client->server copy loop while two
// more goroutines read from the server and deliver to the client.
func (p *Proxy) handle(c *conn) {
	defer p.wg.Done()
	p.mu.Lock()
	target := p.target
	p.mu.Unlock()
	d := net.Dialer{Timeout: dialTimeout}
	server, err := d.DialContext(p.ctx, "tcp", target)
	p.mu.Lock()
	if err != nil || c.closed {
		if err == nil {
			_ = server.Close()
		}
		p.closeConnLocked(c, false)
		p.mu.Unlock()
		return
	}
	c.server = server
	p.wg.Add(2)
	go p.readDown(c)
	go p.writeDown(c)
	p.mu.Unlock()
	p.copyUp(c)
}

// copyUp forwards client->server, dropping data while partitioned.
func (p *Proxy) copyUp(c *conn) {
	buf := make([]byte, bufSize)
	for {
		n, rerr := c.client.Read(buf)
		if n > 0 {
			p.mu.Lock()
			drop := p.partitioned || c.closed
			p.mu.Unlock()
			if !drop {
				if _, err := c.server.Write(buf[:n]); err != nil {
					p.closeConn(c)
					return
				}
				p.bytesUp.Add(int64(n))
			}
		}
		if rerr != nil {
			p.closeConn(c)
			return
		}
	}
}

// readDown reads server->client chunks into the connection's queue, dropping
// them while partitioned.
func (p *Proxy) readDown(c *conn) {
	defer p.wg.Done()
	buf := make([]byte, bufSize)
	for {
		n, rerr := c.server.Read(buf)
		now := time.Now()
		p.mu.Lock()
		if c.closed {
			p.mu.Unlock()
			return
		}
		if n > 0 && !p.partitioned {
			c.queue = append(c.queue, chunk{data: append([]byte(nil), buf[:n]...), arrived: now})
		}
		if rerr != nil {
			c.eof = true
		}
		p.notifyLocked()
		p.mu.Unlock()
		if rerr != nil {
			return
		}
	}
}

// writeDown delivers queued chunks to the client honoring hold, partition
// and latency. It closes the connection after draining once the server side
// has ended.
func (p *Proxy) writeDown(c *conn) {
	defer p.wg.Done()
	p.mu.Lock()
	defer p.mu.Unlock()
	for {
		if c.closed {
			return
		}
		if len(c.queue) == 0 {
			if c.eof {
				p.closeConnLocked(c, false)
				return
			}
			p.waitLocked(c.done, 0)
			continue
		}
		if p.held {
			p.waitLocked(c.done, 0)
			continue
		}
		if p.partitioned {
			c.queue = c.queue[1:]
			p.notifyLocked()
			continue
		}
		if wait := time.Until(c.queue[0].arrived.Add(p.latency)); wait > 0 {
			p.waitLocked(c.done, wait)
			continue
		}
		ch := c.queue[0]
		c.queue[0] = chunk{}
		c.queue = c.queue[1:]
		p.writing++
		p.notifyLocked()
		p.mu.Unlock()
		_, err := c.client.Write(ch.data)
		p.mu.Lock()
		p.writing--
		p.notifyLocked()
		if err != nil {
			p.closeConnLocked(c, false)
			return
		}
		p.bytesDown.Add(int64(len(ch.data)))
	}
}

func (p *Proxy) closeConn(c *conn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closeConnLocked(c, false)
}
