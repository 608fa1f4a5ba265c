package doctor

import (
	"context"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// marker is one quarantine marker as read (docs/design.md §4.7.1; the
// fields of internal/scripts/lua/quarantine.lua): who wrote it, when, and the
// MaxTTL and cluster layout it records.
type marker struct {
	key     string
	exists  bool
	runID   string        // r: the run_id of the server that wrote it
	replID  string        // p: its replication ID then
	created time.Time     // c: the server's time it was written
	ok      bool          // ok: the fencing floor was raised (or bootstrapped)
	maxTTL  time.Duration // mx: the MaxTTL of the client that wrote it; 0 if not recorded
	layout  string        // l: the cluster layout ("n=3 B=16"); "" on independent nodes
}

// markerFields are the fields HMGET reads, in marker's order.
var markerFields = []string{"r", "p", "c", "ok", "mx", "l"}

// readMarkers reads the markers at keys and the server's TIME, in one
// pipeline. It never writes them: a written marker starts a quarantine.
func readMarkers(ctx context.Context, c redis.UniversalClient, keys []string) (now time.Time, ms []marker, err error) {
	cmds := make([]*redis.SliceCmd, len(keys))
	var tc *redis.TimeCmd
	_, err = c.Pipelined(ctx, func(p redis.Pipeliner) error {
		tc = p.Time(ctx)
		for i, k := range keys {
			cmds[i] = p.HMGet(ctx, k, markerFields...)
		}
		return nil
	})
	if err != nil {
		return now, nil, err
	}
	now = tc.Val()
	for i, cmd := range cmds {
		ms = append(ms, parseMarker(keys[i], cmd.Val()))
	}
	return now, ms, nil
}

// parseMarker reads an HMGET of markerFields; no created time means no
// marker (as the scripts take it).
func parseMarker(key string, v []any) marker {
	s := func(i int) string {
		if i < len(v) {
			if x, ok := v[i].(string); ok {
				return x
			}
		}
		return ""
	}
	m := marker{key: key, runID: s(0), replID: s(1), ok: s(3) == "1", layout: s(5)}
	c, err := strconv.ParseInt(s(2), 10, 64)
	if err != nil {
		return marker{key: key}
	}
	m.exists, m.created = true, time.UnixMilli(c)
	if mx, err := strconv.ParseInt(s(4), 10, 64); err == nil {
		m.maxTTL = time.Duration(mx) * time.Millisecond
	}
	return m
}

// markerState is what a marker means for its node's vote, from best to
// worst as the report ranks them.
type markerState int

const (
	markerReady       markerState = iota // this server's, quarantine over, floor raised: votes
	markerUnraised                       // quarantine over, floor not raised yet
	markerQuarantined                    // this server's, quarantine running
	markerMissing                        // none: never used, or the data was lost
	markerReplaced                       // another replication ID: a promotion or a full resync
	markerForeign                        // another run_id: a restart, a failover, another server
)

// state is what m means on a server of run_id and replID (each "" when
// INFO is refused: then not compared, as the scripts do) at now, with the
// quarantine left.
func (m marker) state(runID, replID string, now time.Time, maxTTL time.Duration) (markerState, time.Duration) {
	switch {
	case !m.exists:
		return markerMissing, 0
	case runID != "" && m.runID != runID:
		return markerForeign, 0
	case replID != "" && m.replID != replID:
		return markerReplaced, 0
	}
	mx := m.maxTTL
	if mx == 0 {
		mx = maxTTL // the scripts use the client's where the marker has none
	}
	if left := mx - now.Sub(m.created); left > 0 {
		return markerQuarantined, left
	}
	if !m.ok {
		return markerUnraised, 0
	}
	return markerReady, 0
}
