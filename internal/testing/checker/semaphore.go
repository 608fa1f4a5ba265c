package checker

import (
	"fmt"
	"slices"
	"strings"
)

// ByPermit splits the terms of a semaphore's history by the permit they
// held (Term.Permit), in order of permit, each group in the order of ts:
// per permit, terms are a lease's, which C1 and C2 judge (S1 and S5 per
// permit, docs/design.md §5.3).
func ByPermit(ts []*Term) [][]*Term {
	var out [][]*Term
	var permits []int
	for _, tm := range ts {
		i, found := slices.BinarySearch(permits, tm.Permit)
		if !found {
			permits = slices.Insert(permits, i, tm.Permit)
			out = slices.Insert(out, i, nil)
		}
		out[i] = append(out[i], tm)
	}
	return out
}

// CK: at no instant do more than k terms hold, k being the semaphore's
// permits (S1 for a semaphore, docs/design.md §5.3): [OverK] over the
// tenures C1 judges (from a term's start to its last belief instant).
func CK(ts []*Term, k int) []string {
	var out []string
	for _, c := range OverK(tenures(ts), k) {
		later := ts[c.Later]
		held := make([]string, len(c.Held))
		for i, j := range c.Held {
			held[i] = fmt.Sprintf("%s on permit %d (believed it held until %s)", ts[j], ts[j].Permit, ms(ts[j].Last))
		}
		out = append(out, fmt.Sprintf("CK: %s on permit %d began at %s while %d held (K = %d): %s",
			later, later.Permit, ms(later.TS), len(c.Held), k, strings.Join(held, "; ")))
	}
	return out
}

// PerPermit runs check over the terms of each permit (ByPermit), and
// names the permit in each violation it returns.
func PerPermit(ts []*Term, check func([]*Term) []string) []string {
	var out []string
	for _, per := range ByPermit(ts) {
		for _, s := range check(per) {
			out = append(out, fmt.Sprintf("permit %d: %s", per[0].Permit, s))
		}
	}
	return out
}

// Semaphore judges the history of a semaphore of k permits: CK over all
// its terms, and C1 (and C2, with fencing) per permit; orphans are
// Terms' (C1 violations).
func Semaphore(ts []*Term, orphans []string, k int, fencing bool) []string {
	out := slices.Concat(slices.Clone(orphans), CK(ts, k))
	out = append(out, PerPermit(ts, func(per []*Term) []string { return C1(per, nil) })...)
	if fencing {
		out = append(out, PerPermit(ts, C2)...)
	}
	return out
}
