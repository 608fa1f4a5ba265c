package placement

import (
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSlotMaster(t *testing.T) {
	slots := []redis.ClusterSlot{
		{Start: 0, End: 5460, Nodes: []redis.ClusterNode{{Addr: "a:1"}, {Addr: "a-replica:1"}}},
		{Start: 5461, End: 10922, Nodes: []redis.ClusterNode{{Addr: "b:1"}}},
		{Start: 10923, End: 16383}, // no node: not served
	}
	for _, tc := range []struct {
		slot uint16
		want string
	}{{0, "a:1"}, {5460, "a:1"}, {5461, "b:1"}, {10922, "b:1"}} {
		got, err := slotMaster(slots, tc.slot)
		require.NoError(t, err)
		assert.Equal(t, tc.want, got, "slot %d", tc.slot)
	}
	_, err := slotMaster(slots, 12000)
	assert.ErrorContains(t, err, "slot 12000 is not served")
}

func TestMaster(t *testing.T) {
	var m Master
	assert.Empty(t, m.Get(), "none recorded")
	m.Set("a:1")
	assert.Equal(t, "a:1", m.Get())
	m.Set("")
	assert.Empty(t, m.Get(), "unknown again")
}

// Copies of one bucket on one master are named, bucket by bucket.
func TestSharing(t *testing.T) {
	which := sharing(nil, map[string][]string{"a:1": {"0 (slot 1)", "2 (slot 3)"}, "b:1": {"1 (slot 2)"}})
	assert.Equal(t, []string{"copies 0 (slot 1) and 2 (slot 3) on a:1"}, which)
}
