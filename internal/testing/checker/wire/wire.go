// Package wire is what the candidate processes of the fault tests and the
// tests themselves share: the events a candidate reports on its stdout, one
// JSON object per line, and CLOCK_MONOTONIC readings, which all processes
// of one host share, so that the test can compare times taken in different
// processes.
//
// See docs/design.md §7.1 for the fault suite.
package wire

import (
	"time"
)

// Event kinds a candidate reports.
const (
	// Ready: the candidate's client is made and its elector runs (PID).
	Ready = "ready"
	// Elected: a term began (TS = Term.Start, Token, VU, DL; Permit: the
	// semaphore permit held, for a semaphore's holder).
	Elected = "elected"
	// Refresh: the term's validity moved (TS, Token, VU, DL).
	Refresh = "refresh"
	// Belief: a run of samples in which the candidate believed it led
	// (IsLeader, or its own flag under -unsafe-ignore-deadline) ended:
	// First and Last are the readings taken just before the first and the
	// last sample that said "leader", N the number of such samples.
	Belief = "belief"
	// Write: one read-modify-write's write to the fenced store (T: taken
	// just before the last leadership check that allowed it; OK, Status).
	Write = "write"
	// Stepdown: the holder saw its term end (T): OnElected saw its context
	// cancelled, or, under -unsafe-ignore-deadline, OnDemoted ran.
	Stepdown = "stepdown"
	// Demoted: OnDemoted ran (T, Cause, VU: the term's final validity).
	Demoted = "demoted"
	// Exit: Run returned (Cause).
	Exit = "exit"
	// Refused: redlock.New refused the configuration (Cause: its error;
	// OK: the error is a redlock.ErrInvalidArgument). The candidate then
	// exits with status 3.
	Refused = "refused"
	// Failure: something the test must hear about (Cause).
	Failure = "failure"
	// Alarm: the candidate's client raised the split-brain alarm
	// (redlock.EventSplitBrain; Cause: its evidence and error). A history
	// within the safety model has none.
	Alarm = "alarm"
)

// Event is one line of a candidate's stdout. Times are CLOCK_MONOTONIC
// nanoseconds. A term is named by its holder's process and TS.
type Event struct {
	Ev     string `json:"ev"`
	ID     string `json:"id,omitempty"`
	PID    int    `json:"pid,omitempty"`
	T      int64  `json:"t"`
	TS     int64  `json:"ts,omitempty"`
	Token  uint64 `json:"token,omitempty"`
	VU     int64  `json:"vu,omitempty"`
	DL     int64  `json:"dl,omitempty"`
	First  int64  `json:"first,omitempty"`
	Last   int64  `json:"last,omitempty"`
	N      int    `json:"n,omitempty"`
	OK     bool   `json:"ok,omitempty"`
	Status int    `json:"status,omitempty"`
	Cause  string `json:"cause,omitempty"`
	// Permit is the semaphore permit a term holds (lease.Config.Permits;
	// Elected events only; 0 for a lease, a lock or an election).
	Permit int `json:"permit,omitempty"`
	// What describes a fault injected by the test (test-side events only).
	What string `json:"what,omitempty"`
}

// Clock converts a time.Time with a monotonic reading (time.Now, and what
// is derived from it with Add) into a CLOCK_MONOTONIC reading: Go's
// monotonic clock on Linux is CLOCK_MONOTONIC, so the conversion is exact
// up to the microsecond it takes to pair the two readings.
type Clock struct {
	base int64
	at   time.Time
}

// NewClock pairs a time.Now with a CLOCK_MONOTONIC reading.
func NewClock() Clock {
	a := Now()
	at := time.Now()
	b := Now()
	return Clock{base: a + (b-a)/2, at: at}
}

// Of returns t as a CLOCK_MONOTONIC reading; 0 for the zero time.
func (c Clock) Of(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return c.base + int64(t.Sub(c.at))
}
