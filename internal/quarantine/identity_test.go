package quarantine

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestIdentityObserve(t *testing.T) {
	var id Identity
	a, b := Incarnation{0x1a1, 100}, Incarnation{0x2b2, 200}
	_, changed := id.Observe(a)
	assert.False(t, changed, "the first marker seen is no change")
	_, changed = id.Observe(Incarnation{})
	assert.False(t, changed, "no marker (quarantine off, an error) is no change")
	prev, changed := id.Observe(b)
	assert.True(t, changed)
	assert.Equal(t, a, prev)
	_, changed = id.Observe(a)
	assert.False(t, changed, "a late answer from before the change is not another change")
	_, changed = id.Observe(b)
	assert.False(t, changed)

	assert.True(t, id.FirstRaise(200))
	assert.False(t, id.FirstRaise(200))
	assert.True(t, id.FirstRaise(300))
}

func TestRunIDText(t *testing.T) {
	assert.Equal(t, "00000001a2b3...", RunIDText(0x1a2b3))
}
