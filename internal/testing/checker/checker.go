// Package checker holds the safety checkers that package tests and the
// fault suite share: tenures never overlap (S1, [Overlaps]), tokens
// increase (S5, [NotIncreasing]), a fenced resource refuses stale and
// repeated tokens ([Fence]); and, over a history of wire events, the fault
// suite's C1, C2 and C4, so that the fault suite (real processes,
// CLOCK_MONOTONIC) and the simulator's explorer (virtual time) judge their
// histories with the same code.
//
// docs/design.md §7.1 maps the checkers to the invariants (C1: S1, S2; C2:
// S5; C4: S2).
package checker

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/redlease/redlease/internal/testing/checker/wire"
)

// Test-side events of the history (besides the candidates' own, see wire).
const (
	Fault  = "fault"  // a fault injected or healed (What)
	Pause  = "pause"  // a candidate process stopped (PID)
	Resume = "resume" // and continued
	Kill   = "kill"   // a candidate process killed -9 (PID)
	Spawn  = "spawn"  // a candidate process started (PID)
)

// Term is one tenure as the history shows it; times are CLOCK_MONOTONIC ns.
type Term struct {
	ID     string
	PID    int
	TS     int64 // Term.Start: the tenure begins
	Token  uint64
	Permit int   // the semaphore permit held (0 but in a semaphore's history)
	VU     int64 // the term's validity, the last one reported
	DL     int64 // its local deadline, the last one reported

	Stepdown int64 // the holder saw the term end (0: never reported)
	Demoted  int64 // OnDemoted ran (0: never reported)
	Cause    string

	// Belief instants: readings taken just before a look that said the
	// holder leads in this term (IsLeader samples, the check before a
	// write). The holder believed it led at or after each of them.
	First, Last int64
	Beliefs     int
	Writes      int

	Disturbed string // the holder's process was paused or killed during the term
}

func (tm *Term) String() string {
	return fmt.Sprintf("term %d of %s (pid %d)", tm.Token, tm.ID, tm.PID)
}

// believed records a belief instant.
func (tm *Term) believed(at int64) {
	if tm.First == 0 || at < tm.First {
		tm.First = at
	}
	tm.Last = max(tm.Last, at)
}

type termKey struct {
	pid int
	ts  int64
}

// Terms builds the tenures of a history, in order of start; orphans are
// beliefs that name no term the history knows (C1 violations).
func Terms(evs []wire.Event) (ts []*Term, orphans []string) {
	byKey := map[termKey]*Term{}
	for _, ev := range evs {
		if ev.Ev == wire.Elected {
			tm := &Term{ID: ev.ID, PID: ev.PID, TS: ev.TS, Token: ev.Token, Permit: ev.Permit, VU: ev.VU, DL: ev.DL}
			byKey[termKey{ev.PID, ev.TS}] = tm
			ts = append(ts, tm)
		}
	}
	tr := troubles{spans: map[int][]span{}, paused: map[int]int64{}}
	for _, ev := range evs {
		tr.see(ev)
		if o := follow(byKey[termKey{ev.PID, ev.TS}], ev); o != "" {
			orphans = append(orphans, o)
		}
	}
	for pid, from := range tr.paused { // never resumed
		tr.spans[pid] = append(tr.spans[pid], span{from, from})
	}
	for _, tm := range ts {
		end := tm.Demoted
		if end == 0 {
			end = 1<<63 - 1
		}
		for _, s := range tr.spans[tm.PID] {
			if s.to >= tm.TS && s.from <= end {
				tm.Disturbed = "paused or killed during the term"
			}
		}
	}
	slices.SortFunc(ts, func(a, b *Term) int { return cmp.Compare(a.TS, b.TS) })
	return ts, orphans
}

// span is a time in which a process was paused or killed.
type span struct{ from, to int64 }

// troubles are the pauses and kills of each process (by pid).
type troubles struct {
	spans  map[int][]span
	paused map[int]int64 // paused since, not resumed yet
}

// see records ev if it pauses, resumes or kills a process.
func (tr *troubles) see(ev wire.Event) {
	switch ev.Ev {
	case Pause:
		tr.paused[ev.PID] = ev.T
	case Resume:
		tr.spans[ev.PID] = append(tr.spans[ev.PID], span{tr.paused[ev.PID], ev.T})
		delete(tr.paused, ev.PID)
	case Kill:
		tr.spans[ev.PID] = append(tr.spans[ev.PID], span{ev.T, ev.T})
	}
}

// follow applies ev to its term tm (nil if the history has no such term);
// it returns the C1 violation of a belief or write in no term, else "".
func follow(tm *Term, ev wire.Event) string {
	switch ev.Ev {
	case wire.Refresh:
		if tm != nil && ev.VU != 0 {
			tm.VU, tm.DL = ev.VU, ev.DL
		}
	case wire.Stepdown:
		if tm != nil {
			tm.Stepdown = ev.T
		}
	case wire.Demoted:
		if tm != nil {
			tm.Demoted, tm.Cause = ev.T, ev.Cause
			if ev.VU != 0 {
				tm.VU = ev.VU
			}
		}
	case wire.Belief, wire.Write:
		if tm == nil {
			return fmt.Sprintf("C1: %s (pid %d) believed it led at %s in a term that never began (start %d)",
				ev.ID, ev.PID, ms(max(ev.First, ev.T)), ev.TS)
		}
		if ev.Ev == wire.Belief {
			tm.believed(ev.First)
			tm.believed(ev.Last)
			tm.Beliefs += ev.N
		} else {
			tm.believed(ev.T)
			tm.Writes++
		}
	}
	return ""
}

// ms formats a monotonic reading (or a duration in ns) in milliseconds.
func ms(ns int64) string { return fmt.Sprintf("%.3fms", float64(ns)/1e6) }

// C1: every belief instant of a term lies before its validity ends,
// and before the start of every later term: tenures never overlap, and
// IsLeader is never true outside its own tenure.
func C1(ts []*Term, orphans []string) []string {
	out := slices.Clone(orphans)
	overlaps := Overlaps(tenures(ts))
	for i, tm := range ts {
		// (A belief instant is a reading taken before the look: a lower
		// bound, so it is not compared with the term's start.)
		if tm.Beliefs+tm.Writes > 0 && tm.Last > tm.VU {
			out = append(out, fmt.Sprintf("C1: %s believed it led %s after its validity ended", tm, ms(tm.Last-tm.VU)))
		}
		for len(overlaps) > 0 && overlaps[0].Later == i {
			prev := ts[overlaps[0].Earlier] // the earlier term that believed latest
			out = append(out, fmt.Sprintf("C1: tenures overlap: %s believed it led %s after %s began", prev, ms(prev.Last-tm.TS), tm))
			overlaps = overlaps[1:]
		}
	}
	return out
}

// LongestOverlap is the longest time by which a term's holder believed
// it led after a later term began (what C1 reports as overlapping
// tenures): the window in which two holders acted at once; 0 when tenures
// never overlap.
func LongestOverlap(ts []*Term) time.Duration {
	var out time.Duration
	for _, o := range Overlaps(tenures(ts)) {
		out = max(out, time.Duration(ts[o.Earlier].Last-ts[o.Later].TS))
	}
	return out
}

// tenures are the terms as Overlaps and NotIncreasing see them: from the
// term's start to its last belief instant (included, hence +1ns).
func tenures(ts []*Term) []Tenure {
	out := make([]Tenure, len(ts))
	for i, tm := range ts {
		out[i] = Tenure{Start: time.Unix(0, tm.TS), End: time.Unix(0, tm.Last+1), Token: tm.Token}
	}
	return out
}

// C2: tokens strictly increase from tenure to tenure.
func C2(ts []*Term) []string {
	var out []string
	for _, i := range NotIncreasing(tenures(ts)) {
		a, b := ts[i-1], ts[i]
		out = append(out, fmt.Sprintf("C2: %s began %s after %s with a token that is not greater", b, ms(b.TS-a.TS), a))
	}
	return out
}

// C4: every term whose holder was neither paused nor killed saw its
// end (and was demoted), no later than its validity + slack (scheduling
// on a loaded machine; 0 in virtual time).
func C4(ts []*Term, slack time.Duration) []string {
	var out []string
	for _, tm := range ts {
		switch {
		case tm.Disturbed != "":
		case tm.Stepdown == 0:
			out = append(out, fmt.Sprintf("C4: %s never saw its term end", tm))
		case tm.Demoted == 0:
			out = append(out, fmt.Sprintf("C4: %s was never demoted", tm))
		case tm.Stepdown > tm.VU+slack.Nanoseconds():
			out = append(out, fmt.Sprintf("C4: %s saw its term end %s after its validity ended", tm, ms(tm.Stepdown-tm.VU)))
		}
	}
	return out
}

// Failovers returns, for every term that was lost (not resigned, not
// stopped), the time from the end of its tenure (its holder saw it end,
// or its validity ended, whichever came first) to the start of the next.
func Failovers(ts []*Term) []time.Duration {
	var out []time.Duration
	for i := 1; i < len(ts); i++ {
		a := ts[i-1]
		if strings.Contains(a.Cause, "resigned") || strings.Contains(a.Cause, "stopped") {
			continue
		}
		end := a.VU
		if a.Stepdown != 0 {
			end = min(end, a.Stepdown)
		}
		out = append(out, time.Duration(ts[i].TS-end))
	}
	return out
}
