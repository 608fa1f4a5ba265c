package notice

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestMessageRoundTrip(t *testing.T) {
	for _, m := range []Message{
		{Kind: Acquired, Value: "rl1:" + testNonce + ":id=web-1"},
		{Kind: Acquired, Value: ""},
		{Kind: Acquired, Value: "a value with spaces and acquired released"},
		{Kind: Released},
		{Kind: Released, Value: "jobs:permit:3"},
		{Kind: Other, Value: "ping"},
	} {
		assert.Equal(t, m, Parse(m.Encode()), "payload %q", m.Encode())
	}
}

func TestParse(t *testing.T) {
	for payload, want := range map[string]Message{
		"released":            {Kind: Released},
		"acquired rl1:n:id=x": {Kind: Acquired, Value: "rl1:n:id=x"},
		"acquired":            {Kind: Other, Value: "acquired"}, // no value: not an acquire notice
		"releasedx":           {Kind: Other, Value: "releasedx"},
		"released jobs":       {Kind: Released, Value: "jobs"}, // a semaphore's permit
		"released ":           {Kind: Other, Value: "released "},
		"":                    {Kind: Other},
	} {
		assert.Equal(t, want, Parse(payload), "payload %q", payload)
	}
	assert.Equal(t, "released", Message{Kind: Released}.Encode())
	assert.Equal(t, "acquired v", Message{Kind: Acquired, Value: "v"}.Encode())
}

func TestChannel(t *testing.T) {
	assert.Equal(t, "app:leader:notice", Channel("app:leader"))
	k, ok := KeyOf(Channel("app:leader"))
	assert.True(t, ok)
	assert.Equal(t, "app:leader", k)
	_, ok = KeyOf("app:leader")
	assert.False(t, ok)
}
