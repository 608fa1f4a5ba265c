package checker

import "time"

// Tenure is one holder's time in office as a test saw it: it held from
// Start until End (End excluded) under Token. Package tests build tenures
// from their callbacks or acquisitions, the fault suite from its history
// (see [Term]); Overlaps and NotIncreasing judge them all alike.
type Tenure struct {
	Start, End time.Time
	Token      uint64
}

// Overlap names two tenures of a slice by index: Later began before
// Earlier, the earlier tenure that ended last, had ended (S1: tenures never
// overlap).
type Overlap struct{ Earlier, Later int }

// Overlaps checks S1 over ts, given in order of start: every tenure must
// begin at or after the end of every earlier one. It returns one Overlap per
// tenure that began too early, naming the earlier tenure that ended last.
func Overlaps(ts []Tenure) []Overlap {
	var out []Overlap
	last := -1 // the earlier tenure that ended last
	for i, tn := range ts {
		if last >= 0 && tn.Start.Before(ts[last].End) {
			out = append(out, Overlap{Earlier: last, Later: i})
		}
		if last < 0 || tn.End.After(ts[last].End) {
			last = i
		}
	}
	return out
}

// NotIncreasing checks S5 over ts, given in order of start: every token
// must be greater than the one of the tenure before it. It returns the
// index of every tenure whose token is not.
func NotIncreasing(ts []Tenure) []int {
	var out []int
	for i := 1; i < len(ts); i++ {
		if ts[i].Token <= ts[i-1].Token {
			out = append(out, i)
		}
	}
	return out
}

// Verdict is what a Fence says of a request.
type Verdict int

// The verdicts of a Fence.
const (
	Admitted Verdict = iota // the token is the highest seen, of its holder
	Stale                   // a token below the highest seen: an older holder
	Repeated                // the highest token, of another holder: a token that cannot tell two holders apart
)

// Fence is the check a fenced resource makes (S5 seen from the resource):
// it keeps the highest token admitted and the holder that used it, refuses
// a lower token, and refuses the same token from another holder. A Fence is
// not safe for concurrent use: its store holds a lock around it.
type Fence struct {
	Highest uint64
	Holder  string // the holder that used Highest; "" before any
}

// Admit judges a request of holder under token and, when it is admitted,
// makes token the highest.
func (f *Fence) Admit(token uint64, holder string) Verdict {
	switch {
	case token < f.Highest:
		return Stale
	case token == f.Highest && f.Holder != "" && holder != f.Holder:
		return Repeated
	}
	f.Highest, f.Holder = token, holder
	return Admitted
}
