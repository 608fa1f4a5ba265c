package fence

import (
	"context"
	"fmt"
	"os"
	"strconv"
)

// tokenKey is the context key of [WithToken].
type tokenKey struct{}

// WithToken returns a copy of ctx that carries token (see [TokenFrom]).
// The election sets it on every term's context (election.Config
// OnElected), so that code running in the term passes it to a guard
// without copying it by hand. A zero token is not stored: TokenFrom then
// reports none.
func WithToken(ctx context.Context, token uint64) context.Context {
	if token == 0 {
		return ctx
	}
	return context.WithValue(ctx, tokenKey{}, token)
}

// TokenFrom returns the fencing token ctx carries ([WithToken]) and
// whether it carries one. The token stays readable after ctx is cancelled:
// a write made with it after the term ended is what a guard refuses.
func TokenFrom(ctx context.Context) (uint64, bool) {
	t, ok := ctx.Value(tokenKey{}).(uint64)
	return t, ok
}

// EnvToken is the environment variable in which `redlease run` gives its
// child the term's fencing token.
const EnvToken = "REDLEASE_TOKEN"

// TokenFromEnv reads the fencing token `redlease run` gave this process
// in [EnvToken]. It fails, naming the value, when the variable is unset,
// not a decimal number, or 0.
func TokenFromEnv() (uint64, error) {
	v, ok := os.LookupEnv(EnvToken)
	if !ok {
		return 0, fmt.Errorf("%w: %s is not set (is this process run by `redlease run`?)", ErrInvalidToken, EnvToken)
	}
	t, err := strconv.ParseUint(v, 10, 64)
	if err != nil || t == 0 {
		return 0, fmt.Errorf("%w: %s=%q is not a positive decimal token", ErrInvalidToken, EnvToken, v)
	}
	return t, nil
}
