package splitbrain

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The token rule: only terms known to have completed count, and only
// against a term seen on a majority before the read began.
// witnessCase is a history of steps for a Witness, and whether its last
// step is evidence of two holders.
type witnessCase struct {
	name  string
	steps func(w *Witness) error // the last step's evidence
	alarm bool
}

// offset is t0 plus ms milliseconds.
func offset(t0 time.Time, ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }

// readCases are histories of reads only.
func readCases(t *testing.T, t0 time.Time) []witnessCase {
	at := func(ms int) time.Time { return offset(t0, ms) }
	return []witnessCase{
		{"increasing tokens", func(w *Witness) error {
			w.Announced("a")
			w.Announced("b")
			require.NoError(t, w.Read("a", 5, at(0), at(1), true))
			return w.Read("b", 6, at(2), at(3), true)
		}, false},
		{"a completed term below an earlier one", func(w *Witness) error {
			w.Announced("a")
			w.Announced("b")
			require.NoError(t, w.Read("a", 5, at(0), at(1), true))
			return w.Read("b", 5, at(2), at(3), true)
		}, true},
		{"not announced: its write-back may be on its way", func(w *Witness) error {
			w.Announced("a")
			require.NoError(t, w.Read("a", 5, at(0), at(1), true))
			return w.Read("b", 3, at(2), at(3), true)
		}, false},
		{"token 0: not known yet", func(w *Witness) error {
			w.Announced("a")
			w.Announced("b")
			require.NoError(t, w.Read("a", 5, at(0), at(1), true))
			return w.Read("b", 0, at(2), at(3), true)
		}, false},
		{"a late read, begun before the other ended", func(w *Witness) error {
			w.Announced("a")
			w.Announced("b")
			require.NoError(t, w.Read("a", 5, at(0), at(10), true))
			return w.Read("b", 4, at(5), at(11), true)
		}, false},
		{"the earlier term read again", func(w *Witness) error {
			w.Announced("a")
			w.Announced("b")
			require.NoError(t, w.Read("b", 4, at(0), at(1), true))
			require.NoError(t, w.Read("a", 5, at(2), at(3), true))
			return w.Read("a", 5, at(4), at(5), true)
		}, false},
		{"an inexact read is no reference: a late copy's counter above the token", func(w *Witness) error {
			w.Announced("a")
			w.Announced("b")
			require.NoError(t, w.Read("a", 9, at(0), at(1), false))
			return w.Read("b", 6, at(2), at(3), true)
		}, false},
		{"an inexact read is checked: its token is never below", func(w *Witness) error {
			w.Announced("a")
			w.Announced("b")
			require.NoError(t, w.Read("a", 5, at(0), at(1), true))
			return w.Read("b", 5, at(2), at(3), false)
		}, true},
	}
}

// ownCases are histories with the witness's own terms.
func ownCases(t *testing.T, t0 time.Time) []witnessCase {
	at := func(ms int) time.Time { return offset(t0, ms) }
	return []witnessCase{
		{"own terms: a later one below", func(w *Witness) error {
			require.NoError(t, w.Own("a", 7, at(0)))
			return w.Own("b", 7, at(5))
		}, true},
		{"own term above what was read", func(w *Witness) error {
			w.Announced("a")
			require.NoError(t, w.Read("a", 7, at(0), at(1), true))
			return w.Own("b", 8, at(5))
		}, false},
		{"a read below an own term", func(w *Witness) error {
			w.Announced("b")
			require.NoError(t, w.Own("a", 7, at(0)))
			return w.Read("b", 2, at(5), at(6), true)
		}, true},
	}
}

func TestWitness(t *testing.T) {
	t0 := time.Now()
	for _, tc := range append(readCases(t, t0), ownCases(t, t0)...) {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.steps(&Witness{})
			if tc.alarm {
				assert.Error(t, err)
			} else {
				assert.NoError(t, err)
			}
		})
	}
}

// One alarm per term, however often it is read; the highest token stays
// the reference.
func TestWitnessOnceAndBounded(t *testing.T) {
	w := &Witness{}
	t0 := time.Now()
	require.NoError(t, w.Own("a", 9, t0))
	w.Announced("b")
	require.Error(t, w.Read("b", 3, t0.Add(time.Millisecond), t0.Add(2*time.Millisecond), true))
	require.NoError(t, w.Read("b", 3, t0.Add(3*time.Millisecond), t0.Add(4*time.Millisecond), true), "reported once")
	for i := range keep {
		w.Announced(string(rune('c' + i)))
	}
	assert.NotContains(t, w.announced, "b", "the oldest announcement is forgotten")
	assert.Len(t, w.announced, keep)
}
