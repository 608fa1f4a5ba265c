package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"syscall"
	"time"

	"github.com/redlease/redlease/internal/rediserr"
	"github.com/redlease/redlease/redlock"
)

// throttle keeps repeated warnings about one cause from flooding the log:
// the first occurrence of a key (a node and a cause) is logged at once,
// then at most one summary per interval says how many more there were.
// A key not seen for two intervals starts afresh. Safe for concurrent use.
type throttle struct {
	every time.Duration
	now   func() time.Time

	mu   sync.Mutex
	keys map[string]*throttled
}

type throttled struct {
	logged time.Time // the last line logged for the key
	seen   time.Time // the last occurrence
	held   int       // occurrences since that line, not logged
}

func newThrottle(every time.Duration) *throttle {
	return &throttle{every: every, now: time.Now, keys: map[string]*throttled{}}
}

// allow records one occurrence of key and reports whether to log it now,
// with how many occurrences were held back since the last line (0 for a
// first occurrence).
func (t *throttle) allow(key string) (log bool, held int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	now := t.now()
	k, ok := t.keys[key]
	if !ok || now.Sub(k.seen) >= 2*t.every {
		t.keys[key] = &throttled{logged: now, seen: now}
		return true, 0
	}
	k.seen = now
	if now.Sub(k.logged) < t.every {
		k.held++
		return false, 0
	}
	held = k.held + 1 // this one included
	k.logged, k.held = now, 0
	return true, held
}

// cause names what err is, from its type and the errors it wraps, never
// from its text: warnings are throttled per node and cause, and a cause
// must stay the same from one occurrence to the next (the text carries
// ports, durations and counts that change).
func cause(err error) string {
	var ne net.Error
	switch {
	case errors.Is(err, context.DeadlineExceeded) || errors.As(err, &ne) && ne.Timeout():
		return "timeout"
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection refused"
	case errors.Is(err, syscall.ECONNRESET) || errors.Is(err, io.EOF) || errors.Is(err, net.ErrClosed):
		return "connection lost"
	case errors.Is(err, redlock.ErrAccessDenied):
		return "access denied"
	}
	if c, ok := rediserr.Of(err); ok {
		return "reply: " + c.String()
	}
	if qe, ok := errors.AsType[*redlock.QuorumError](err); ok {
		return "no majority: " + qe.Op
	}
	for {
		inner := errors.Unwrap(err)
		if inner == nil {
			return fmt.Sprintf("%T", err)
		}
		err = inner
	}
}
