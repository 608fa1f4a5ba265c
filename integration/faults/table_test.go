package faults

import (
	"fmt"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// envReport names the file the "faults survived" table is written to
// (markdown), besides the test log.
const envReport = "REDLEASE_FAULTS_REPORT"

// outcomes are the checkers' verdicts of the scenarios that ran, by test
// name (finish records them).
var outcomes = struct {
	sync.Mutex
	m map[string]*outcome
}{m: map[string]*outcome{}}

// outcome is what one scenario's histories gave.
type outcome struct {
	terms     int
	failovers []time.Duration
}

// record adds a history's verdict to its scenario's outcome.
func record(name string, rep *report) {
	outcomes.Lock()
	defer outcomes.Unlock()
	o := outcomes.m[name]
	if o == nil {
		o = &outcome{}
		outcomes.m[name] = o
	}
	o.terms += len(rep.terms)
	o.failovers = append(o.failovers, rep.failovers...)
}

func outcomeOf(name string) (*outcome, bool) {
	outcomes.Lock()
	defer outcomes.Unlock()
	o, ok := outcomes.m[name]
	return o, ok
}

// row is one line of the table.
type row struct {
	name, fault, checks, result string
	o                           *outcome
	took                        time.Duration
}

// percentile is the nearest-rank p-th percentile of ds (sorted).
func percentile(ds []time.Duration, p int) time.Duration {
	i := (len(ds)*p + 99) / 100
	return ds[max(i, 1)-1]
}

// table renders the rows as the README's "faults survived" table.
func table(rows []row, total time.Duration) string {
	seed, _ := runSeed()
	var b strings.Builder
	fmt.Fprintf(&b, "Run of %s: seed %d, -race %t, %s, %d CPUs, %s in all.\n\n",
		time.Now().UTC().Format("2006-01-02"), seed, raceEnabled, runtime.Version(), runtime.NumCPU(), total.Round(time.Second))
	b.WriteString("| scenario | fault | checkers | result | terms | failovers | failover p50 / p99 | time |\n")
	b.WriteString("| --- | --- | --- | --- | --- | --- | --- | --- |\n")
	for _, r := range rows {
		fo := slices.Sorted(slices.Values(r.o.failovers))
		p := "–"
		if len(fo) > 0 {
			p = fmt.Sprintf("%s / %s", percentile(fo, 50).Round(time.Millisecond), percentile(fo, 99).Round(time.Millisecond))
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %d | %d | %s | %s |\n", r.name, r.fault, r.checks, r.result, r.o.terms, len(fo), p, r.took.Round(100*time.Millisecond))
	}
	b.WriteString("\nA control passes when its checker catches the fault. Failover: from the end of a lost term (its holder saw it end, or its validity ended) to the start of the next; negative when the next began first: after the clock jump (fencing keeps it safe) and in the controls, where two leaders overlap.\n")
	return b.String()
}

// writeTable logs the table and writes it to $REDLEASE_FAULTS_REPORT.
func writeTable(t *testing.T, rows []row, total time.Duration) {
	if len(rows) == 0 {
		return
	}
	tab := table(rows, total)
	t.Logf("faults survived:\n%s", tab)
	if path := os.Getenv(envReport); path != "" {
		if err := os.WriteFile(path, []byte(tab), 0o644); err != nil {
			t.Errorf("%s: %v", envReport, err)
		}
	}
}

// TestTable: percentiles by nearest rank, and a row per scenario with
// "–" where no failover happened.
func TestTable(t *testing.T) {
	ds := []time.Duration{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}
	if p50, p99 := percentile(ds, 50), percentile(ds, 99); p50 != 5 || p99 != 10 {
		t.Errorf("p50, p99 of 1..10 = %d, %d; want 5, 10", p50, p99)
	}
	if p := percentile(ds[:1], 50); p != 1 {
		t.Errorf("p50 of one = %d; want 1", p)
	}
	tab := table([]row{
		{name: "a", fault: "f", checks: "C1", result: "pass", o: &outcome{terms: 3, failovers: []time.Duration{20 * time.Millisecond, 10 * time.Millisecond}}},
		{name: "b", fault: "g", checks: "C2", result: "caught", o: &outcome{terms: 1}},
	}, time.Minute)
	for _, want := range []string{"| a | f | C1 | pass | 3 | 2 | 10ms / 20ms |", "| b | g | C2 | caught | 1 | 0 | – |"} {
		if !strings.Contains(tab, want) {
			t.Errorf("table lacks %q:\n%s", want, tab)
		}
	}
}
