package doctor

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/redlease/redlease/internal/lockrule"
)

// ErrInvalidArgument is wrapped by the error of [Run] and [RunCluster] for a
// bad [Config] or [Cluster] (as redlock.ErrInvalidArgument is by redlock's).
var ErrInvalidArgument = errors.New("doctor: invalid argument")

// Config is what the checks compare the servers with: the settings of the
// redlock client (and lease) that will use them, and how long to sample.
// Zero means the default of each field.
type Config struct {
	// NodeTimeout, MaxTTL and DriftFactor are redlock.Config's (defaults
	// 50ms, 30s, 0.01).
	NodeTimeout time.Duration
	MaxTTL      time.Duration
	DriftFactor float64
	// DisableQuarantine is redlock.Config's: then a node must persist
	// every write before it answers.
	DisableQuarantine bool
	// TTL is the lock or lease TTL whose budget the round trips and the
	// drift are checked against. Default: 10s (a lease's default).
	TTL time.Duration
	// Name is a lock or election name the ACL must allow (its key, its
	// fencing counter, its notice channel). Default: "redlease-doctor".
	Name string
	// ACLUser is the ACL user whose permissions are checked with ACL
	// DRYRUN; default: the connection's own (ACL WHOAMI).
	ACLUser string
	// Pings is the number of PINGs the round-trip percentiles come from.
	// Default: 20.
	Pings int
	// ClockInterval is the time between the two clock samples whose
	// difference gives the server clock's rate. Default: 2s.
	ClockInterval time.Duration
	// Accept lists the IDs of findings to lower to info: settings a
	// managed service will not let one change (see Acceptable).
	Accept []string
	// Now is the client's clock (wall and monotonic readings); default
	// time.Now. Tests give another to make a clock that is off.
	Now func() time.Time
}

// The IDs of the checks, which Finding.ID and Config.Accept name.
const (
	CheckReachable   = "reachable"
	CheckSentinel    = "sentinel" // a Sentinel group's sentinels (Node.Sentinel)
	CheckConfig      = "config"
	CheckPersistence = "persistence"
	CheckAppendfsync = "appendfsync"
	CheckEviction    = "eviction"
	CheckReplicas    = "replicas"
	CheckRole        = "role"
	CheckDistinct    = "distinct"
	CheckVersion     = "version"
	CheckScripting   = "scripting"
	CheckACL         = "acl"
	CheckClockOffset = "clock-offset"
	CheckClockRate   = "clock-rate"
	CheckLatency     = "latency"
	CheckMarker      = "marker"
	CheckMaxTTL      = "max-ttl"
	CheckCoverage    = "coverage"  // a cluster master's cluster-require-full-coverage
	CheckPlacement   = "placement" // across a cluster: distinct masters for the copies
	CheckLayout      = "layout"    // across a cluster: the layout its clients recorded
)

// Acceptable are the checks whose findings Config.Accept may lower: the
// settings a managed service may not let one change, and measurements of
// a network one may know to be slow. The others stay: a replica as a node,
// one server twice, an evicting policy, a denied command, a clock of
// another rate or a missing feature break locks whatever the reason.
var Acceptable = []string{CheckConfig, CheckAppendfsync, CheckReplicas, CheckVersion, CheckClockOffset, CheckLatency, CheckCoverage,
	CheckSentinel}

// Checks are every check's ID, in report order.
var Checks = []string{CheckReachable, CheckSentinel, CheckConfig, CheckPersistence, CheckAppendfsync, CheckEviction, CheckReplicas,
	CheckRole, CheckDistinct, CheckVersion, CheckScripting, CheckACL, CheckClockOffset, CheckClockRate, CheckLatency,
	CheckMarker, CheckMaxTTL, CheckCoverage, CheckPlacement, CheckLayout}

// withDefaults returns c with its defaults, or an error naming a bad value.
func (c Config) withDefaults() (Config, error) {
	c.NodeTimeout = orDefault(c.NodeTimeout, lockrule.DefaultNodeTimeout)
	c.MaxTTL = orDefault(c.MaxTTL, lockrule.DefaultMaxTTL)
	c.TTL = orDefault(c.TTL, 10*time.Second)
	c.ClockInterval = orDefault(c.ClockInterval, 2*time.Second)
	if c.DriftFactor == 0 {
		c.DriftFactor = lockrule.DefaultDriftFactor
	}
	if c.Pings == 0 {
		c.Pings = 20
	}
	if c.Name == "" {
		c.Name = "redlease-doctor"
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	switch {
	case c.NodeTimeout < 0, c.MaxTTL < 0, c.TTL < 0, c.ClockInterval < 0:
		return c, fmt.Errorf("%w: durations must be positive (NodeTimeout %s, MaxTTL %s, TTL %s, ClockInterval %s)",
			ErrInvalidArgument, c.NodeTimeout, c.MaxTTL, c.TTL, c.ClockInterval)
	case c.DriftFactor < 0 || c.DriftFactor >= 1:
		return c, fmt.Errorf("%w: DriftFactor (%g) must be in [0, 1)", ErrInvalidArgument, c.DriftFactor)
	case c.Pings < 1:
		return c, fmt.Errorf("%w: Pings (%d) must be positive", ErrInvalidArgument, c.Pings)
	}
	return c, CheckAccept(c.Accept)
}

func orDefault(d, def time.Duration) time.Duration {
	if d == 0 {
		return def
	}
	return d
}

// CheckAccept returns an error naming the first ID of ids that is not a
// check, or one that cannot be accepted.
func CheckAccept(ids []string) error {
	for _, id := range ids {
		switch {
		case slices.Contains(Acceptable, id):
		case slices.Contains(Checks, id):
			return fmt.Errorf("%w: finding %q cannot be accepted (acceptable: %s)", ErrInvalidArgument, id, strings.Join(Acceptable, ", "))
		default:
			return fmt.Errorf("%w: no finding is called %q (acceptable: %s)", ErrInvalidArgument, id, strings.Join(Acceptable, ", "))
		}
	}
	return nil
}

// accept lowers the accepted findings (warn or fail) to info.
func (c *Config) accept(fs []Finding) {
	for i := range fs {
		f := &fs[i]
		if f.Severity > Info && slices.Contains(c.Accept, f.ID) {
			orig := f.Severity
			f.Severity, f.Accepted, f.Original = Info, true, &orig
		}
	}
}
