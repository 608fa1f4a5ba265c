package quorum

import (
	"time"

	"github.com/redlease/redlease/internal/logx"
)

// TimeoutError is the error of a node that did not answer within the
// client's NodeTimeout, or within the longer wait of one round. It is a
// timeout: Timeout and Temporary report true, as a net.Error's do.
type TimeoutError struct {
	D           time.Duration // the wait that ran out
	NodeTimeout bool          // D is the client's NodeTimeout
}

// Error says how long the node was waited for.
func (e TimeoutError) Error() string {
	d := logx.RoundDuration(e.D).String() // a call's wait may be a fraction: 114.833333ms
	if e.NodeTimeout {
		return "no answer within NodeTimeout (" + d + ")"
	}
	return "no answer within " + d
}

// Timeout reports true: the wait ran out.
func (e TimeoutError) Timeout() bool { return true }

// Temporary reports true: the node may answer the next request.
func (e TimeoutError) Temporary() bool { return true }
