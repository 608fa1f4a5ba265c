package redlock

import (
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
)

// Closing without waiting on a silent node (docs/design.md §4.3, Close).
//
// A request's context ends at its deadline, but a go-redis client that
// was not built with ContextTimeoutEnabled goes on reading the socket
// until its ReadTimeout (3s by default, and again for a straggler's
// release): a node that accepts connections and never answers (a paused
// server) would hold Close for seconds. So Close waits for the requests
// in flight only for closeGrace, time for a node that answers to finish
// them by their own deadlines; then it closes the go-redis clients it
// owns (Dial's), which ends the requests stuck on them at once with an
// error, and waits for those as long again. A Client made by New does not
// own its clients: its stuck requests end at their go-redis client's
// socket timeouts, or as soon as the caller closes those clients. A notice
// subscription's connection set-up (notice.go) is not cut by closing its
// go-redis client (the connection is not the pool's until it is set up):
// it ends at the socket timeouts.

// closeGraceMin is the shortest closeGrace: a node that answers does so
// well within it, even on a loaded machine.
const closeGraceMin = 250 * time.Millisecond

// closeGrace is how long Close waits for the requests in flight before it
// stops waiting for those stuck on a silent node: a straggler's own
// deadline and its late release's, each NodeTimeout (a longer wait than
// NodeTimeout, as the lease's refreshes ask, is cut at closeGrace too),
// at least closeGraceMin.
func closeGrace(nodeTimeout time.Duration) time.Duration {
	return max(2*nodeTimeout, closeGraceMin)
}

// drained returns a channel closed when every goroutine that wg counts
// has ended. The goroutine that waits for them ends with them.
func drained(wg *sync.WaitGroup) <-chan struct{} {
	done := make(chan struct{})
	go func() {
		wg.Wait()
		close(done)
	}()
	return done
}

// waitFor reports whether done was closed within d.
func waitFor(done <-chan struct{}, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-done:
		return true
	case <-t.C:
		return false
	}
}

// quietLogger is the Client's logger, silent once Close has returned
// without waiting for every request (a straggler that ends later logs
// nothing: its caller may be gone, a test's logger with it).
type quietLogger struct {
	hclog.Logger
	c *Client
}

func (l quietLogger) Log(level hclog.Level, msg string, args ...any) {
	if !l.c.left.Load() {
		l.Logger.Log(level, msg, args...)
	}
}
func (l quietLogger) Trace(msg string, args ...any) { l.Log(hclog.Trace, msg, args...) }
func (l quietLogger) Debug(msg string, args ...any) { l.Log(hclog.Debug, msg, args...) }
func (l quietLogger) Info(msg string, args ...any)  { l.Log(hclog.Info, msg, args...) }
func (l quietLogger) Warn(msg string, args ...any)  { l.Log(hclog.Warn, msg, args...) }
func (l quietLogger) Error(msg string, args ...any) { l.Log(hclog.Error, msg, args...) }
