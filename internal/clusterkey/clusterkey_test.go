package clusterkey

import (
	"fmt"
	"math"
	"testing"

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
			tag := Tag(i, n)
			assert.Equal(t, tag, Tag(i, n), "a pure function of (i, n)")
			s := Slot(tag)
			lo, hi := uint16(i*16384/n), uint16((i+1)*16384/n)
			assert.True(t, s >= lo && s < hi, "copy %d of %d: slot %d outside [%d, %d)", i, n, s, lo, hi)
			assert.False(t, seen[s])
			seen[s] = true
		}
	}
	assert.Equal(t, []uint16{2730, 8192, 13653}, []uint16{Slot(Tag(0, 3)), Slot(Tag(1, 3)), Slot(Tag(2, 3))})
}

// The n*B tags of a bucketed layout (docs/design.md §4.11): a pure function of
// (i, b, n, B), spread evenly over the slots, the n copies of a bucket
// 16384/n slots apart (on n different masters under the standard
// contiguous layout), and with one bucket the tags of Tag.
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
				assert.Equal(t, Tag(i, n), BucketTag(i, 0, n, 1))
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
