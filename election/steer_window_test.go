package election

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/redlease/redlease/internal/notice"
	"github.com/redlease/redlease/lease"
)

// A handover notice holds a standby aside for its window, never longer
// than the standby's own TTL: a forged one (anyone who may PUBLISH on the
// nodes can send one) or a leader's too long HandoverWindow costs at most
// what a crashed leader's term would. The named successor is not held.
func TestHandoverWindowCappedAtTTL(t *testing.T) {
	e := &Elector{cfg: Config{Lease: lease.Config{ID: "standby", TTL: time.Second}}}
	c := &candidate{e: e}
	before := time.Now()
	c.onHandover(notice.Message{Kind: notice.Handover, ID: "someone", Window: time.Hour})
	assert.WithinDuration(t, before.Add(time.Second), c.notBefore, 100*time.Millisecond, "held aside for one TTL, not the notice's hour")

	c = &candidate{e: e}
	c.onHandover(notice.Message{Kind: notice.Handover, ID: "someone", Window: 200 * time.Millisecond})
	assert.WithinDuration(t, before.Add(200*time.Millisecond), c.notBefore, 100*time.Millisecond, "a window under the TTL as announced")

	c = &candidate{e: e}
	c.onHandover(notice.Message{Kind: notice.Handover, ID: "standby", Window: time.Hour})
	assert.True(t, c.notBefore.IsZero(), "the successor is not held aside")
	assert.True(t, c.isSuccessor())
}
