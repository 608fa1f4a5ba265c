package doctor

import "github.com/redlease/redlease/internal/notice"

// markerKey is redlock's quarantine marker of a standalone node.
const markerKey = "{redlease}:marker"

// scope is where redlease keeps its keys on one node: on a standalone
// node, the name itself and one marker; on a cluster master, the keys of
// one copy, under its hash tag, and the markers of every copy whose slot
// the master serves (docs/design.md §4.11).
type scope struct {
	tag     string   // a copy's hash tag on this master; "" standalone
	markers []string // the markers to read; nil: markerKey
	cluster bool     // sharded Pub/Sub, and the cluster client's commands
}

// key is the lock key of name on this node.
func (s scope) key(name string) string {
	if s.tag == "" {
		return name
	}
	return "{" + s.tag + "}:" + name
}

// marker is the marker of the copy of key.
func (s scope) marker() string {
	if s.tag == "" {
		return markerKey
	}
	return tagMarker(s.tag)
}

// tagMarker is the marker of a cluster copy of hash tag tag.
func tagMarker(tag string) string { return "{" + tag + "}:marker" }

// channel is the notice channel of name's key.
func (s scope) channel(name string) string { return notice.Channel(s.key(name)) }

// allMarkers are the markers this node keeps.
func (s scope) allMarkers() []string {
	if s.markers == nil && !s.cluster {
		return []string{markerKey}
	}
	return s.markers
}

// publish is the Pub/Sub publish command of this node's notices.
func (s scope) publish() string {
	if s.cluster {
		return "spublish"
	}
	return "publish"
}

// subscribe is the Pub/Sub subscribe command of this node's notices.
func (s scope) subscribe() string {
	if s.cluster {
		return "ssubscribe"
	}
	return "subscribe"
}
