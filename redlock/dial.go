package redlock

import (
	"context"
	"crypto/tls"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// DialOptions are the connection options of [Dial], the same for every
// node. The zero value connects without credentials, over plain TCP, with
// go-redis's other defaults.
type DialOptions struct {
	// Username and Password authenticate every connection (AUTH; an ACL
	// user when Username is set). A node given as a URL with its own
	// credentials keeps them. Default: none.
	Username, Password string
	// TLS, when set, makes every connection use TLS with this
	// configuration (a rediss:// URL uses TLS with default settings).
	// Default: plain TCP.
	TLS *tls.Config
	// DialTimeout bounds each new connection. Default: 5s (go-redis's).
	DialTimeout time.Duration
}

// Dial connects to independent Redis masters at addrs, one vote each,
// and returns a Client over them as [New] does (with its checks). Each
// address is "host:port" or a redis:// or rediss:// URL (go-redis's
// ParseURL: user:password@, /db, query options). Unlike New, the Client
// owns these connections: [Client.Close] closes them.
//
// The go-redis clients speak RESP2 (redlease needs no RESP3); a single
// node's client also has ContextTimeoutEnabled, so that redlock may ask it
// from the caller's goroutine (see the README). For other options, make
// the clients yourself and call New.
func Dial(ctx context.Context, cfg Config, addrs []string, opts DialOptions) (*Client, error) {
	if len(addrs) == 0 {
		return nil, fmt.Errorf("%w: no node addresses given", ErrInvalidArgument)
	}
	if opts.DialTimeout < 0 {
		return nil, fmt.Errorf("%w: DialTimeout (%s) must not be negative", ErrInvalidArgument, opts.DialTimeout)
	}
	var clients []redis.UniversalClient
	closeAll := func() {
		for _, rc := range clients {
			_ = rc.Close()
		}
	}
	for i, a := range addrs {
		o, err := dialOptions(a, opts, len(addrs) == 1)
		if err != nil {
			closeAll()
			return nil, fmt.Errorf("%w: address %d (%s): %w", ErrInvalidArgument, i, redactAddr(a), err)
		}
		clients = append(clients, redis.NewClient(o))
	}
	c, err := New(ctx, cfg, clients...)
	if err != nil {
		closeAll()
		return nil, err
	}
	c.owned = clients
	return c, nil
}

// dialOptions makes the go-redis options of one address.
func dialOptions(addr string, opts DialOptions, single bool) (*redis.Options, error) {
	addr = strings.TrimSpace(addr)
	var o *redis.Options
	if strings.Contains(addr, "://") {
		var err error
		if o, err = redis.ParseURL(addr); err != nil {
			// ParseURL's error may quote the URL, password included.
			return nil, fmt.Errorf("not a valid redis:// or rediss:// URL")
		}
	} else {
		if addr == "" || !strings.Contains(addr, ":") {
			return nil, fmt.Errorf("want host:port or a redis:// URL")
		}
		o = &redis.Options{Addr: addr}
	}
	if o.Username == "" && o.Password == "" {
		o.Username, o.Password = opts.Username, opts.Password
	}
	if opts.TLS != nil {
		o.TLSConfig = opts.TLS.Clone()
	}
	if opts.DialTimeout > 0 {
		o.DialTimeout = opts.DialTimeout
	}
	o.ContextTimeoutEnabled = single
	o.Protocol = 2
	return o, nil
}

// redactAddr shows an address with its password, if any, hidden.
func redactAddr(a string) string {
	if u, err := url.Parse(a); err == nil && u.User != nil {
		return u.Redacted()
	}
	if strings.Contains(a, "@") {
		return "(an address with credentials)"
	}
	return a
}
