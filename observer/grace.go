package observer

import (
	"time"

	"github.com/redlease/redlease/internal/backoff"
)

// unknownStreak holds a Watch's unknown reads back (Config.UnknownGrace):
// unknown is reported only when no majority answered for the grace, in at
// least two reads, so that one read lost to a loaded host or a slow node
// does not report the leader unknown.
type unknownStreak struct {
	since time.Time // the first unknown read of the streak; zero: none
	reads int       // unknown reads in the streak
}

// hold reports whether ev, a read's event, is to be held back and read
// again, and after how long. reported is true when the watch already
// reported unknown: a further unknown read is no change to hold back.
func (s *unknownStreak) hold(ev Event, reported bool, grace time.Duration) (bool, time.Duration) {
	if !ev.unknown() || reported {
		s.since, s.reads = time.Time{}, 0
		return false, 0
	}
	if s.reads == 0 {
		s.since = ev.At
	}
	s.reads++
	left := grace - ev.At.Sub(s.since)
	switch {
	case left <= 0 && s.reads >= 2:
		s.since, s.reads = time.Time{}, 0
		return false, 0 // no majority for the grace: report it
	case left <= 0:
		return true, 0 // the grace is over, but one read is not enough
	default:
		return true, min(backoff.Jitter(grace/4), left)
	}
}
