package redlock

import (
	"context"
	"fmt"
	"math"
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

// The n*B tags of a bucketed layout (docs/design.md §4.11): a pure function of
// (i, b, n, B), spread evenly over the slots, the n copies of a bucket
// 16384/n slots apart (on n different masters under the standard
// contiguous layout), and with one bucket the tags of ClusterTag.
func TestBucketTags(t *testing.T) {
	for _, l := range []struct{ n, buckets int }{{1, 1}, {3, 1}, {3, 16}, {5, 16}, {3, 64}, {15, 16}} {
		n, nb := l.n, l.buckets
		seen := map[uint16]bool{}
		width := 16384 / float64(n*nb)
		for b := range nb {
			for i := range n {
				tag := BucketTag(i, b, n, nb)
				s := Slot(tag)
				k := float64(i*nb + b)
				require.True(t, float64(s) >= math.Floor(k*width) && float64(s) < (k+1)*width,
					"copy %d of bucket %d (n=%d B=%d): slot %d outside the %v-th range", i, b, n, nb, s, k)
				require.False(t, seen[s], "slot %d twice", s)
				seen[s] = true
				if i > 0 {
					gap := int(s) - int(Slot(BucketTag(i-1, b, n, nb)))
					require.InDelta(t, 16384/float64(n), gap, 1, "copies %d and %d of bucket %d", i-1, i, b)
				}
			}
		}
		if nb == 1 {
			for i := range n {
				assert.Equal(t, ClusterTag(i, n), BucketTag(i, 0, n, 1))
			}
		}
	}
	assert.Equal(t, BucketTag(2, 7, 3, 16), BucketTag(2, 7, 3, 16), "a pure function")
	assert.NotEqual(t, BucketTag(0, 0, 3, 16), BucketTag(0, 0, 3, 32), "another layout, other slots")
}

// Bucket spreads keys evenly and is 0 with one bucket.
func TestBucketSpread(t *testing.T) {
	const keys, nb = 16000, 16
	count := make([]int, nb)
	for k := range keys {
		b := Bucket(fmt.Sprintf("job-%d", k), nb)
		require.True(t, b >= 0 && b < nb)
		count[b]++
	}
	for b, c := range count {
		assert.InDelta(t, keys/nb, c, keys/nb/5, "bucket %d", b)
	}
	assert.Equal(t, Bucket("x", 16), Bucket("x", 16))
	assert.Zero(t, Bucket("x", 1))
	assert.Zero(t, Bucket("x", 0))
}

func TestNewClusterBuckets(t *testing.T) {
	cc := redis.NewClusterClient(&redis.ClusterOptions{Addrs: []string{"127.0.0.1:1"}})
	defer cc.Close()
	for _, b := range []int{-1, MaxBuckets + 1} {
		_, err := NewCluster(context.Background(), Config{}, cc, 3, WithBuckets(b))
		require.ErrorIs(t, err, ErrInvalidConfig)
		assert.Contains(t, err.Error(), fmt.Sprintf("buckets (%d) must be from 1 to %d", b, MaxBuckets))
	}
}
