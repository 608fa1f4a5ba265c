package redlock

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/redlease/redlease/internal/rediserr"
)

// A node's configuration is checked at start-up ([New]) and again while the
// client is in use, because it can change under a running client: a node
// that was down or out of memory at start-up, a server restarted with
// another configuration file, CONFIG SET, a replica promoted in its place.
// A node whose maxmemory-policy can evict keys is refused: its votes count
// as errors naming the policy (an evicted lock key is a lock granted twice)
// until a later check finds noeviction, or Config.AllowEviction is set.
//
// Checks ride on requests, so an idle client sends none: a vote-bearing
// request (acquire, extend, inspect) to a node whose last check started
// more than confRecheck ago starts a new check in the background, and one
// whose last check started more than confStale ago, or that was never
// checked, waits for a check that started since (within the request's own
// deadline; a check that does not answer in time fails the vote). So a
// change is seen by every vote counted confStale after it. A node that does
// not allow CONFIG GET (an ACL user without it, a managed service,
// miniredis) cannot be checked and is accepted, as at start-up.

const (
	// confRecheck is how old a node's last configuration check may be
	// before a request starts another one in the background.
	confRecheck = time.Second
	// confStale is how old it may be before a request waits for a new one.
	confStale = 5 * time.Second
)

// confParams are the settings read by a check.
var confParams = []string{"maxmemory-policy", "cluster-require-full-coverage", "appendonly", "appendfsync"}

// nodeConf is what the client knows of a node's configuration.
type nodeConf struct {
	mu sync.Mutex
	// checkedAt is when the newest check that got an answer started (the
	// answer shows the node as it was at that moment or later); zero:
	// never.
	checkedAt   time.Time
	uncheckable bool        // the node refuses CONFIG GET: never checked again
	refused     error       // non-nil: the node's votes do not count
	flight      *confFlight // the check under way, if any
}

// confFlight is one check of a node's configuration, shared by the
// requests that wait for it.
type confFlight struct {
	start time.Time
	done  chan struct{} // closed when err is set
	err   error         // the refusal, a failed check, or nil: the vote may count
}

// admit reports whether n's vote may count: nil, or why not. It may check
// n's configuration first (see above), bounded by ctx: a vote counted at
// time t is backed by a check that started after t - confStale.
func (c *Client) admit(ctx context.Context, n *node) error {
	nc := &n.conf
	nc.mu.Lock()
	if nc.uncheckable {
		nc.mu.Unlock()
		return nil
	}
	now := time.Now()
	age := now.Sub(nc.checkedAt)
	fresh := !nc.checkedAt.IsZero() && age < confStale
	f := nc.flight
	if f != nil && now.Sub(f.start) >= confStale {
		f = nil // a check that hangs (go-redis may not honour its deadline) is no use
	}
	if f == nil && (!fresh || age >= confRecheck) {
		f = c.startCheck(n)
	}
	refused := nc.refused
	nc.mu.Unlock()
	if fresh {
		return refused
	}
	select {
	case <-f.done:
		return f.err
	case <-ctx.Done():
		return fmt.Errorf("configuration check (maxmemory-policy) not answered: %w", ctx.Err())
	}
}

// startCheck starts a check of n's configuration in the background and
// makes it n's flight. The caller holds n.conf.mu.
func (c *Client) startCheck(n *node) *confFlight {
	nc := &n.conf
	f := &confFlight{start: time.Now(), done: make(chan struct{})}
	nc.flight = f
	c.wg.Go(func() {
		ctx, cancel := context.WithTimeout(context.Background(), max(time.Second, c.cfg.NodeTimeout))
		defer cancel()
		conf, err := c.readConf(ctx, n)
		nc.mu.Lock()
		defer nc.mu.Unlock()
		if nc.flight == f {
			nc.flight = nil
		}
		defer close(f.done)
		switch {
		case err != nil && confRefused(err):
			if !nc.uncheckable {
				c.log.Debug("cannot read node configuration; maxmemory-policy not checked", "node", n.name(), "error", err)
			}
			nc.uncheckable, nc.refused = true, nil
			return
		case err != nil:
			f.err = confErr(err)
			return
		}
		f.err = c.evicting(n, conf)
		if !f.start.After(nc.checkedAt) {
			return // a newer check has answered already
		}
		was := nc.refused
		nc.checkedAt, nc.refused = f.start, f.err
		switch {
		case nc.refused != nil && was == nil:
			c.log.Error("node refused: its votes do not count until it stops evicting", "node", n.name(), "error", nc.refused)
		case nc.refused == nil && was != nil:
			c.log.Warn("node no longer evicts: its votes count again", "node", n.name())
		}
	})
	return f
}

// confErr names the step of a failed configuration check that failed: the
// connection (no reply: the error says how it failed), the credentials
// (AUTH, sent first on a new connection), or the CONFIG GET itself.
func confErr(err error) error {
	c, ok := replyClass(err)
	switch {
	case !ok:
		return err
	case c == rediserr.Auth:
		return fmt.Errorf("authentication: %w", err)
	}
	return fmt.Errorf("configuration check (maxmemory-policy): %w", err)
}

// confRefused reports an error that means the node will never let us read
// its configuration: an ACL refusal, or CONFIG unknown (renamed or
// disabled by a managed service; miniredis).
func confRefused(err error) bool {
	c, ok := replyClass(err)
	return ok && (c == rediserr.Permission || c == rediserr.Unsupported)
}

// evicting returns the refusal of a node whose configuration may evict
// keys, or nil.
func (c *Client) evicting(n *node, conf map[string]string) error {
	if p, ok := conf["maxmemory-policy"]; ok && p != "noeviction" && !c.cfg.AllowEviction {
		return fmt.Errorf("%w: node %s has maxmemory-policy %s, which can evict a lock key and grant it twice; use noeviction or set Config.AllowEviction",
			ErrInvalidArgument, n.name(), p)
	}
	return nil
}

// readConf reads confParams on n (on the master serving n's slot for a
// cluster node).
func (c *Client) readConf(ctx context.Context, n *node) (map[string]string, error) {
	var client redis.UniversalClient = n.client
	if cc, ok := n.client.(*redis.ClusterClient); ok {
		m, err := cc.MasterForKey(ctx, n.marker())
		if err != nil {
			return nil, err
		}
		client = m
	}
	args := []any{"config", "get"}
	for _, p := range confParams {
		args = append(args, p)
	}
	res, err := client.Do(ctx, args...).Result()
	if err != nil {
		return nil, classify(err)
	}
	conf := map[string]string{}
	switch v := res.(type) {
	case map[any]any: // RESP3
		for k, val := range v {
			conf[fmt.Sprint(k)] = fmt.Sprint(val)
		}
	case []any: // RESP2: name, value, name, value, ...
		for i := 0; i+1 < len(v); i += 2 {
			conf[fmt.Sprint(v[i])] = fmt.Sprint(v[i+1])
		}
	default:
		return nil, badReply(res)
	}
	return conf, nil
}
