package election

import (
	"errors"
	"fmt"
)

// Sentinel errors. Errors returned by this package wrap one of them, or an
// error of the packages below (redlock.ErrInvalidArgument for a bad
// [Config] or a second [Elector.Run]; lease.ErrLeaseLost as a demotion
// cause) or the context's error given to Run, so callers test with
// errors.Is.
var (
	// ErrResigned: the term was ended by [Elector.Resign] (the demotion
	// cause).
	ErrResigned = errors.New("election: resigned")

	// ErrCallbackPanicked: OnElected panicked, and the term ended with an
	// error wrapping it as its cause; its message names the callback and
	// gives the value it panicked with and the goroutine's stack.
	ErrCallbackPanicked = errors.New("election: callback panicked")

	// ErrUnhealthy: [Elector.Healthy] found the elector leading past its
	// term's deadline, or a term's work outliving the term.
	ErrUnhealthy = errors.New("election: unhealthy")
)

// callbackPanic is a recovered panic of a callback: the cause of a term
// ended by a panic in OnElected. It matches [ErrCallbackPanicked].
type callbackPanic struct {
	callback string // "OnElected"
	value    any    // what the callback panicked with
	stack    []byte // the goroutine's stack at the panic
}

func (p *callbackPanic) Error() string {
	return fmt.Sprintf("%v: %s: %v\n%s", ErrCallbackPanicked, p.callback, p.value, p.stack)
}

func (p *callbackPanic) Unwrap() error { return ErrCallbackPanicked }
