// Package unfenced reads a majority again while it shows a new holder with
// a token that is not above one already seen: the new holder's fencing
// round trip is in flight (docs/design.md §4.5). Package observer (its
// Leader) and election's candidates (who also know their own terms) read
// the same way.
package unfenced

import (
	"context"
	"errors"
	"time"

	"github.com/redlease/redlease/redlock"
)

const (
	// Rereads: reads again of a stale holder, Wait apart and doubling
	// (127ms in all: a loaded host's write-back; 3 reads 1ms apart were
	// too few under load).
	Rereads = 7
	Wait    = time.Millisecond
)

// ErrCut is Read's error when ctx ended while it waited to read again.
var ErrCut = errors.New("unfenced: context ended between reads")

// Read returns read's holder once stale says it is not stale, or read's
// error. A holder still stale after Rereads more reads is returned with
// Token 0 (not known yet, never another term's token) and shown false.
func Read(ctx context.Context, read func() (redlock.Holder, error), stale func(redlock.Holder) bool) (l redlock.Holder, shown bool, err error) {
	for attempt := 0; ; attempt++ {
		l, err := read()
		if err != nil || !stale(l) {
			return l, true, err
		}
		if attempt == Rereads {
			l.Token = 0
			return l, false, nil
		}
		t := time.NewTimer(Wait << attempt)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return redlock.Holder{}, false, ErrCut
		}
	}
}
