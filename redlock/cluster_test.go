package redlock

import (
	"context"
	"fmt"
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/redlease/redlease/internal/clusterkey"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestNewClusterArguments(t *testing.T) {
	_, err := NewCluster(context.Background(), Config{}, nil, 3)
	require.ErrorIs(t, err, ErrInvalidArgument)
	assert.Contains(t, err.Error(), "nil cluster client")
}

func TestNewClusterEvenReplicas(t *testing.T) {
	cc := redis.NewClusterClient(&redis.ClusterOptions{Addrs: []string{"127.0.0.1:1"}})
	defer cc.Close()
	for _, n := range []int{2, 4, -1, 17} {
		_, err := NewCluster(context.Background(), Config{}, cc, n)
		require.ErrorIs(t, err, ErrInvalidArgument)
		assert.Contains(t, err.Error(), "replicas (")
	}
}

// NewCluster refuses a bucket count out of range, naming it.
func TestNewClusterBuckets(t *testing.T) {
	cc := redis.NewClusterClient(&redis.ClusterOptions{Addrs: []string{"127.0.0.1:1"}})
	defer cc.Close()
	for _, b := range []int{-1, clusterkey.MaxBuckets + 1} {
		_, err := NewCluster(context.Background(), Config{Buckets: b}, cc, 3)
		require.ErrorIs(t, err, ErrInvalidArgument)
		assert.Contains(t, err.Error(), fmt.Sprintf("Buckets (%d) must be from 1 to %d", b, clusterkey.MaxBuckets))
	}
}
