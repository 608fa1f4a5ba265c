package notice

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestSteerRoundTrip(t *testing.T) {
	since := time.UnixMilli(1_790_000_000_123)
	for _, m := range []Message{
		{Kind: Handover, ID: "web 2&x", Window: 400 * time.Millisecond},
		{Kind: Candidate, ID: "web-1", Window: 10 * time.Second, Priority: -3, Since: since},
		{Kind: Resign, Value: "rl1:" + testNonce + ":id=web-1", ID: "web-2"},
		{Kind: Roll},
	} {
		got := Parse(m.Encode())
		assert.Equal(t, m.Kind, got.Kind, "payload %q", m.Encode())
		assert.Equal(t, m.ID, got.ID)
		assert.Equal(t, m.Value, got.Value)
		assert.Equal(t, m.Window, got.Window)
		assert.Equal(t, m.Priority, got.Priority)
		assert.True(t, m.Since.Equal(got.Since), "since %v, want %v", got.Since, m.Since)
	}
}

func TestSteerMalformed(t *testing.T) {
	for _, p := range []string{
		"handover", "handover 100", "handover 0 b", "handover -5 b", "handover x b", "handover 100 ",
		"handover 100 b c", "candidate 100 1 2", "candidate 100 x 2 a", "candidate 100 1 y a",
		"resign  b", "resign v", "resign v %zz", "handovers 100 b",
	} {
		assert.Equal(t, Message{Kind: Other, Value: p}, Parse(p), "payload %q", p)
	}
}
