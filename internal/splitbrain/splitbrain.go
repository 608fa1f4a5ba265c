// Package splitbrain judges what one reader of an election (an
// observer's Watch, an elector) knows of its terms for evidence that two
// holders held at once (docs/design.md §6.3). It reports evidence, never a
// guess: a term counts only once the reader knows that its acquisition
// completed, so a read made while a new term's token is being written
// back, a token reported as 0 (not known yet) and a late read never
// count.
package splitbrain

import (
	"fmt"
	"slices"
	"sync"
	"time"
)

// The rules, as redlock.Event.Evidence names them.
const (
	// Overlap: a holder's majority read, made wholly within its own
	// validity, found another value on a majority (election only).
	Overlap = "overlap"
	// Token: a completed term's token not above that of a term completed
	// and seen on a majority before it.
	Token = "token"
)

// keep is how many announced values a Witness remembers: the terms
// whose acquire notices came last.
const keep = 8

// Witness keeps, for one reader of one election, the terms it knows
// completed, and checks each new one against them. The zero Witness is
// ready; it is safe for concurrent use.
type Witness struct {
	mu        sync.Mutex
	announced []string // values whose acquire notice came, newest last
	last      term     // the completed term with the highest token seen
	alarmed   string   // the value last reported, reported once
}

// term is a completed term, seen on a majority at time at.
type term struct {
	value string
	token uint64
	at    time.Time
}

// Announced records an acquire notice of value: a lease publishes it
// once its acquisition completed (its token handed out), so a majority
// read that begins after it and finds value on a majority reads its
// exact token (docs/design.md §4.4). A forged notice can only make
// a term in flight count; the notices' writers are trusted as the
// nodes' are.
func (w *Witness) Announced(value string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if slices.Contains(w.announced, value) {
		return
	}
	if len(w.announced) == keep {
		w.announced = w.announced[1:]
	}
	w.announced = append(w.announced, value)
}

// Read checks a majority read that began at start and ended at end and
// found value on a majority with token. It returns the evidence, or nil:
// a read of a term not announced before the read began, a token of 0, or
// a term the reader saw complete first never is. exact says that every
// node answered and votes: only then is the token exactly the term's
// (without, a copy granted late may show a counter above it, with other
// nodes silent or quarantined), and only then may the term become the
// reference that later terms are checked against. A token read is never
// below the term's once it completed, so any read may be checked.
func (w *Witness) Read(value string, token uint64, start, end time.Time, exact bool) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if value == "" || token == 0 || !slices.Contains(w.announced, value) {
		return nil
	}
	return w.completed(term{value: value, token: token, at: end}, start, exact)
}

// Own records a term of the reader's own (an elector's), begun at start
// with its token: completed by definition, on a majority at start.
func (w *Witness) Own(value string, token uint64, start time.Time) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if token == 0 {
		return nil
	}
	return w.completed(term{value: value, token: token, at: start}, start, true)
}

// Reference returns the term later ones are checked against: the
// completed term with the highest exact token seen ("" when none yet).
func (w *Witness) Reference() (value string, token uint64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.last.value, w.last.token
}

// IsReference reports whether value is the reference (Reference): a
// Watch reads again on an acquire notice of its current term until it is,
// so that a term first read before its notice came is checked at once.
func (w *Witness) IsReference(value string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return value != "" && w.last.value == value
}

// completed checks a completed term t, seen on a majority at an instant
// after since, against the one with the highest token seen, then keeps
// the higher if its token is exact. Tokens of completed terms strictly
// increase in the order in which they are seen on a majority (S5,
// docs/design.md §6.3).
func (w *Witness) completed(t term, since time.Time, exact bool) error {
	var err error
	l := w.last
	if l.value != "" && t.value != l.value && l.at.Before(since) && t.token <= l.token && w.alarmed != t.value {
		w.alarmed = t.value
		err = fmt.Errorf("splitbrain: a completed term's token (%d) is not above the token (%d) of a term "+
			"completed and seen on a majority before it: the nodes granted the key without the earlier term's counter", t.token, l.token)
	}
	switch {
	case t.value == l.value:
		w.last.at = later(l.at, t.at)
	case exact && t.token > l.token:
		w.last = t
	}
	return err
}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}
