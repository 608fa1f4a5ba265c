package observer

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/redlease/redlease/internal/permitkey"
	"github.com/redlease/redlease/redlock"
)

// readPermits is one read of every permit of a semaphore (Config.Permits):
// a majority read of each permit's key, all at once. Its event lists the
// holders (Event.Holders), or says why who holds is unknown: a permit
// whose read had no majority makes the whole event unknown. The error is
// that of the first read that failed for good (a closed client), or the
// unknown event's.
func (o *Observer) readPermits(ctx context.Context) (Event, error) {
	k := o.cfg.Permits
	holders := make([]redlock.Holder, k)
	errs := make([]error, k)
	var wg sync.WaitGroup
	for i := range k {
		wg.Go(func() { holders[i], errs[i] = o.readPermit(ctx, i) })
	}
	wg.Wait()
	ev := Event{Holders: holders, At: time.Now()}
	for _, err := range errs {
		if final(ctx, err) {
			return ev, err
		}
	}
	if err := errors.Join(errs...); err != nil {
		ev.Holders, ev.Err = nil, err
		return ev, err
	}
	return ev, nil
}

// readPermit reads permit i: its holder, the zero Holder when it is free,
// or an error ([ErrUnknown]: no majority could tell; the context's; a
// closed client).
func (o *Observer) readPermit(ctx context.Context, i int) (redlock.Holder, error) {
	key := permitkey.Key(o.name, i)
	in, err := o.client.Inspect(ctx, key)
	switch {
	case ctx.Err() != nil:
		return redlock.Holder{}, ctxErr(ctx)
	case in == nil:
		return redlock.Holder{}, err
	case err == nil:
		h := in.Holder
		h.Permit = i
		return h, nil
	}
	if err := o.noHolder(in.Nodes); !errors.Is(err, redlock.ErrNoHolder) {
		return redlock.Holder{}, fmt.Errorf("permit %d (%q): %w", i, key, err)
	}
	return redlock.Holder{Key: key, Permit: i}, nil
}

// permitsChanged reports whether any permit has another holder, or the
// same holder with a higher token (read first before its token was
// written back).
func permitsChanged(last, now []redlock.Holder) bool {
	if len(last) != len(now) {
		return true
	}
	for i := range now {
		if last[i].Value != now[i].Value || now[i].Value != "" && now[i].Token > last[i].Token {
			return true
		}
	}
	return false
}

// describePermits is a semaphore's Event.String.
func describePermits(holders []redlock.Holder) string {
	var held []string
	for _, h := range holders {
		if h.Value != "" {
			held = append(held, fmt.Sprintf("%d %s", h.Permit, describe(h)))
		}
	}
	s := fmt.Sprintf("%d of %d permits held (%d free)", len(held), len(holders), len(holders)-len(held))
	if len(held) > 0 {
		s += ": " + strings.Join(held, ", ")
	}
	return s
}

// lapsing is the holder of ev whose key is due to lapse first: the
// leader, or a semaphore's holder of the earliest Expires.
func lapsing(ev Event) redlock.Holder {
	first := ev.Leader
	for _, h := range ev.Holders {
		if !h.Expires.IsZero() && (first.Expires.IsZero() || h.Expires.Before(first.Expires)) {
			first = h
		}
	}
	return first
}
