package redlock

import (
	"strings"
	"time"
)

// Where a lock's copies are (docs/design.md §4.3): every answer to an
// extend of a lock says, node by node, whether the node still holds its
// copy (a yes) or lost it (a no: the key expired or was deleted there,
// and an extend never re-creates it, S4; a restore puts it back where it
// can, restore.go). A lock that lost copies stays
// held while a majority extends it, but with fewer spare copies, nodes
// beyond the majority it needs, to lose before it cannot be extended at
// all. The holder learns it from the answers of its extends (Lock.Extend
// and ExtendAll, the answers that came after the call returned included),
// logs each change of the number of nodes that hold the copy once, when it
// learns it, and reports the spare count on every EventExtend
// (Event.Spare). A node that gives no answer (down, paused, quarantined)
// counts as holding until it answers. A node's answer counts only if no
// answer of a later extend of the lock was noted for that node: a yes that
// comes late, after a later extend's no (an older request the node ran
// before the copy went), does not say the copy came back.

// noteCopies records the answers of an extend of l that started at t0
// (answers[i] is l.nodes[i]'s; errors say nothing) and logs a change of
// the number of nodes holding the copy.
func (l *Lock) noteCopies(t0 time.Time, answers []answer) {
	l.mu.Lock()
	before, _ := l.holdingLocked()
	for i, a := range answers {
		l.noteCopyLocked(t0, i, a.vote)
	}
	l.logCopiesUnlock(before, "lock copy back on a node")
}

// noteCopy is noteCopies for one node's answer, i its index in l.nodes
// (an answer that came after its extend returned).
func (l *Lock) noteCopy(t0 time.Time, i int, v vote) {
	l.mu.Lock()
	before, _ := l.holdingLocked()
	l.noteCopyLocked(t0, i, v)
	l.logCopiesUnlock(before, "lock copy back on a node")
}

// noteRestored records that node i holds l's copy again: a restore sent
// at t made it (restore.go); logged once at Info.
func (l *Lock) noteRestored(t time.Time, i int) {
	l.mu.Lock()
	before, _ := l.holdingLocked()
	l.noteCopyLocked(t, i, voteYes)
	l.logCopiesUnlock(before, "lock copy restored on a node")
}

// noteCopyLocked records node i's vote v in an extend that started at t0:
// a yes means it holds the copy, a no that it lost it; an answer of an
// extend older than the one last noted for node i is passed over. Called
// with l.mu held.
func (l *Lock) noteCopyLocked(t0 time.Time, i int, v vote) {
	if v != voteYes && v != voteNo {
		return
	}
	if l.notedAt == nil {
		l.notedAt = make([]time.Time, len(l.nodes))
	}
	if t0.Before(l.notedAt[i]) {
		return
	}
	l.notedAt[i] = t0
	if v == voteYes && t0.Equal(l.validFrom) && l.backed != nil {
		l.backed[i] = true // a late yes to the call that set validUntil
	}
	gone := v == voteNo
	if l.lost == nil {
		if !gone {
			return
		}
		l.lost = make([]bool, len(l.nodes)) // only for a lock that lost a copy
	}
	l.lost[i] = gone
}

// logCopiesUnlock releases l.mu, which the caller holds, and logs the
// number of nodes that hold the copy when it differs from before: a
// warning when it fell, at Info with message back when it rose (a late
// acquire request that made a copy after the node answered no, or a
// restore). A released lock logs nothing,
// nor one that a majority no longer holds (its extend fails, with every
// node's answer in the error; a lease logs its loss).
func (l *Lock) logCopiesUnlock(before int, back string) {
	holding, spare := l.holdingLocked()
	if holding == before || l.released || holding < l.c.quorum {
		l.mu.Unlock()
		return
	}
	var lostOn []string
	for i, gone := range l.lost {
		if gone {
			lostOn = append(lostOn, l.nodes[i].name())
		}
	}
	l.mu.Unlock()
	args := []any{"key", l.key, "token", l.token, "holding", holding, "nodes", len(l.nodes), "spare", spare,
		"lost_on", strings.Join(lostOn, ", ")}
	switch {
	case holding > before:
		l.c.log.Info(back, args...)
	case spare == 0:
		l.c.log.Warn("lock copy lost on a node: held on a bare majority, no spare", args...)
	default:
		l.c.log.Warn("lock copy lost on a node: held on fewer nodes", args...)
	}
}

// holdingLocked returns how many of l's nodes are not known to have lost
// the copy, and how many of those are beyond the quorum (0 at least).
// Called with l.mu held.
func (l *Lock) holdingLocked() (holding, spare int) {
	holding = len(l.nodes)
	for _, gone := range l.lost {
		if gone {
			holding--
		}
	}
	return holding, max(0, holding-l.c.quorum)
}

// spare is the lock's spare count, for Event.Spare.
func (l *Lock) spare() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	_, spare := l.holdingLocked()
	return spare
}
