// Package backoff is the one place where redlease draws random delays: the
// jitter that desynchronises contenders, and the exponential backoff of
// retries after failures. Every package's retry loop uses it.
//
// Its delays are those of docs/design.md §4.2 (Acquire) and §6.1
// (standbys).
package backoff

import (
	"math/rand/v2"
	"time"
)

// Jitter returns a uniformly random duration in [d/2, d*3/2]; 0 for d <= 0.
func Jitter(d time.Duration) time.Duration {
	if d <= 0 {
		return 0
	}
	return Uniform(d/2, d/2+d)
}

// Uniform returns a uniformly random duration in [lo, hi]; lo when hi <= lo.
func Uniform(lo, hi time.Duration) time.Duration {
	if hi <= lo {
		return lo
	}
	return lo + rand.N(hi-lo+1)
}

// Factor is how much an Exp's delay grows per failure.
const Factor = 2

// Exp is an exponential backoff with jitter and a cap: the n-th delay
// (from 0) is Jitter(min(Base * Factor^n, Cap)). The zero Cap means
// 8 * Base. An Exp is made fresh for each sequence of retries (a counter
// shared across calls would make one caller's failures slow another's
// retries down) and is used by one goroutine.
type Exp struct {
	Base, Cap time.Duration
	cur       time.Duration
}

// Next returns the delay before the next retry, and grows the next one.
func (e *Exp) Next() time.Duration {
	limit := e.Cap
	if limit <= 0 {
		limit = 8 * e.Base
	}
	if e.cur <= 0 {
		e.cur = e.Base
	}
	d := min(e.cur, limit)
	if e.cur < limit {
		e.cur *= Factor
	}
	return Jitter(d)
}

// Reset makes the next delay Base again (after a success).
func (e *Exp) Reset() { e.cur = 0 }
