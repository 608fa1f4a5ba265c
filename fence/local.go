package fence

import (
	"context"
	"sync"
)

// Guard runs a write behind the fence check of a resource, atomically
// with it: write runs only if token is not below the highest token the
// resource has accepted, and no write of a lower token can run after it.
// It is the seam of [Middleware], for servers that own their state;
// [Local] is the implementation for state in memory.
type Guard interface {
	// Do runs write if token is not below resource's highest, which it
	// raises to token. It returns a [*StaleTokenError] (write not run)
	// when token is lower, write's error otherwise.
	Do(ctx context.Context, resource string, token uint64, write func(context.Context) error) error
}

var _ Guard = (*Local)(nil)

// Local is the guard of a process that owns its resources' state (in
// memory, or a file only it writes): the check and the write behind one
// lock per resource, so that writes of one resource run one at a time, in
// an order in which tokens never go down. Resources are independent. The
// zero value is ready to use; a Local must not be copied after first use.
// It keeps one small entry per resource it has seen, for its lifetime.
// A Local is safe for concurrent use.
type Local struct {
	mu sync.Mutex
	rs map[string]*localResource
}

type localResource struct {
	mu      sync.Mutex // held across the check and the write
	highest uint64
}

// Do runs write under the resource's lock if token is not below the
// highest the resource has accepted, after raising the highest to token
// (even if write then fails: a token below one that was presented is
// stale whatever became of that write). It returns a
// [*StaleTokenError] without running write when token is lower, the
// context's error when ctx ended before, and write's error otherwise.
func (l *Local) Do(ctx context.Context, resource string, token uint64, write func(context.Context) error) error {
	if err := validate(resource, token); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	r := l.resource(resource)
	r.mu.Lock()
	defer r.mu.Unlock()
	if token < r.highest {
		return &StaleTokenError{Resource: resource, Token: token, Highest: r.highest}
	}
	r.highest = token
	return write(ctx)
}

// Highest returns the highest token resource has accepted, 0 if none.
func (l *Local) Highest(resource string) uint64 {
	r := l.resource(resource)
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.highest
}

func (l *Local) resource(name string) *localResource {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.rs == nil {
		l.rs = map[string]*localResource{}
	}
	r, ok := l.rs[name]
	if !ok {
		r = &localResource{}
		l.rs[name] = r
	}
	return r
}
