package fence

import (
	"errors"
	"fmt"
)

// Sentinel errors. Every error a guard returns for a refused or invalid
// write wraps one of them (errors.Is).
var (
	// ErrStaleToken: the write's token is below the highest the resource
	// has accepted; the write was not applied. The error is a
	// [*StaleTokenError] naming both tokens.
	ErrStaleToken = errors.New("fence: stale token")
	// ErrInvalidResource: the resource name is empty, or a Redis key a
	// cluster could not keep beside its token key.
	ErrInvalidResource = errors.New("fence: invalid resource")
	// ErrInvalidToken: the token is 0 (fencing off, or no token given),
	// or too large for the store (SQL keeps BIGINT).
	ErrInvalidToken = errors.New("fence: invalid token")
)

// StaleTokenError is the refusal of a write whose Token is below Highest,
// the highest token Resource had accepted when the write was checked. It
// matches [ErrStaleToken] with errors.Is.
type StaleTokenError struct {
	Resource string // the resource (Redis key, SQL resource name, HTTP header)
	Token    uint64 // the refused write's token
	Highest  uint64 // the highest token the resource had accepted, > Token
}

// Error names the resource and both tokens.
func (e *StaleTokenError) Error() string {
	return fmt.Sprintf("fence: stale token %d for resource %q: it has accepted token %d",
		e.Token, e.Resource, e.Highest)
}

// Is reports whether target is [ErrStaleToken].
func (e *StaleTokenError) Is(target error) bool { return target == ErrStaleToken }

// validate refuses an empty resource name and a zero token.
func validate(resource string, token uint64) error {
	if resource == "" {
		return fmt.Errorf("%w: empty resource name (token %d)", ErrInvalidResource, token)
	}
	if token == 0 {
		return fmt.Errorf("%w: token 0 for resource %q (fencing off, or no token given)", ErrInvalidToken, resource)
	}
	return nil
}
