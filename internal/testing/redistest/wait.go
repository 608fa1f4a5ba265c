package redistest

import (
	"testing"
	"time"
)

// Eventually calls cond every tick until it returns nil, and fails the test
// with what and cond's last error once within has passed: the wait for a
// state of real servers (a failover, a migration, a resync), which says
// why it is not there yet.
func Eventually(t testing.TB, within, tick time.Duration, what string, cond func() error) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		err := cond()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %v: %v", what, within, err)
		}
		time.Sleep(tick)
	}
}
