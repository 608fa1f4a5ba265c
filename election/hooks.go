package election

import (
	"strings"
	"time"

	"github.com/hashicorp/go-hclog"
)

// Hooks receives an elector's measurements, to count and time them in a
// metrics system (Prometheus, expvar, OpenTelemetry) without redlease
// depending on one. The elector calls the hooks synchronously from its own
// goroutines: they must be safe for concurrent use and return at once
// (increment a counter, observe a histogram). Embed [NopHooks] to implement
// only some of them.
type Hooks interface {
	// Elected is called when a term of this elector begins, just before
	// EventElected is sent.
	Elected(t Term)
	// Demoted is called when a term of this elector ended and was
	// released, with why it ended, just before EventDemoted is sent;
	// time.Since(t.Start) is its length.
	Demoted(t Term, cause error)
	// AcquireAttempt is called after every campaign attempt with its
	// duration: err is nil when it won the election, and otherwise says
	// why not (usually: the election is held by another candidate).
	AcquireAttempt(elapsed time.Duration, err error)
	// RefreshFailed is called when a refresh of the leader's term failed
	// and will be retried; the term goes on until its deadline.
	RefreshFailed(err error)
	// EventDropped is called when an event did not fit in the Events
	// buffer (see [Elector.Dropped]).
	EventDropped(ev Event)
}

// NopHooks is a [Hooks] that does nothing: the default. Embed it in a type
// of your own to implement only the hooks you need.
type NopHooks struct{}

// Elected does nothing.
func (NopHooks) Elected(Term) {}

// Demoted does nothing.
func (NopHooks) Demoted(Term, error) {}

// AcquireAttempt does nothing.
func (NopHooks) AcquireAttempt(time.Duration, error) {}

// RefreshFailed does nothing.
func (NopHooks) RefreshFailed(error) {}

// EventDropped does nothing.
func (NopHooks) EventDropped(Event) {}

// hookLogger is the logger given to the term's leases: it passes every
// record on, and reports the lease's failed refreshes to Hooks.RefreshFailed.
// The lease package reports them only in its logs ("refresh failed;
// retrying", with the error under "error"), so this is where they can be
// seen; TestHooks checks that it still works.
type hookLogger struct {
	hclog.Logger
	hooks Hooks
}

func (l hookLogger) Debug(msg string, args ...any) {
	l.observe(msg, args)
	l.Logger.Debug(msg, args...)
}

func (l hookLogger) Log(level hclog.Level, msg string, args ...any) {
	l.observe(msg, args)
	l.Logger.Log(level, msg, args...)
}

func (l hookLogger) observe(msg string, args []any) {
	if !strings.HasPrefix(msg, "refresh failed") {
		return
	}
	for i := 0; i+1 < len(args); i += 2 {
		if k, ok := args[i].(string); ok && k == "error" {
			if err, ok := args[i+1].(error); ok {
				l.hooks.RefreshFailed(err)
			}
			return
		}
	}
}
