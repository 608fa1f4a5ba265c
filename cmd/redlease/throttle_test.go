package main

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
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

	assert.Equal(t, causeKey("quarantined for 12.345s"), causeKey("quarantined for 3.5s"))
	assert.Equal(t, causeKey("read tcp 127.0.0.1:5432->127.0.0.1:6379: i/o timeout"),
		causeKey("read tcp 127.0.0.1:6001->127.0.0.1:6379: i/o timeout"))
	assert.NotEqual(t, causeKey("connection refused"), causeKey("i/o timeout"))
}
