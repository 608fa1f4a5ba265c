package faults

import (
	"time"

	"github.com/redlease/redlease/internal/checker"
	"github.com/redlease/redlease/internal/checker/wire"
)

// The checkers live in internal/checker, shared with the simulator's
// explorer (integration/faults/sim); these names keep the suite's own.

// Test-side events of the history (besides the candidates' own, see wire).
const (
	evFault  = checker.Fault
	evPause  = checker.Pause
	evResume = checker.Resume
	evKill   = checker.Kill
	evSpawn  = checker.Spawn
)

// c4Slack is how late a holder may see its term end after the term's
// validity (C4): scheduling on a loaded two-core machine.
const c4Slack = 20 * time.Millisecond

type term = checker.Term

// termKey names a term: its holder's process and its start.
type termKey struct {
	pid int
	ts  int64
}

func terms(evs []wire.Event) ([]*term, []string)    { return checker.Terms(evs) }
func checkC1(ts []*term, orphans []string) []string { return checker.C1(ts, orphans) }
func checkC2(ts []*term) []string                   { return checker.C2(ts) }
func checkC4(ts []*term) []string                   { return checker.C4(ts, c4Slack) }
func failovers(ts []*term) []time.Duration          { return checker.Failovers(ts) }
