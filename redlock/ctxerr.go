package redlock

import (
	"context"
	"errors"
)

// A call whose context ended says so: its error matches ctx.Err()
// (context.Canceled or context.DeadlineExceeded), joined to the call's own
// error so that its sentinel and *QuorumError stay in the chain (issue #32).
// What must be done whatever the caller's context (a release's deletion,
// S8) is still done; only the error tells that the caller stopped waiting.

// joinCtx returns err joined with ctx's error when ctx has ended and err
// does not match it yet; err as it is otherwise (nil stays nil).
func joinCtx(ctx context.Context, err error) error {
	if err == nil {
		return nil
	}
	if cerr := ctx.Err(); cerr != nil && !errors.Is(err, cerr) {
		return errors.Join(err, cerr)
	}
	return err
}
