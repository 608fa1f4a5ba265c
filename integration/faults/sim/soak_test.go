package sim

import (
	"fmt"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redlease/redlease/internal/testing/sim"
)

// TestSimSoak is `make sim`: it explores from a random seed (or
// REDLEASE_SIM_SEED) for REDLEASE_SIM (a duration), then prints schedules
// per second, the faults injected by kind, the coverage of the scripts'
// branches and of the library's quarantine and fencing paths, and one
// summary line. It fails if a schedule violates a check.
func TestSimSoak(t *testing.T) {
	d, err := time.ParseDuration(os.Getenv("REDLEASE_SIM"))
	if err != nil {
		t.Skip("set REDLEASE_SIM=<duration> (make sim DURATION=10m) to explore")
	}
	seed := uint64(time.Now().UnixNano()) % 1_000_000_000
	if v := os.Getenv("REDLEASE_SIM_SEED"); v != "" {
		seed, err = strconv.ParseUint(v, 10, 64)
		if err != nil {
			t.Fatalf("REDLEASE_SIM_SEED: %v", err)
		}
	}
	sim.ScriptCoverage().Reset()
	var total exploration
	total.faults = map[string]int64{}
	violations := 0
	var firsts []*found
	// Rounds of the default menu, the failback menu and the two limits'
	// modes would mix findings; the soak runs the menus within the safety
	// model: the default one two rounds in five, steer, failback and
	// permits (a semaphore's holders) one each.
	for round, from := 0, seed; total.elapsed < d; round++ {
		mode := [5]string{"", "steer", "", "failback", "permits"}[round%5]
		left := d - total.elapsed
		ex := explore(t, from, 0, "", mode, min(left, 30*time.Second), false)
		from += uint64(ex.ran) + 1
		total.ran += ex.ran
		total.terms += ex.terms
		total.elapsed += ex.elapsed
		for k, v := range ex.faults {
			total.faults[k] += v
		}
		violations += ex.failed
		if ex.first != nil {
			firsts = append(firsts, ex.first)
		}
	}
	for _, f := range firsts {
		t.Errorf("violation:\n%s", report(f.s, f.res))
	}
	var b strings.Builder
	fmt.Fprintf(&b, "schedules: %d in %s (%.1f per second), %d terms\n", total.ran, total.elapsed.Round(time.Second), total.perSec(), total.terms)
	fmt.Fprintf(&b, "faults injected, by kind:\n")
	for _, k := range slices.Sorted(maps.Keys(total.faults)) {
		fmt.Fprintf(&b, "  %-18s %d\n", k, total.faults[k])
	}
	fmt.Fprintf(&b, "%s", coverageReport())
	fmt.Printf("%s", b.String())
	fmt.Printf("sim: schedules=%d per_sec=%.1f violations=%d seed=%d\n", total.ran, total.perSec(), violations, seed)
}

// coverageReport says which branches of which scripts the servers took,
// and how often the library's quarantine and fencing paths ran. With
// REDLEASE_SIM_COVERAGE naming the file the differential test wrote (make
// sim runs it first, on redis-server and valkey-server), it also counts
// the branches that test reached: the explorer drives the scripts through
// the library, which never sends some arguments (a TTL above MaxTTL, a
// cluster layout, the unfenced mode), while the test generates them.
func coverageReport() string {
	var b strings.Builder
	brs := sim.ScriptCoverage().Branches()
	all := brs
	withDiff := false
	if p := os.Getenv("REDLEASE_SIM_COVERAGE"); p != "" {
		if d, err := sim.ReadCounts(p); err == nil {
			all, withDiff = sim.MergeCounts(brs, d), true
		} else {
			fmt.Fprintf(&b, "(no differential coverage: %v)\n", err)
		}
	}
	byScript, missed, viaPrelude := countBranches(brs, all)
	writeBranchTable(&b, byScript, viaPrelude, withDiff)
	if len(missed) > 0 {
		fmt.Fprintf(&b, "branches never taken:\n%s\n", strings.Join(missed, "\n"))
	}
	fmt.Fprintf(&b, "library paths (script calls): %s\n", pathCounts(brs))
	return b.String()
}

// branchCount is one script's branches: reached by the explorer, reached
// by the explorer or the differential test, in all.
type branchCount struct{ explorer, both, n int }

// countBranches counts, per script, the branches of all (the explorer's
// brs, merged with the differential test's when it ran) that were
// reached; missed lists those never taken, viaPrelude counts those among
// them that are an arm of the shared prelude reached in another script.
func countBranches(brs, all []sim.BranchCount) (byScript map[string]branchCount, missed []string, viaPrelude int) {
	explorer := map[string]int64{}
	for _, br := range brs {
		explorer[br.Key()] += br.Hits
	}
	// An arm of the prelude the scripts share (same line, same text) is
	// one piece of code: reached in one script, it is reached.
	shared := map[string]bool{}
	for _, br := range all {
		if br.Hits > 0 {
			shared[br.PreludeKey()] = true
		}
	}
	byScript = map[string]branchCount{}
	for _, br := range all {
		c := byScript[br.Script]
		c.n++
		if explorer[br.Key()] > 0 {
			c.explorer++
		}
		switch {
		case br.Hits > 0:
			c.both++
		case shared[br.PreludeKey()]:
			viaPrelude++
			missed = append(missed, fmt.Sprintf("  %s:%d %s (the shared prelude's arm, reached in another script)", br.Script, br.Line, br.Text))
		default:
			missed = append(missed, fmt.Sprintf("  %s:%d %s", br.Script, br.Line, br.Text))
		}
		byScript[br.Script] = c
	}
	return byScript, missed, viaPrelude
}

// writeBranchTable writes the branches reached per script and in all.
func writeBranchTable(b *strings.Builder, byScript map[string]branchCount, viaPrelude int, withDiff bool) {
	var tot branchCount
	if withDiff {
		fmt.Fprintf(b, "script branches reached (then/else arms): explorer, explorer + differential test:\n")
	} else {
		fmt.Fprintf(b, "script branches reached (then/else arms):\n")
	}
	for _, s := range slices.Sorted(maps.Keys(byScript)) {
		c := byScript[s]
		tot.explorer, tot.both, tot.n = tot.explorer+c.explorer, tot.both+c.both, tot.n+c.n
		if withDiff {
			fmt.Fprintf(b, "  %-11s %d/%d  %d/%d\n", s, c.explorer, c.n, c.both, c.n)
		} else {
			fmt.Fprintf(b, "  %-11s %d/%d\n", s, c.explorer, c.n)
		}
	}
	if withDiff {
		fmt.Fprintf(b, "  all         %d/%d  %d/%d (%d/%d counting the shared prelude once)\n",
			tot.explorer, tot.n, tot.both, tot.n, tot.both+viaPrelude, tot.n)
	} else {
		fmt.Fprintf(b, "  all         %d/%d\n", tot.explorer, tot.n)
	}
}

// pathCounts names the quarantine and fencing paths by the branches that
// mark them.
func pathCounts(brs []sim.BranchCount) string {
	find := func(script, text string) int64 {
		var n int64
		for _, br := range brs {
			if br.Script == script && strings.Contains(br.Text, text) {
				n += br.Hits
			}
		}
		return n
	}
	paths := []struct{ name, script, text string }{
		{"quarantine started (no marker, other run_id or replication ID)", "acquire", "if create then"},
		{"acquire refused: quarantined", "acquire", "if left > 0 then"},
		{"acquire refused: floor not raised", "acquire", "if not ok then"},
		{"fencing slow path (write-back)", "fence", "if c < t then"},
		{"late spare lowered to its token", "settle", "if c ~= nil and c > tonumber(ARGV[2]) then"},
		{"lost copy restored", "restore_many", "elseif redis.call('SET', key, value, 'NX', 'PX', ttl) then [then]"},
		{"floor raised", "raise", "if (tonumber(m[2]) or 0) < v then"},
		{"counter missing, from high-water mark", "acquire", "else [else]"},
	}
	var parts []string
	for _, p := range paths {
		parts = append(parts, fmt.Sprintf("%s %d", p.name, find(p.script, p.text)))
	}
	return strings.Join(parts, "; ")
}
