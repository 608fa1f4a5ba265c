package main

import (
	"context"
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/redis/go-redis/v9"

	"github.com/redlease/redlease/internal/clusterkey"
	"github.com/redlease/redlease/internal/lockrule"
	"github.com/redlease/redlease/redlock"
)

// envNodes names the environment variable read when --nodes is not given.
const envNodes = "REDLEASE_NODES"

// Socket timeouts of the go-redis clients, unless a node URL sets its own
// (dial_timeout=, read_timeout=, write_timeout=). redlock bounds every
// request by --node-timeout whatever these are; they bound how long a
// request to a frozen node lingers after that, and so how long closing
// the client waits for it.
const (
	defaultDialTimeout   = time.Second
	defaultSocketTimeout = time.Second
)

// connFlags are the flags every command has: where the nodes are and how
// to talk to them.
type connFlags struct {
	nodes       string
	cluster     bool
	replicas    int
	bootstrap   bool
	nodeTimeout time.Duration
	maxTTL      time.Duration
	verbose     bool
	hooks       func(redlock.Event) // not a flag: the command's (nil: none)
}

func (c *connFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&c.nodes, "nodes", "", "comma-separated `nodes`: host:port, or redis:// and rediss:// (TLS) URLs with an optional user:password@ and /db; a Sentinel group is a URL of a sentinel with master_name=GROUP, more sentinels as &addr=host:port, the master's credentials as &username= and &password=; default $"+envNodes)
	fs.BoolVar(&c.cluster, "cluster", false, "the nodes are seed nodes of one Redis Cluster: keep each election as --replicas copies in its hash slots")
	fs.IntVar(&c.replicas, "replicas", clusterkey.DefaultReplicas, "with --cluster: copies of each election (odd, 1 to 15), each one vote")
	fs.BoolVar(&c.bootstrap, "bootstrap", false, "declare the nodes brand new, so that they vote at once instead of after --max-ttl; never after a crash or a restart")
	fs.DurationVar(&c.nodeTimeout, "node-timeout", lockrule.DefaultNodeTimeout, "bound on every request to one node")
	fs.DurationVar(&c.maxTTL, "max-ttl", lockrule.DefaultMaxTTL, "largest TTL on these nodes, and the quarantine of a node that may have lost its data; the same for every client of the nodes")
	fs.BoolVar(&c.verbose, "verbose", false, "log at debug level")
}

// nodeSpec is one node as given, parsed: a server (opts) or a Sentinel
// group (sentinel; see sentinel.go).
type nodeSpec struct {
	raw      string // as given; never printed (see displaySpec)
	opts     *redis.Options
	sentinel *redis.FailoverOptions
}

// name is the node's address, or its Sentinel group's name.
func (s nodeSpec) name() string {
	if s.sentinel != nil {
		return sentinelName(s.sentinel)
	}
	return s.opts.Addr
}

// client makes the node's go-redis client: a FailoverClient for a
// Sentinel group.
func (s nodeSpec) client() redis.UniversalClient {
	if s.sentinel != nil {
		return redis.NewFailoverClient(s.sentinel)
	}
	return redis.NewClient(s.opts)
}

// nodeSet is the parsed node list, with where it came from.
type nodeSet struct {
	source  string // "--nodes" or "REDLEASE_NODES", for errors
	specs   []nodeSpec
	secrets []string // passwords, for the output filter
}

// resolveNodes parses --nodes, or REDLEASE_NODES when --nodes is empty.
// Its errors are usage errors naming the flag or variable and the node.
func (c *connFlags) resolveNodes(getenv func(string) string) (*nodeSet, error) {
	set := &nodeSet{source: "--nodes"}
	list := c.nodes
	if strings.TrimSpace(list) == "" {
		set.source, list = envNodes, getenv(envNodes)
	}
	var raws []string
	for f := range strings.SplitSeq(list, ",") {
		if f = strings.TrimSpace(f); f != "" {
			raws = append(raws, f)
			set.secrets = append(set.secrets, specSecrets(f)...)
		}
	}
	if len(raws) == 0 {
		return set, usagef("no nodes: give --nodes host:port,... or set %s", envNodes)
	}
	seen := map[string]int{}
	for i, raw := range raws {
		s, err := parseSpec(raw)
		if err != nil {
			return set, usagef("%s: node %d (%s): %v", set.source, i+1, displaySpec(raw), err)
		}
		if j, dup := seen[s.name()]; dup {
			return set, usagef("%s: node %d (%s) is node %d again: one server, one vote", set.source, i+1, s.name(), j)
		}
		seen[s.name()] = i + 1
		set.secrets = append(set.secrets, s.passwords()...)
		set.specs = append(set.specs, s)
	}
	if c.cluster {
		if err := set.checkCluster(); err != nil {
			return set, err
		}
	}
	return set, nil
}

// parseSpec parses one node spec: a server or a Sentinel group.
func parseSpec(raw string) (nodeSpec, error) {
	if isSentinelSpec(raw) {
		fo, err := parseSentinel(raw)
		return nodeSpec{raw: raw, sentinel: fo}, err
	}
	o, err := parseNode(raw)
	return nodeSpec{raw: raw, opts: o}, err
}

// passwords are the spec's passwords as parsed, for the output filter.
func (s nodeSpec) passwords() []string {
	var out []string
	if s.opts != nil {
		out = append(out, s.opts.Password)
	}
	if fo := s.sentinel; fo != nil {
		out = append(out, fo.Password, fo.SentinelPassword)
	}
	return slices.DeleteFunc(out, func(p string) bool { return p == "" })
}

// parseNode parses one node spec. Its errors never quote the spec (the
// caller names it, redacted).
func parseNode(spec string) (*redis.Options, error) {
	if !strings.Contains(spec, "://") {
		if strings.Contains(spec, "@") {
			return nil, errors.New("credentials need a redis:// or rediss:// URL, with user:password@ before the host")
		}
		host, port, err := net.SplitHostPort(spec)
		if err != nil || host == "" {
			return nil, errors.New("want host:port, or a redis:// or rediss:// URL")
		}
		if p, err := strconv.Atoi(port); err != nil || p < 1 || p > 65535 {
			return nil, fmt.Errorf("bad port %q", port)
		}
		return withDefaults(&redis.Options{Addr: spec}), nil
	}
	scheme, _, _ := strings.Cut(spec, "://")
	if scheme != "redis" && scheme != "rediss" {
		return nil, fmt.Errorf("scheme %q: want redis:// or rediss://", scheme)
	}
	o, err := redis.ParseURL(spec)
	if err != nil {
		if ue, ok := errors.AsType[*url.Error](err); ok {
			// A *url.Error quotes the whole URL, and its reason may quote a
			// piece of a malformed password ("invalid port" when the
			// password holds a '/'): keep the reason only without one.
			err = ue.Err
			if strings.Contains(spec, "@") {
				err = errors.New("not a valid URL: check the host and the port, and percent-encode the user and the password ('/' is %2F, '@' is %40, ':' is %3A)")
			}
		}
		return nil, err
	}
	return withDefaults(o), nil
}

// withDefaults fills in the socket timeouts a URL did not set, and has
// go-redis try once per request, dialling once (redlock retries on its
// own, within --node-timeout; a go-redis retry would only outlast it).
func withDefaults(o *redis.Options) *redis.Options {
	if o.MaxRetries == 0 {
		o.MaxRetries = -1
	}
	if o.DialTimeout == 0 {
		o.DialTimeout = defaultDialTimeout
	}
	if o.ReadTimeout == 0 {
		o.ReadTimeout = defaultSocketTimeout
	}
	if o.WriteTimeout == 0 {
		o.WriteTimeout = defaultSocketTimeout
	}
	if o.DialerRetries == 0 {
		o.DialerRetries = 1
	}
	return o
}

// checkCluster checks that the seeds of a cluster share one set of
// credentials and TLS, and database 0: a cluster client has one of each.
func (s *nodeSet) checkCluster() error {
	for i, n := range s.specs {
		if n.sentinel != nil {
			return usagef("%s: node %d (%s) is a Sentinel group: --cluster takes the cluster's seed nodes", s.source, i+1, n.name())
		}
	}
	first := s.specs[0].opts
	for i, n := range s.specs {
		o := n.opts
		switch {
		case o.DB != 0:
			return usagef("%s: node %d (%s) selects database %d: a Redis Cluster has database 0 only",
				s.source, i+1, displaySpec(n.raw), o.DB)
		case o.Username != first.Username || o.Password != first.Password || (o.TLSConfig == nil) != (first.TLSConfig == nil):
			return usagef("%s: node %d (%s) has other credentials or TLS than node 1: the seeds of a cluster share one set",
				s.source, i+1, displaySpec(n.raw))
		}
	}
	return nil
}

// clusterOptions are the options of one cluster client over the seeds.
func (s *nodeSet) clusterOptions() *redis.ClusterOptions {
	first := s.specs[0].opts
	co := &redis.ClusterOptions{
		Username: first.Username, Password: first.Password,
		DialTimeout: first.DialTimeout, ReadTimeout: first.ReadTimeout, WriteTimeout: first.WriteTimeout,
		DialerRetries: first.DialerRetries, MaxRetries: first.MaxRetries,
	}
	if first.TLSConfig != nil {
		// ServerName is left empty: crypto/tls takes it from the address of
		// each node dialled. InsecureSkipVerify only when the URL asks for it
		// (skip_verify=true).
		co.TLSConfig = &tls.Config{MinVersion: tls.VersionTLS12, InsecureSkipVerify: first.TLSConfig.InsecureSkipVerify}
	}
	for _, n := range s.specs {
		co.Addrs = append(co.Addrs, n.opts.Addr)
	}
	return co
}

// nodes is a connected redlock.Client with the go-redis clients under it.
type nodes struct {
	client  *redlock.Client
	redises []redis.UniversalClient
}

// Close closes the redlock client, then the go-redis clients.
func (n *nodes) Close() {
	if n.client != nil {
		_ = n.client.Close()
	}
	for _, r := range n.redises {
		_ = r.Close()
	}
}

// connect opens the nodes (redlock.New or NewCluster), and bootstraps
// them when --bootstrap is given. Nodes that do not answer are logged by
// redlock, naming them, and are not an error (they vote once they are
// up), except to --bootstrap, whose error names them.
func (c *connFlags) connect(ctx context.Context, set *nodeSet, log hclog.Logger) (*nodes, error) {
	cfg := c.clientConfig()
	cfg.Logger, cfg.Hooks = quietQuarantine(log), c.hooks // the CLI says it its own way (hintQuarantine)
	n := &nodes{}
	var err error
	if c.cluster {
		cc := redis.NewClusterClient(set.clusterOptions())
		n.redises = append(n.redises, cc)
		n.client, err = redlock.NewCluster(ctx, cfg, cc, c.replicas)
	} else {
		for _, s := range set.specs {
			n.redises = append(n.redises, s.client())
		}
		n.client, err = redlock.New(ctx, cfg, n.redises...)
	}
	if err != nil {
		n.Close()
		return nil, err
	}
	if c.bootstrap {
		if err := n.client.Bootstrap(ctx); err != nil {
			n.Close()
			return nil, fmt.Errorf("--bootstrap: %w", err)
		}
		log.Info("nodes bootstrapped: they vote at once", "nodes", strings.Join(n.client.Internal().Nodes(), ","))
	}
	return n, nil
}

// clientConfig is the redlock.Config of the flags' client, without its
// logger and hooks.
func (c *connFlags) clientConfig() redlock.Config {
	return redlock.Config{NodeTimeout: c.nodeTimeout, MaxTTL: c.maxTTL}
}

// validate checks the connection flags that need no node.
func (c *connFlags) validate(fs *flag.FlagSet) error {
	switch {
	case c.nodeTimeout <= 0:
		return usagef("--node-timeout (%s) must be positive", c.nodeTimeout)
	case c.maxTTL <= 0:
		return usagef("--max-ttl (%s) must be positive", c.maxTTL)
	case c.maxTTL%time.Millisecond != 0:
		return usagef("--max-ttl (%s) must be a whole number of milliseconds", c.maxTTL)
	case c.nodeTimeout*2+lockrule.MinDrift >= c.maxTTL: // redlock's rule: room for a TTL above 2 × NodeTimeout + drift
		minDrift := lockrule.MinDrift // the drift of a zero TTL: its fixed part
		return usagef("--max-ttl (%s) must exceed 2 × --node-timeout + %s (%s)", c.maxTTL, minDrift, c.nodeTimeout*2+minDrift)
	case c.replicas < 1 || c.replicas > 15 || c.replicas%2 == 0:
		return usagef("--replicas (%d) must be odd, from 1 to 15", c.replicas)
	}
	if isSet(fs, "replicas") && !c.cluster {
		return usagef("--replicas (%d) applies to --cluster only", c.replicas)
	}
	return nil
}

// isSet reports whether the flag called name was given.
func isSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}
