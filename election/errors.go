package election

import (
	"errors"
	"fmt"

	"github.com/redlease/redlease/observer"
)

// Sentinel errors. Errors returned by this package wrap one of them, or an
// error of the packages below (lease, redlock), so callers test with
// errors.Is.
var (
	// ErrInvalidConfig: a [Config] is invalid, or does not fit the
	// redlock.Client it is used with. The message names the bad values.
	ErrInvalidConfig = errors.New("election: invalid config")

	// ErrStopped: Run's context ended. Run returns it joined with the
	// context's error and cause; a term ended by it reports it as the
	// demotion cause.
	ErrStopped = errors.New("election: stopped")

	// ErrResigned: the term was ended by [Elector.Resign] (the demotion
	// cause).
	ErrResigned = errors.New("election: resigned")

	// ErrAlreadyRun: [Elector.Run] was called a second time; an Elector
	// campaigns once (make a new one to campaign again).
	ErrAlreadyRun = errors.New("election: Run called twice: an Elector campaigns once; make a new one (election.New) to campaign again")

	// ErrCallbackPanicked: OnElected panicked; the term ended with a
	// *[PanicError] wrapping it as its cause.
	ErrCallbackPanicked = errors.New("election: callback panicked")

	// ErrUnhealthy: [Elector.Healthy] found the elector leading past its
	// term's deadline, or a term's work outliving the term.
	ErrUnhealthy = errors.New("election: unhealthy")
)

// Errors of [Elector.Leader], the same values as observer's.
var (
	// ErrNoLeader: a majority of nodes answered and nobody leads.
	ErrNoLeader = observer.ErrNoLeader
	// ErrUnknown: fewer than a majority of nodes answered; whether
	// somebody leads cannot be told.
	ErrUnknown = observer.ErrUnknown
)

// PanicError is the cause of a term ended by a panic in OnElected. It
// matches [ErrCallbackPanicked].
type PanicError struct {
	Callback string // "OnElected"
	Value    any    // what the callback panicked with
	Stack    []byte // the goroutine's stack at the panic
}

// Error names the callback and what it panicked with.
func (p *PanicError) Error() string {
	return fmt.Sprintf("%v: %s: %v", ErrCallbackPanicked, p.Callback, p.Value)
}

// Unwrap returns [ErrCallbackPanicked].
func (p *PanicError) Unwrap() error { return ErrCallbackPanicked }
