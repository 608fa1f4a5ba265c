// Package nodecheck checks the configuration of redlock's nodes at start-up
// and while a Client is in use (docs/design.md §4.10, assumption 3): a node whose
// maxmemory-policy can evict keys is refused, because an evicted lock key
// is a lock granted twice. It imports nothing of redlock: a Client gives
// its nodes as [Node] and its settings as a [Checker].
//
// A node's configuration can change under a running client: a node that
// was down or out of memory at start-up, a server restarted with another
// configuration file, CONFIG SET, a replica promoted in its place. A node
// whose policy can evict is refused: its votes count as errors naming the
// policy until a later check finds noeviction, or the Client allows
// eviction.
//
// Checks ride on requests, so an idle client sends none: a vote-bearing
// request (acquire, extend, inspect) to a node whose last check started
// more than [Recheck] ago starts a new check in the background, and one
// whose last check started more than [Stale] ago, or that was never
// checked, waits for a check that started since (within the request's own
// deadline; a check that does not answer in time fails the vote). So a
// change is seen by every vote counted Stale after it. A node that does
// not allow CONFIG GET (an ACL user without it, a managed service,
// miniredis) cannot be checked and is accepted, as at start-up.
package nodecheck

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/redlease/redlease/internal/rediserr"
)

const (
	// Recheck is how old a node's last configuration check may be
	// before a request starts another one in the background.
	Recheck = time.Second
	// Stale is how old it may be before a request waits for a new one.
	Stale = 5 * time.Second
)

// Params are the settings a check reads.
var Params = []string{"maxmemory-policy", "cluster-require-full-coverage", "appendonly", "appendfsync"}

// Node is a node whose configuration a [Checker] checks (redlock's node);
// strictly for use by the Checker. Its methods are safe for concurrent
// use.
type Node interface {
	// Name names the node in errors and logs.
	Name() string
	// Conf is what the client knows of the node's configuration.
	Conf() *Conf
	// ReadConf reads [Params] on the node (CONFIG GET).
	ReadConf(ctx context.Context) (map[string]string, error)
}

// Checker checks the configuration of a Client's nodes. Its fields are set
// once, before use; then it is safe for concurrent use.
type Checker struct {
	// AllowEviction accepts nodes whose policy may evict keys.
	AllowEviction bool
	// Invalid is the error a refusal wraps (redlock.ErrInvalidArgument).
	Invalid error
	// Timeout bounds a check made in the background.
	Timeout time.Duration
	Log     hclog.Logger
	// WG counts the background checks (the Client's requests in flight).
	WG *sync.WaitGroup
}

// Evicting returns the refusal of node name whose configuration conf may
// evict keys, or nil.
func (ch *Checker) Evicting(name string, conf map[string]string) error {
	if p, ok := conf["maxmemory-policy"]; ok && p != "noeviction" && !ch.AllowEviction {
		return fmt.Errorf("%w: node %s has maxmemory-policy %s, which can evict a lock key and grant it twice; use noeviction or set Config.AllowEviction",
			ch.Invalid, name, p)
	}
	return nil
}

// First is the start-up check of n: it reads n's configuration and
// records the refusal it finds, returned as err (wrapping Invalid), with
// the settings read for the caller's warnings. A node that does not let
// its configuration be read is logged and accepted (nil, nil) and never
// checked again; one that cannot be read now (conf nil, err nil) is
// checked before its first vote.
func (ch *Checker) First(ctx context.Context, n Node) (conf map[string]string, err error) {
	start := time.Now()
	nc := n.Conf()
	conf, err = n.ReadConf(ctx)
	if err != nil {
		if Refused(err) {
			nc.mu.Lock()
			nc.uncheckable = true
			nc.mu.Unlock()
			ch.Log.Debug("cannot read node configuration; maxmemory-policy not checked", "node", n.Name(), "error", err)
		}
		return nil, nil
	}
	refused := ch.Evicting(n.Name(), conf)
	nc.mu.Lock()
	nc.checkedAt, nc.refused = start, refused
	nc.mu.Unlock()
	return conf, refused
}

// Refused reports an error that means the node will never let us read
// its configuration: an ACL refusal, or CONFIG unknown (renamed or
// disabled by a managed service; miniredis).
func Refused(err error) bool {
	c, ok := rediserr.Of(err)
	return ok && (c == rediserr.Permission || c == rediserr.Unsupported)
}

// stepErr names the step of a failed configuration check that failed: the
// connection (no reply: the error says how it failed), the credentials
// (AUTH, sent first on a new connection), or the CONFIG GET itself.
func stepErr(err error) error {
	c, ok := rediserr.Of(err)
	switch {
	case !ok:
		return err
	case c == rediserr.Auth:
		return fmt.Errorf("authentication: %w", err)
	}
	return fmt.Errorf("configuration check (maxmemory-policy): %w", err)
}
