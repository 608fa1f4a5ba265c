package main

import "time"

// pauseWatch tells a pause of redlease itself (SIGSTOP, a stalled host,
// starvation) from a slow command: while a term lasts, `redlease run`
// ticks it every `every`; a gap between ticks longer than that is time in
// which redlease did not run. Not safe for concurrent use.
type pauseWatch struct {
	every   time.Duration
	last    time.Time     // the last tick (monotonic)
	longest time.Duration // the longest gap beyond every
	endedAt time.Time     // when that gap ended
}

func newPauseWatch(every time.Duration) *pauseWatch {
	return &pauseWatch{every: every, last: time.Now()}
}

// tick records that redlease ran at now.
func (p *pauseWatch) tick(now time.Time) {
	if gap := now.Sub(p.last) - p.every; gap > p.longest {
		p.longest, p.endedAt = gap, now
	}
	p.last = now
}

// paused returns the longest pause seen, if it lasted at least min.
func (p *pauseWatch) paused(min time.Duration) (time.Duration, bool) {
	return p.longest, p.longest >= min
}
