package main

import (
	"errors"
	"net/url"
	"slices"
	"strings"

	"github.com/redis/go-redis/v9"
)

// A Sentinel group as one node: a redis:// or rediss:// URL of one of its
// sentinels with the query parameter master_name, more sentinels as addr=
// parameters, the sentinels' user:password@ before the host, and the
// master's as username= and password= (go-redis's failover URL):
//
//	redis://s1:26379?master_name=g1&addr=s2:26379&addr=s3:26379
//
// The client follows the group's master through failovers; each group is
// one vote (docs/operations.md, "Redis Sentinel").

// isSentinelSpec reports whether spec names a Sentinel group.
func isSentinelSpec(spec string) bool {
	u, err := url.Parse(spec)
	return err == nil && strings.Contains(spec, "://") && u.Query().Has("master_name")
}

// parseSentinel parses a Sentinel group's spec. Its errors never quote the
// spec (the caller names it, redacted).
func parseSentinel(spec string) (*redis.FailoverOptions, error) {
	scheme, _, _ := strings.Cut(spec, "://")
	if scheme != "redis" && scheme != "rediss" {
		return nil, errors.New("a Sentinel group needs a redis:// or rediss:// URL")
	}
	fo, err := redis.ParseFailoverURL(spec)
	if err != nil {
		if _, ok := errors.AsType[*url.Error](err); ok {
			err = errors.New("not a valid URL: check the hosts and the ports, and percent-encode the users and the passwords")
		}
		return nil, err
	}
	if fo.MasterName == "" {
		return nil, errors.New("master_name is empty")
	}
	o := withDefaults(&redis.Options{MaxRetries: fo.MaxRetries, DialTimeout: fo.DialTimeout,
		ReadTimeout: fo.ReadTimeout, WriteTimeout: fo.WriteTimeout, DialerRetries: fo.DialerRetries})
	fo.MaxRetries, fo.DialTimeout, fo.ReadTimeout, fo.WriteTimeout, fo.DialerRetries =
		o.MaxRetries, o.DialTimeout, o.ReadTimeout, o.WriteTimeout, o.DialerRetries
	return fo, nil
}

// sentinelName is how a Sentinel group is named in the CLI's output and
// errors: "group g1 (sentinels s1:26379,s2:26379)". Two specs of the same
// name are the same group: one vote.
func sentinelName(fo *redis.FailoverOptions) string {
	addrs := slices.Clone(fo.SentinelAddrs)
	slices.Sort(addrs)
	return "group " + fo.MasterName + " (sentinels " + strings.Join(addrs, ",") + ")"
}
