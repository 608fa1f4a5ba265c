package sim

import (
	"io"
	"net"
	"os"
	"sync"
	"time"
)

// An in-memory connection whose every wait is on a channel or a timer, so
// that under testing/synctest a goroutine waiting to read is durably
// blocked and virtual time can advance (net.Pipe waits on a mutex).
// Writes never block: bytes are appended to the peer's buffer.

// pipeEnd is one direction of a connection: bytes written by one side and
// read by the other.
type pipeEnd struct {
	mu     sync.Mutex
	buf    []byte
	closed bool
	ready  chan struct{} // capacity 1: a token when buf grew or closed
}

func newPipeEnd() *pipeEnd { return &pipeEnd{ready: make(chan struct{}, 1)} }

func (p *pipeEnd) signal() {
	select {
	case p.ready <- struct{}{}:
	default:
	}
}

func (p *pipeEnd) write(b []byte) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return io.ErrClosedPipe
	}
	p.buf = append(p.buf, b...)
	p.signal()
	return nil
}

func (p *pipeEnd) close() {
	p.mu.Lock()
	p.closed = true
	p.mu.Unlock()
	p.signal()
}

// deadline is a settable deadline whose expiry is a channel. Its timer is
// armed only when somebody waits on it, and then reused: go-redis sets two
// deadlines per command, and most of them are replaced before anyone waits.
type deadline struct {
	mu    sync.Mutex
	at    time.Time
	armed bool          // the timer runs for at
	timer *time.Timer   // created on the first wait
	ch    chan struct{} // closed when the deadline passes; replaced on change
}

func newDeadline() *deadline { return &deadline{ch: make(chan struct{})} }

func (d *deadline) set(t time.Time) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.armed {
		d.timer.Stop()
		d.armed = false
	}
	select {
	case <-d.ch:
		d.ch = make(chan struct{})
	default:
	}
	d.at = t
}

// expire closes ch once at has passed; d.mu is held.
func (d *deadline) expire() {
	if d.at.IsZero() || time.Now().Before(d.at) {
		return
	}
	select {
	case <-d.ch:
	default:
		close(d.ch)
	}
}

// passed reports whether the deadline has passed, without arming a timer.
func (d *deadline) passed() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return !d.at.IsZero() && !time.Now().Before(d.at)
}

// wait returns a channel closed when the deadline passes.
func (d *deadline) wait() <-chan struct{} {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.expire()
	if d.at.IsZero() || d.armed {
		return d.ch
	}
	select {
	case <-d.ch:
		return d.ch
	default:
	}
	left := time.Until(d.at)
	if d.timer == nil {
		d.timer = time.AfterFunc(left, func() {
			d.mu.Lock()
			defer d.mu.Unlock()
			d.expire()
		})
	} else {
		d.timer.Reset(left)
	}
	d.armed = true
	return d.ch
}

// Conn is one end of an in-memory connection.
type Conn struct {
	in, out *pipeEnd
	rd, wd  *deadline
	shared  *shared
	done    chan struct{} // shared.done
	local   net.Addr
	remote  net.Addr
}

type shared struct {
	done chan struct{}
	once sync.Once
}

type addr string

func (a addr) Network() string { return "sim" }
func (a addr) String() string  { return string(a) }

// Pipe returns the two ends of a new in-memory connection.
func Pipe(clientAddr, serverAddr string) (client, server *Conn) {
	a, b := newPipeEnd(), newPipeEnd()
	sh := &shared{done: make(chan struct{})}
	client = &Conn{in: a, out: b, rd: newDeadline(), wd: newDeadline(), shared: sh, done: sh.done,
		local: addr(clientAddr), remote: addr(serverAddr)}
	server = &Conn{in: b, out: a, rd: newDeadline(), wd: newDeadline(), shared: sh, done: sh.done,
		local: addr(serverAddr), remote: addr(clientAddr)}
	return client, server
}

// Read reads what the peer wrote, waiting for it until the read deadline.
func (c *Conn) Read(b []byte) (int, error) {
	for {
		c.in.mu.Lock()
		if len(c.in.buf) > 0 {
			n := copy(b, c.in.buf)
			c.in.buf = c.in.buf[n:]
			if len(c.in.buf) == 0 {
				c.in.buf = nil
			}
			c.in.mu.Unlock()
			return n, nil
		}
		closed := c.in.closed
		c.in.mu.Unlock()
		if closed {
			return 0, io.EOF
		}
		select {
		case <-c.done:
			return 0, net.ErrClosed
		default:
		}
		select {
		case <-c.in.ready:
		case <-c.done:
			return 0, net.ErrClosed
		case <-c.rd.wait():
			return 0, os.ErrDeadlineExceeded
		}
	}
}

// Write appends b to the peer's buffer; it never blocks.
func (c *Conn) Write(b []byte) (int, error) {
	select {
	case <-c.done:
		return 0, net.ErrClosed
	default:
	}
	if c.wd.passed() {
		return 0, os.ErrDeadlineExceeded
	}
	if err := c.out.write(b); err != nil {
		return 0, err
	}
	return len(b), nil
}

// Close closes both ends.
func (c *Conn) Close() error {
	c.shared.once.Do(func() {
		close(c.done)
		c.in.close()
		c.out.close()
	})
	return nil
}

func (c *Conn) LocalAddr() net.Addr  { return c.local }
func (c *Conn) RemoteAddr() net.Addr { return c.remote }

func (c *Conn) SetDeadline(t time.Time) error {
	c.rd.set(t)
	c.wd.set(t)
	return nil
}
func (c *Conn) SetReadDeadline(t time.Time) error  { c.rd.set(t); return nil }
func (c *Conn) SetWriteDeadline(t time.Time) error { c.wd.set(t); return nil }

var _ net.Conn = (*Conn)(nil)
