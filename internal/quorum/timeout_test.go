package quorum

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// A node's timeout names its wait rounded (#32): a call's wait may be a
// fraction of a TTL (114.833333ms).
func TestNodeTimeoutTextRounded(t *testing.T) {
	assert.Equal(t, "no answer within 115ms", TimeoutError{D: 344500 * time.Microsecond / 3}.Error())
	assert.Equal(t, "no answer within NodeTimeout (50ms)", TimeoutError{D: 50 * time.Millisecond, NodeTimeout: true}.Error())
}
