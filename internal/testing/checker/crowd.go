package checker

import (
	"cmp"
	"slices"
)

// Crowd names a tenure that began while K or more others held, K being
// the most a semaphore allows at once: Later, the tenure that made one too
// many, and Held, the tenures it overlapped (ascending).
type Crowd struct {
	Later int
	Held  []int
}

// OverK checks a semaphore's S1 over ts: at no instant do more than k
// tenures hold (Start included, End excluded: a tenure that begins as
// another ends does not overlap it). It returns one Crowd per tenure that
// began while k others held, in order of start; with k = 1 it finds what
// [Overlaps] finds. ts may be in any order; the indexes are into ts.
// Tenures of one permit must not overlap either (S1 per permit): check
// them with Overlaps, and their tokens with [NotIncreasing].
func OverK(ts []Tenure, k int) []Crowd {
	order := make([]int, len(ts))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return ts[a].Start.Compare(ts[b].Start) })
	var out []Crowd
	var held []int // tenures begun so far that have not ended yet
	for _, i := range order {
		held = slices.DeleteFunc(held, func(j int) bool { return !ts[j].End.After(ts[i].Start) })
		if len(held) >= k {
			crowd := slices.Clone(held)
			slices.SortFunc(crowd, cmp.Compare)
			out = append(out, Crowd{Later: i, Held: crowd})
		}
		held = append(held, i)
	}
	return out
}
