package redlock

import (
	"github.com/redlease/redlease/internal/clusterkey"
	"github.com/redlease/redlease/internal/notice"
)

// voterSets are the voters of a Client's keys: one set of nodes, or on a
// bucketed cluster ([NewCluster]) one set per bucket, its n copies.
type voterSets [][]*node

// forKey is the set of nodes that vote on key.
func (s voterSets) forKey(key string) []*node {
	if len(s) == 1 {
		return s[0]
	}
	return s[clusterkey.Bucket(key, len(s))]
}

// forChannel is the set of nodes that carry a Pub/Sub channel: those of
// its key for a key's notice channel (internal/notice.Channel: the release
// script publishes in the lock's slot), of the channel's own name
// otherwise.
func (s voterSets) forChannel(channel string) []*node {
	if len(s) == 1 {
		return s[0]
	}
	key, _ := notice.KeyOf(channel) // the channel itself when not a notice channel
	return s.forKey(key)
}
