package redlock

import (
	"context"
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSlot(t *testing.T) {
	assert.Equal(t, uint16(0x31C3), crc16("123456789"), "CRC-16/XMODEM check value")
	assert.Equal(t, uint16(12182), Slot("foo"))
	assert.Equal(t, Slot("{user1000}.following"), Slot("{user1000}.followers"))
	assert.Equal(t, Slot("user1000"), Slot("{user1000}.following"))
	assert.Equal(t, Slot("foo{}{bar}"), crc16("foo{}{bar}")%16384, "an empty tag hashes the whole key")
	assert.Equal(t, Slot("bar"), Slot("foo{bar}{zap}"), "the first tag counts")
}

func TestClusterTags(t *testing.T) {
	for _, n := range []int{1, 3, 5, 7} {
		seen := map[uint16]bool{}
		for i := range n {
			tag := ClusterTag(i, n)
			assert.Equal(t, tag, ClusterTag(i, n), "a pure function of (i, n)")
			s := Slot(tag)
			lo, hi := uint16(i*16384/n), uint16((i+1)*16384/n)
			assert.True(t, s >= lo && s < hi, "copy %d of %d: slot %d outside [%d, %d)", i, n, s, lo, hi)
			assert.False(t, seen[s])
			seen[s] = true
		}
	}
	assert.Equal(t, []uint16{2730, 8192, 13653}, []uint16{Slot(ClusterTag(0, 3)), Slot(ClusterTag(1, 3)), Slot(ClusterTag(2, 3))})
}

func TestNewClusterArguments(t *testing.T) {
	_, err := NewCluster(context.Background(), Config{}, nil, 3)
	require.ErrorIs(t, err, ErrInvalidConfig)
	assert.Contains(t, err.Error(), "nil cluster client")
}

func TestNewClusterEvenReplicas(t *testing.T) {
	cc := redis.NewClusterClient(&redis.ClusterOptions{Addrs: []string{"127.0.0.1:1"}})
	defer cc.Close()
	for _, n := range []int{2, 4, -1, 17} {
		_, err := NewCluster(context.Background(), Config{}, cc, n)
		require.ErrorIs(t, err, ErrInvalidConfig)
		assert.Contains(t, err.Error(), "replicas (")
	}
}
