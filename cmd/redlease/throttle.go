package main

import (
	"regexp"
	"sync"
	"time"
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

// digits are folded out of causes: ports, durations and counts change from
// one occurrence to the next ("quarantined for 12.3s", "read tcp
// 127.0.0.1:54321->...: i/o timeout") while the cause stays the same.
var digits = regexp.MustCompile(`[0-9][0-9.]*`)

// causeKey is the part of an error message that names its cause.
func causeKey(msg string) string { return digits.ReplaceAllString(msg, "#") }
