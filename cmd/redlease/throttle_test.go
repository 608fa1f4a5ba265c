package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/redlease/redlease/internal/rediserr"
	"github.com/redlease/redlease/internal/testing/testnodes"
	"github.com/redlease/redlease/redlock"
)

func TestThrottle(t *testing.T) {
	now := time.Unix(0, 0)
	th := newThrottle(10 * time.Second)
	th.now = func() time.Time { return now }
	step := func(d time.Duration, key string) (bool, int) {
		now = now.Add(d)
		return th.allow(key)
	}
	log, held := step(0, "a")
	assert.True(t, log, "a first occurrence is logged")
	assert.Zero(t, held)
	for range 39 { // 4 a second for ~10s: held back
		log, _ = step(250*time.Millisecond, "a")
		assert.False(t, log)
	}
	log, _ = step(0, "b")
	assert.True(t, log, "another key is logged at once")
	log, held = step(250*time.Millisecond, "a")
	assert.True(t, log, "one summary per interval")
	assert.Equal(t, 40, held)
	log, held = step(25*time.Second, "a")
	assert.True(t, log, "a key not seen for two intervals starts afresh")
	assert.Zero(t, held)

}

// Warnings are throttled per cause, and a cause comes from what an error
// is, not from its text: the same cause with other ports or durations is
// one key, other causes are other keys.
func TestCause(t *testing.T) {
	timeout := func(port int) error {
		return fmt.Errorf("node 127.0.0.1:%d: %w", port, &net.OpError{Op: "read", Net: "tcp", Err: os.ErrDeadlineExceeded})
	}
	refused := fmt.Errorf("dial: %w", &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED})
	assert.Equal(t, "timeout", cause(timeout(5432)))
	assert.Equal(t, cause(timeout(5432)), cause(timeout(6001)))
	assert.Equal(t, "timeout", cause(fmt.Errorf("no answer within 200ms: %w", context.DeadlineExceeded)))
	assert.Equal(t, "connection refused", cause(refused))
	assert.Equal(t, "connection lost", cause(fmt.Errorf("read: %w", io.EOF)))
	assert.Equal(t, "access denied", cause(fmt.Errorf("x: %w", redlock.ErrAccessDenied)))
	assert.Equal(t, cause(rediserr.Classify(testnodes.ReplyError("READONLY You can't write against a read only replica."))),
		cause(rediserr.Classify(testnodes.ReplyError("LOADING Redis is loading the dataset in memory"))), "one class")
	assert.NotEqual(t, cause(rediserr.Classify(testnodes.ReplyError("READONLY You can't write"))),
		cause(rediserr.Classify(testnodes.ReplyError("WRONGTYPE Operation against a key"))))
	assert.Equal(t, "*errors.errorString", cause(errors.New("something else")))
}
