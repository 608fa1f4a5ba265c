// Package hookstest holds a recorder of every event given to
// redlock.Config.Hooks, for the tests of the packages that report events
// and of the adapters.
//
// See docs/design.md §1.2 for the internal packages.
package hookstest

import (
	"slices"
	"sync"

	"github.com/redlease/redlease/redlock"
)

// Recorder keeps every event given to its Observe (a
// redlock.Config.Hooks), in order. It is safe for concurrent use.
type Recorder struct {
	mu     sync.Mutex
	events []redlock.Event
	wake   chan struct{} // closed and replaced at every event
}

// Observe records ev.
func (r *Recorder) Observe(ev redlock.Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, ev)
	if r.wake != nil {
		close(r.wake)
		r.wake = nil
	}
}

// Events returns a copy of the events recorded so far.
func (r *Recorder) Events() []redlock.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.events)
}

// Of returns the events of kind k recorded so far.
func (r *Recorder) Of(k redlock.EventKind) []redlock.Event {
	var out []redlock.Event
	for _, ev := range r.Events() {
		if ev.Kind == k {
			out = append(out, ev)
		}
	}
	return out
}

// Changed returns a channel closed at the next event.
func (r *Recorder) Changed() <-chan struct{} {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.wake == nil {
		r.wake = make(chan struct{})
	}
	return r.wake
}
