// Package named checks the arguments every constructor of a named election
// role takes (election.New, observer.New): a client, and a name that is a
// valid key. It sits above package redlock, whose sentinel error it
// returns.
package named

import (
	"fmt"

	"github.com/redlease/redlease/internal/keycheck"
	"github.com/redlease/redlease/redlock"
)

// Check returns an error matching redlock.ErrInvalidArgument that names
// the problem when client is nil or name is not a valid key (empty, above
// 4 KiB); nil otherwise.
func Check(client *redlock.Client, name string) error {
	if client == nil {
		return fmt.Errorf("%w: nil *redlock.Client", redlock.ErrInvalidArgument)
	}
	if p := keycheck.Problem("election name", name); p != "" {
		return fmt.Errorf("%w: %s", redlock.ErrInvalidArgument, p)
	}
	return nil
}
