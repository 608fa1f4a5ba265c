package faults

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/redlease/redlease/integration/faults/internal/wire"
)

// Test-side events of the history (besides the candidates' own, see wire).
const (
	evFault  = "fault"  // a fault injected or healed (What)
	evPause  = "pause"  // a candidate process stopped (PID)
	evResume = "resume" // and continued
	evKill   = "kill"   // a candidate process killed -9 (PID)
	evSpawn  = "spawn"  // a candidate process started (PID)
)

// c4Slack is how late a holder may see its term end after the term's
// validity (C4): scheduling on a loaded two-core machine.
const c4Slack = 20 * time.Millisecond

// term is one tenure as the history shows it; times are CLOCK_MONOTONIC ns.
type term struct {
	id    string
	pid   int
	ts    int64 // Term.Start: the tenure begins
	token uint64
	vu    int64 // the term's validity, the last one reported
	dl    int64 // its local deadline, the last one reported

	stepdown int64 // the holder saw the term end (0: never reported)
	demoted  int64 // OnDemoted ran (0: never reported)
	cause    string

	// Belief instants: readings taken just before a look that said the
	// holder leads in this term (IsLeader samples, the check before a
	// write). The holder believed it led at or after each of them.
	first, last int64
	beliefs     int
	writes      int

	disturbed string // the holder's process was paused or killed during the term
}

func (tm *term) String() string {
	return fmt.Sprintf("term %d of %s (pid %d)", tm.token, tm.id, tm.pid)
}

// believed records a belief instant.
func (tm *term) believed(at int64) {
	if tm.first == 0 || at < tm.first {
		tm.first = at
	}
	tm.last = max(tm.last, at)
}

type termKey struct {
	pid int
	ts  int64
}

// terms builds the tenures of a history, in order of start; orphans are
// beliefs that name no term the history knows (C1 violations).
func terms(evs []wire.Event) (ts []*term, orphans []string) {
	byKey := map[termKey]*term{}
	for _, ev := range evs {
		if ev.Ev == wire.Elected {
			tm := &term{id: ev.ID, pid: ev.PID, ts: ev.TS, token: ev.Token, vu: ev.VU, dl: ev.DL}
			byKey[termKey{ev.PID, ev.TS}] = tm
			ts = append(ts, tm)
		}
	}
	type span struct{ from, to int64 }
	troubles := map[int][]span{} // per pid: pauses and kills
	paused := map[int]int64{}
	for _, ev := range evs {
		tm := byKey[termKey{ev.PID, ev.TS}]
		switch ev.Ev {
		case evPause:
			paused[ev.PID] = ev.T
		case evResume:
			troubles[ev.PID] = append(troubles[ev.PID], span{paused[ev.PID], ev.T})
			delete(paused, ev.PID)
		case evKill:
			troubles[ev.PID] = append(troubles[ev.PID], span{ev.T, ev.T})
		case wire.Refresh:
			if tm != nil && ev.VU != 0 {
				tm.vu, tm.dl = ev.VU, ev.DL
			}
		case wire.Stepdown:
			if tm != nil {
				tm.stepdown = ev.T
			}
		case wire.Demoted:
			if tm != nil {
				tm.demoted, tm.cause = ev.T, ev.Cause
				if ev.VU != 0 {
					tm.vu = ev.VU
				}
			}
		case wire.Belief, wire.Write:
			if tm == nil {
				orphans = append(orphans, fmt.Sprintf("C1: %s (pid %d) believed it led at %s in a term that never began (start %d)",
					ev.ID, ev.PID, ms(max(ev.First, ev.T)), ev.TS))
				continue
			}
			if ev.Ev == wire.Belief {
				tm.believed(ev.First)
				tm.believed(ev.Last)
				tm.beliefs += ev.N
			} else {
				tm.believed(ev.T)
				tm.writes++
			}
		}
	}
	for pid, from := range paused { // never resumed
		troubles[pid] = append(troubles[pid], span{from, from})
	}
	for _, tm := range ts {
		end := tm.demoted
		if end == 0 {
			end = 1<<63 - 1
		}
		for _, s := range troubles[tm.pid] {
			if s.to >= tm.ts && s.from <= end {
				tm.disturbed = "paused or killed during the term"
			}
		}
	}
	slices.SortFunc(ts, func(a, b *term) int { return cmp.Compare(a.ts, b.ts) })
	return ts, orphans
}

// ms formats a monotonic reading (or a duration in ns) in milliseconds.
func ms(ns int64) string { return fmt.Sprintf("%.3fms", float64(ns)/1e6) }

// checkC1: every belief instant of a term lies before its validity ends,
// and before the start of every later term: tenures never overlap, and
// IsLeader is never true outside its own tenure.
func checkC1(ts []*term, orphans []string) []string {
	out := slices.Clone(orphans)
	var prev *term // the earlier term that believed latest
	for _, tm := range ts {
		// (A belief instant is a reading taken before the look: a lower
		// bound, so it is not compared with the term's start.)
		if tm.beliefs+tm.writes > 0 && tm.last > tm.vu {
			out = append(out, fmt.Sprintf("C1: %s believed it led %s after its validity ended", tm, ms(tm.last-tm.vu)))
		}
		if prev != nil && prev.last >= tm.ts {
			out = append(out, fmt.Sprintf("C1: tenures overlap: %s believed it led %s after %s began", prev, ms(prev.last-tm.ts), tm))
		}
		if prev == nil || tm.last > prev.last {
			prev = tm
		}
	}
	return out
}

// checkC2: tokens strictly increase from tenure to tenure.
func checkC2(ts []*term) []string {
	var out []string
	for i := 1; i < len(ts); i++ {
		if a, b := ts[i-1], ts[i]; b.token <= a.token {
			out = append(out, fmt.Sprintf("C2: %s began %s after %s with a token that is not greater", b, ms(b.ts-a.ts), a))
		}
	}
	return out
}

// checkC4: every term whose holder was neither paused nor killed saw its
// end (and was demoted), no later than its validity + c4Slack.
func checkC4(ts []*term) []string {
	var out []string
	for _, tm := range ts {
		switch {
		case tm.disturbed != "":
		case tm.stepdown == 0:
			out = append(out, fmt.Sprintf("C4: %s never saw its term end", tm))
		case tm.demoted == 0:
			out = append(out, fmt.Sprintf("C4: %s was never demoted", tm))
		case tm.stepdown > tm.vu+c4Slack.Nanoseconds():
			out = append(out, fmt.Sprintf("C4: %s saw its term end %s after its validity ended", tm, ms(tm.stepdown-tm.vu)))
		}
	}
	return out
}

// failovers returns, for every term that was lost (not resigned, not
// stopped), the time from the end of its tenure (its holder saw it end,
// or its validity ended, whichever came first) to the start of the next.
func failovers(ts []*term) []time.Duration {
	var out []time.Duration
	for i := 1; i < len(ts); i++ {
		a := ts[i-1]
		if strings.Contains(a.cause, "resigned") || strings.Contains(a.cause, "stopped") {
			continue
		}
		end := a.vu
		if a.stepdown != 0 {
			end = min(end, a.stepdown)
		}
		out = append(out, time.Duration(ts[i].ts-end))
	}
	return out
}
