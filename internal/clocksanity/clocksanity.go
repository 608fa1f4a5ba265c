// Package clocksanity watches one server's clock against this process's
// monotonic clock (docs/design.md §6.5). Each reply that carries the
// server's TIME is a sample: the server read its clock somewhere between
// the moment the request was sent and the moment its reply came back. Two
// samples bound how far the server's clock may have moved between them;
// a server clock that moved further than the monotonic clock allows, by
// more than the drift allowance, jumped or runs fast (Fast), and one that
// moved less, or back, runs slow or stepped back (Slow).
//
// The bound is exact, not a guess: however the round trips fall, a
// healthy clock never gives a verdict. What it cannot see is a jump of a
// clock between two samples that is undone before the next one, and any
// jump of a server no reply of which is sampled.
package clocksanity

import (
	"fmt"
	"sync"
	"time"
)

// Verdict is what one sample says of the server's clock.
type Verdict int

const (
	// OK: the clock moved as the monotonic clock allows.
	OK Verdict = iota
	// Fast: the clock moved ahead of the monotonic clock by more than the
	// allowance since an earlier sample: it jumped forward or runs fast.
	Fast
	// Slow: the clock moved less than the monotonic clock allows, or
	// back: it runs slow or was stepped back.
	Slow
)

// String names the verdict ("ok", "fast", "slow").
func (v Verdict) String() string {
	switch v {
	case Fast:
		return "fast"
	case Slow:
		return "slow"
	}
	return "ok"
}

// Result is a sample's verdict and how far past the allowance it is.
type Result struct {
	Verdict Verdict
	// Excess is how far the server's clock moved beyond what the
	// monotonic clock and the allowance let it (ahead on Fast, behind on
	// Slow); 0 on OK.
	Excess time.Duration
	// Over is the monotonic time between the two samples compared (the
	// longest it can have been).
	Over time.Duration
}

// String describes a verdict other than OK in words, for logs and errors.
func (r Result) String() string {
	switch r.Verdict {
	case Fast:
		return fmt.Sprintf("its clock moved %s further ahead than this process's monotonic clock in %s (beyond the drift allowance): a jump forward or a fast clock",
			r.Excess.Round(time.Millisecond), r.Over.Round(time.Millisecond))
	case Slow:
		return fmt.Sprintf("its clock moved %s less than this process's monotonic clock in %s (beyond the drift allowance): a slow clock or a step back",
			r.Excess.Round(time.Millisecond), r.Over.Round(time.Millisecond))
	}
	return "its clock moved as this process's monotonic clock allows"
}

// sample is one reply: sent and received by the monotonic clock (the
// time.Time values carry it), and the server's TIME it carried.
type sample struct {
	sent, recv time.Time
	server     time.Time
}

// Detector keeps the samples of one server. The zero value is not usable:
// make one with [New]. It is safe for concurrent use.
type Detector struct {
	rate float64 // the drift factor: the share of an interval a clock may gain or lose

	mu         sync.Mutex
	base, last sample // the first sample since the last verdict, and the latest received
	have       bool
}

// New makes a Detector that allows a clock to gain or lose rate (the
// clients' DriftFactor) of every interval, plus the slack of each sample.
func New(rate float64) *Detector {
	return &Detector{rate: rate}
}

// Observe takes one reply: sent and recv are when its request was sent
// and its reply received (time.Now, monotonic), server the server's TIME
// it carried; slack is what a clock may move beyond rate in any interval
// (the drift allowance the locks at hand were given: a move within it
// costs them nothing, and a clock within the safety model stays in it).
// The sample is compared with the first one since the last
// verdict (a fast or slow rate) and with the latest one (a jump). After a
// verdict other than OK, the comparisons start again from this sample: a
// jump is reported once.
func (d *Detector) Observe(sent, recv, server time.Time, slack time.Duration) Result {
	s := sample{sent: sent, recv: recv, server: server}
	d.mu.Lock()
	defer d.mu.Unlock()
	if !d.have {
		d.base, d.last, d.have = s, s, true
		return Result{}
	}
	r := d.compare(d.last, s, slack)
	if r.Verdict == OK {
		r = d.compare(d.base, s, slack)
	}
	switch {
	case r.Verdict != OK:
		d.base, d.last = s, s
	case s.recv.After(d.last.recv):
		d.last = s
	}
	return r
}

// compare bounds what the server's clock may do between samples a and b:
// the monotonic time between its two readings is at least b.sent -
// a.recv and at most b.recv - a.sent.
func (d *Detector) compare(a, b sample, slack time.Duration) Result {
	moved := b.server.Sub(a.server)
	most := b.recv.Sub(a.sent)
	if allowed := most + d.allow(most, slack); moved > allowed {
		return Result{Verdict: Fast, Excess: moved - allowed, Over: most}
	}
	least := b.sent.Sub(a.recv)
	if least <= 0 {
		return Result{}
	}
	if allowed := least - d.allow(least, slack); moved < allowed {
		return Result{Verdict: Slow, Excess: allowed - moved, Over: least}
	}
	return Result{}
}

// allow is the drift allowed over an interval of length iv.
func (d *Detector) allow(iv, slack time.Duration) time.Duration {
	return time.Duration(float64(iv)*d.rate) + slack
}
