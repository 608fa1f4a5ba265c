package redlock

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
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
// request (acquire, extend, inspect) to a node whose last check is older
// than confRecheck starts a new check in the background, and one whose
// last check is older than confStale, or that was never checked, waits for
// the check first (within the request's own deadline). A node that does
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
	mu          sync.Mutex
	checkedAt   time.Time // of the last check that got an answer; zero: never
	uncheckable bool      // the node refuses CONFIG GET: never checked again
	refused     error     // non-nil: the node's votes do not count
	checking    bool      // a check is under way
}

// admit reports whether n's vote may count: nil, or why not. It may check
// n's configuration first (see above), bounded by ctx.
func (c *Client) admit(ctx context.Context, n *node) error {
	nc := &n.conf
	nc.mu.Lock()
	if nc.uncheckable {
		nc.mu.Unlock()
		return nil
	}
	age := time.Since(nc.checkedAt)
	start := age >= confRecheck && !nc.checking
	if start {
		nc.checking = true
	}
	wait := nc.checkedAt.IsZero() || age >= confStale
	refused := nc.refused
	nc.mu.Unlock()

	if !start {
		return refused // a check is under way, or the last one is recent
	}
	if !wait {
		c.wg.Go(func() {
			cctx, cancel := context.WithTimeout(context.Background(), max(time.Second, c.cfg.NodeTimeout))
			defer cancel()
			_ = c.recheck(cctx, n)
		})
		return refused
	}
	return c.recheck(ctx, n)
}

// recheck reads n's configuration, records the outcome, and returns
// whether n's vote may count. A check that gets no answer changes nothing
// (the request that follows will most likely fail the same way).
func (c *Client) recheck(ctx context.Context, n *node) error {
	conf, err := c.readConf(ctx, n)
	nc := &n.conf
	nc.mu.Lock()
	defer nc.mu.Unlock()
	nc.checking = false
	switch {
	case err != nil && confRefused(err):
		nc.uncheckable, nc.refused = true, nil
		c.log.Debug("cannot read node configuration; maxmemory-policy not checked", "node", n.addr, "error", err)
		return nil
	case err != nil:
		return nc.refused
	}
	was := nc.refused
	nc.checkedAt, nc.refused = time.Now(), c.evicting(n, conf)
	switch {
	case nc.refused != nil && was == nil:
		c.log.Error("node refused: its votes do not count until it stops evicting", "node", n.addr, "error", nc.refused)
	case nc.refused == nil && was != nil:
		c.log.Warn("node no longer evicts: its votes count again", "node", n.addr)
	}
	return nc.refused
}

// confRefused reports an error that means the node will never let us read
// its configuration: an ACL refusal, or CONFIG unknown (renamed or
// disabled by a managed service; miniredis).
func confRefused(err error) bool {
	var re redis.Error
	if !errors.As(err, &re) {
		return false
	}
	msg := strings.ToLower(err.Error())
	return permissionError(err) || strings.Contains(msg, "unknown command") || strings.Contains(msg, "unknown subcommand")
}

// evicting returns the refusal of a node whose configuration may evict
// keys, or nil.
func (c *Client) evicting(n *node, conf map[string]string) error {
	if p, ok := conf["maxmemory-policy"]; ok && p != "noeviction" && !c.cfg.AllowEviction {
		return fmt.Errorf("%w: node %s has maxmemory-policy %s, which can evict a lock key and grant it twice; use noeviction or set Config.AllowEviction",
			ErrInvalidConfig, n.addr, p)
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
		return nil, err
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
